package config

import (
	"context"
	"fmt"

	"github.com/sundial-cron/sundial/engine"
)

// Source is where projects' config files come from: a directory (the
// embedded default, and tests) or a git repo.
type Source interface {
	// Read returns the files of every project the source holds now. An
	// error means the source could not be read, and says nothing of its
	// projects: the refresher changes none of them.
	Read(ctx context.Context) (Snapshot, error)
	// String names the source in logs and errors.
	String() string
}

// Snapshot is what a source holds at one moment.
type Snapshot struct {
	Files []File
	// Commit is the commit the files were read at, its Link empty (each
	// File has its own); nil for a directory.
	Commit *engine.Commit
}

// DirSource reads the config files directly in a directory (ReadDir); a
// revision is a hash of a file's bytes.
type DirSource string

// Read reads the directory.
func (d DirSource) Read(context.Context) (Snapshot, error) {
	files, err := ReadDir(string(d))
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading the config directory: %w", err)
	}
	return Snapshot{Files: files}, nil
}

func (d DirSource) String() string { return "directory " + string(d) }
