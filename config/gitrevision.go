package config

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// ReadRevision reads the config files of a local git repo (dir, or the
// repo holding it) at a revision, as a GitSource reads a commit: every
// <configPath>/<project>.yaml with the .ics files beside them. rev is
// anything git rev-parse takes for a commit (main, HEAD~1, origin/main, a
// sha). It is for tools (sundial diff) that compare two revisions of a
// checked-out config repo, where the server reads a remote.
func ReadRevision(dir, rev, configPath string) (Snapshot, error) {
	if strings.Contains(configPath, "..") || strings.HasPrefix(configPath, "/") {
		return Snapshot{}, fmt.Errorf("config path %q: want a directory inside the repo, such as projects/", configPath)
	}
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return Snapshot{}, fmt.Errorf("%s: %w", dir, err)
	}
	hash, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return Snapshot{}, fmt.Errorf("revision %q of %s: %w", rev, dir, err)
	}
	commit, err := repo.CommitObject(*hash)
	if err != nil {
		return Snapshot{}, fmt.Errorf("revision %q of %s: %w", rev, dir, err)
	}
	g := &GitSource{opts: GitOptions{Path: path.Clean("/" + configPath)[1:]}}
	return g.read(commit, repo.Storer)
}
