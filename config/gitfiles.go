package config

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/sundial-cron/sundial/engine"
)

// read reads the projects' files in a fetched commit. A file that is
// not a regular one, or larger than MaxFileSize, is a File with Err set.
func (g *GitSource) read(commit *object.Commit, objs storer.EncodedObjectStorer) (Snapshot, error) {
	s := Snapshot{Commit: &engine.Commit{
		SHA:     commit.Hash.String(),
		Author:  fmt.Sprintf("%s <%s>", commit.Author.Name, commit.Author.Email),
		Time:    commit.Committer.When.UTC(),
		Subject: strings.TrimSpace(strings.SplitN(commit.Message, "\n", 2)[0]),
	}}
	tree, err := commit.Tree()
	if err != nil {
		return Snapshot{}, err
	}
	if g.opts.File != "" {
		e, err := tree.FindEntry(g.opts.File)
		if err != nil {
			return Snapshot{}, fmt.Errorf("%s at commit %s: %w", g.opts.File, s.Commit.SHA[:12], err)
		}
		dir, err := tree.Tree(path.Dir(g.opts.File))
		if path.Dir(g.opts.File) == "." {
			dir, err = tree, nil
		}
		if err != nil {
			return Snapshot{}, err
		}
		f := File{Path: g.opts.File, Link: g.link(s.Commit.SHA, g.opts.File), ICS: icsBlobs(objs, path.Dir(g.opts.File), dir)}
		f.Data, f.Err = blob(objs, path.Dir(g.opts.File), dir, *e)
		if f.Err != nil {
			return Snapshot{}, f.Err
		}
		s.Files = []File{f}
		return s, nil
	}
	if g.opts.Path != "" {
		tree, err = tree.Tree(g.opts.Path)
		if errors.Is(err, object.ErrDirectoryNotFound) {
			return s, nil // no projects: the refresher's safety valve decides
		}
		if err != nil {
			return Snapshot{}, err
		}
	}
	only := map[string]bool{}
	for _, p := range g.opts.Projects {
		only[p] = true
	}
	byProject := map[string][]File{}
	ics := icsBlobs(objs, g.opts.Path, tree)
	for _, e := range tree.Entries {
		project, ok := ProjectOf(e.Name)
		if !ok || e.Name[0] == '.' || e.Mode == filemode.Dir || (len(only) > 0 && !only[project]) {
			continue
		}
		f := File{Path: path.Join(g.opts.Path, e.Name), Project: project, Link: g.link(s.Commit.SHA, path.Join(g.opts.Path, e.Name)), ICS: ics}
		f.Data, f.Err = blob(objs, g.opts.Path, tree, e)
		byProject[project] = append(byProject[project], f)
	}
	for _, fs := range byProject {
		if len(fs) > 1 {
			for i := range fs {
				fs[i].Err = &Error{File: fs[i].Path, Msg: fmt.Sprintf("project %s has %d config files here (%s and %s): keep one", fs[i].Project, len(fs), path.Base(fs[0].Path), path.Base(fs[1].Path))}
			}
		}
		s.Files = append(s.Files, fs...)
	}
	sort.Slice(s.Files, func(i, j int) bool { return s.Files[i].Path < s.Files[j].Path })
	return s, nil
}

// blob reads one file of the tree at dir, as ReadFile reads one of a
// directory; its size is checked before it is inflated.
func blob(objs storer.EncodedObjectStorer, dir string, tree *object.Tree, e object.TreeEntry) ([]byte, error) {
	name := path.Join(dir, e.Name)
	if e.Mode != filemode.Regular && e.Mode != filemode.Executable {
		return nil, fmt.Errorf("%s: not a regular file (mode %v); Sundial reads only regular files", name, e.Mode)
	}
	size, err := objs.EncodedObjectSize(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if size > MaxFileSize {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a config file may have", name, size, MaxFileSize)
	}
	f, err := tree.TreeEntryFile(&e)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, MaxFileSize))
}

// icsBlobs reads the .ics files of the tree at dir, as ReadDir reads a
// directory's: nil when it has none.
func icsBlobs(objs storer.EncodedObjectStorer, dir string, tree *object.Tree) map[string]ICSFile {
	var out map[string]ICSFile
	for _, e := range tree.Entries {
		if !strings.HasSuffix(e.Name, ".ics") || e.Name[0] == '.' || e.Mode == filemode.Dir {
			continue
		}
		if out == nil {
			out = map[string]ICSFile{}
		}
		data, err := blob(objs, dir, tree, e)
		out[e.Name] = ICSFile{Data: data, Err: err}
	}
	return out
}

// link is the link to a file at a commit, or "".
func (g *GitSource) link(sha, file string) string {
	if g.opts.Link == "" {
		return ""
	}
	return strings.NewReplacer("{commit}", sha, "{path}", file).Replace(g.opts.Link)
}
