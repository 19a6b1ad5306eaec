package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// File is one project's config file as read from a directory.
type File struct {
	Path    string
	Project string
	Data    []byte
	// Err is why the file cannot be used: it could not be read, or another
	// file in the directory names the same project.
	Err error
}

// ReadDir reads the config files (*.yaml, *.yml) directly in dir, by
// project id. Hidden files and subdirectories are left out. It fails only
// when the directory itself cannot be listed; a file that cannot be read is
// a File with Err set, so that one bad file holds up only its own project.
func ReadDir(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byProject := map[string][]File{}
	for _, e := range entries {
		project, ok := ProjectOf(e.Name())
		if !ok || e.Name()[0] == '.' || e.IsDir() {
			continue
		}
		f := File{Path: filepath.Join(dir, e.Name()), Project: project}
		f.Data, f.Err = os.ReadFile(f.Path)
		byProject[project] = append(byProject[project], f)
	}
	var files []File
	for _, fs := range byProject {
		if len(fs) > 1 {
			for i := range fs {
				fs[i].Err = &Error{File: fs[i].Path, Msg: fmt.Sprintf("project %s has %d config files here (%s and %s): keep one", fs[i].Project, len(fs), filepath.Base(fs[0].Path), filepath.Base(fs[1].Path))}
			}
		}
		files = append(files, fs...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}
