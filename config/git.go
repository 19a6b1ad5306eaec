package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/sundial-cron/sundial/engine"
)

// DefaultMaxRepoBytes bounds what one fetch of a config repo may bring: a
// repo of configs is small, and a fetch of a huge one (a 2 GB mistake
// committed beside them) must not take the server's memory.
const DefaultMaxRepoBytes = 64 << 20

// ErrRepoTooLarge is the error of a fetch that brought more than
// GitOptions.MaxBytes.
var ErrRepoTooLarge = errors.New("the fetch is larger than the bound a config repo may have")

// GitOptions say which repo, ref and path a GitSource reads.
type GitOptions struct {
	URL  string // https://, ssh://, user@host:path or file://
	Ref  string // a branch ("main", "refs/heads/main") or a tag ("refs/tags/v1")
	Path string // the directory, in the repo, of the <project>.yaml files; "" is the root
	// Projects, if not empty, are the only projects read from the repo
	// (a --projects-file entry); any other file is left out.
	Projects []string
	// File, if set, is the one file Read returns, whatever its name, with
	// no project (a --projects-file kept in a repo); a commit without it
	// is an error. Path and Projects are then unused.
	File string
	Auth transport.AuthMethod // nil for none
	// MaxBytes bounds a fetch's packed bytes, and again the objects they
	// inflate to; 0 means DefaultMaxRepoBytes.
	MaxBytes int64
	// Timeout bounds one Read, ls-remote and fetch together, so that a
	// server that hangs holds no refresh for ever; 0 means a minute.
	Timeout time.Duration
	// Link makes a link to a file at a commit from a template naming
	// {commit} and {path}, e.g. https://github.com/org/repo/blob/{commit}/{path};
	// "" makes none.
	Link string
}

// GitSource reads project configs from a git repo, in memory: every
// <Path>/<project>.yaml at the ref's commit. Each Read first asks the
// remote for the ref's commit (ls-remote) and fetches only a commit it has
// not read yet, shallow and of that one branch, so polling an unchanged
// repo costs one small request.
type GitSource struct {
	opts GitOptions
	ref  plumbing.ReferenceName

	mu   sync.Mutex // one Read at a time; guards last
	last *Snapshot  // the snapshot of the commit read last
}

// NewGitSource checks opts and returns their source; it reaches no
// remote.
func NewGitSource(opts GitOptions) (*GitSource, error) {
	if err := checkRepoURL(opts.URL); err != nil {
		return nil, err
	}
	if opts.Ref == "" {
		opts.Ref = "main"
	}
	ref := plumbing.ReferenceName(opts.Ref)
	if !strings.HasPrefix(opts.Ref, "refs/") {
		ref = plumbing.NewBranchReferenceName(opts.Ref)
	}
	if err := ref.Validate(); err != nil || !(ref.IsBranch() || ref.IsTag()) {
		return nil, fmt.Errorf("config ref %q: want a branch name, refs/heads/... or refs/tags/...", opts.Ref)
	}
	clean := path.Clean("/" + opts.Path)[1:]
	if strings.Contains(opts.Path, "..") || strings.HasPrefix(opts.Path, "/") {
		return nil, fmt.Errorf("config path %q: want a directory inside the repo, such as projects/", opts.Path)
	}
	opts.Path = clean
	if opts.File != "" {
		if f := path.Clean("/" + opts.File)[1:]; strings.Contains(opts.File, "..") || strings.HasPrefix(opts.File, "/") || f == "" {
			return nil, fmt.Errorf("file %q: want a file inside the repo, such as sundial/projects.yaml", opts.File)
		}
	}
	for _, p := range opts.Projects {
		if !ValidProjectID(p) {
			return nil, fmt.Errorf("project %q: not a project id", p)
		}
	}
	if opts.Link != "" && !strings.Contains(opts.Link, "{commit}") {
		return nil, fmt.Errorf("config link %q: want a template naming {commit} (and {path})", opts.Link)
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxRepoBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = time.Minute
	}
	return &GitSource{opts: opts, ref: ref}, nil
}

// checkRepoURL refuses a URL go-git would read as something else, or
// that carries a password for logs to print.
func checkRepoURL(raw string) error {
	if raw == "" {
		return errors.New("config repo: no URL")
	}
	ep, err := transport.NewEndpoint(raw)
	if err != nil {
		return fmt.Errorf("config repo %q: %v", raw, err)
	}
	switch ep.Protocol {
	case "https", "http", "ssh", "file":
	default:
		return fmt.Errorf("config repo %q: protocol %s; want https, ssh or file", raw, ep.Protocol)
	}
	if ep.Password != "" {
		return fmt.Errorf("config repo %s: a password in the URL; use a token file", ep.Host)
	}
	return nil
}

func (g *GitSource) String() string {
	u := g.opts.URL
	if p, err := url.Parse(u); err == nil && p.User != nil {
		p.User = nil
		u = p.String()
	}
	return fmt.Sprintf("repo %s %s:%s", u, g.ref.Short(), g.opts.Path)
}

// Read returns the projects' files at the ref's commit. The same commit as
// the last Read's is not fetched again. A remote that cannot be reached,
// refuses the credentials, lacks the ref, hangs past the timeout or sends
// more than MaxBytes is an error.
func (g *GitSource) Read(ctx context.Context) (Snapshot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, g.opts.Timeout)
	defer cancel()
	sha, err := g.lsRemote(ctx)
	if err != nil {
		return Snapshot{}, g.errorf(ctx, "asking for the ref's commit: %w", err)
	}
	if g.last != nil && g.last.Commit.SHA == sha.String() {
		return *g.last, nil
	}
	s, err := g.fetch(ctx)
	if err != nil {
		return Snapshot{}, g.errorf(ctx, "fetching commit "+sha.String()[:12]+": %w", err)
	}
	g.last = &s
	return s, nil
}

// errorf names the source, and the timeout when that is what ended it.
func (g *GitSource) errorf(ctx context.Context, format string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %v: %w", g.opts.Timeout, err)
	}
	return fmt.Errorf("%s: "+format, g, err)
}

// lsRemote asks the remote which commit the ref names.
func (g *GitSource) lsRemote(ctx context.Context) (plumbing.Hash, error) {
	remote := git.NewRemote(memory.NewStorage(), &gitconfig.RemoteConfig{Name: "origin", URLs: []string{g.opts.URL}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: g.opts.Auth, PeelingOption: git.AppendPeeled})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var found, peeled plumbing.Hash
	for _, r := range refs {
		switch r.Name() {
		case g.ref:
			found = r.Hash()
		case g.ref + "^{}": // an annotated tag's commit
			peeled = r.Hash()
		}
	}
	if !peeled.IsZero() {
		found = peeled
	}
	if found.IsZero() {
		return plumbing.ZeroHash, fmt.Errorf("the remote has no %s (deleted?)", g.ref)
	}
	return found, nil
}

// fetch fetches the ref's commit alone into memory and reads the files.
func (g *GitSource) fetch(ctx context.Context) (Snapshot, error) {
	st := &boundedStorage{Storage: memory.NewStorage(), limit: g.opts.MaxBytes, drain: strings.HasPrefix(g.opts.URL, "file:")}
	repo, err := git.Init(st, nil)
	if err != nil {
		return Snapshot{}, err
	}
	if _, err := repo.CreateRemote(&gitconfig.RemoteConfig{Name: "origin", URLs: []string{g.opts.URL}}); err != nil {
		return Snapshot{}, err
	}
	local := plumbing.ReferenceName("refs/fetched/config")
	err = repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   []gitconfig.RefSpec{gitconfig.RefSpec("+" + g.ref.String() + ":" + local.String())},
		Depth:      1,
		Tags:       git.NoTags,
		Auth:       g.opts.Auth,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return Snapshot{}, err
	}
	// The commit fetched is the ref's now, which a push since ls-remote
	// may have moved: that newer commit is as good.
	ref, err := repo.Reference(local, true)
	if err != nil {
		return Snapshot{}, err
	}
	commit, err := repo.CommitObject(ref.Hash())
	if err != nil {
		if tag, terr := repo.TagObject(ref.Hash()); terr == nil {
			commit, err = tag.Commit()
		}
		if err != nil {
			return Snapshot{}, err
		}
	}
	return g.read(commit)
}

// read reads the projects' files in a fetched commit. A file that is
// not a regular one, or larger than MaxFileSize, is a File with Err set.
func (g *GitSource) read(commit *object.Commit) (Snapshot, error) {
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
		f := File{Path: g.opts.File, Link: g.link(s.Commit.SHA, g.opts.File)}
		f.Data, f.Err = blob(path.Dir(g.opts.File), dir, *e)
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
	for _, e := range tree.Entries {
		project, ok := ProjectOf(e.Name)
		if !ok || e.Name[0] == '.' || e.Mode == filemode.Dir || (len(only) > 0 && !only[project]) {
			continue
		}
		f := File{Path: path.Join(g.opts.Path, e.Name), Project: project, Link: g.link(s.Commit.SHA, path.Join(g.opts.Path, e.Name))}
		f.Data, f.Err = blob(g.opts.Path, tree, e)
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
// directory.
func blob(dir string, tree *object.Tree, e object.TreeEntry) ([]byte, error) {
	name := path.Join(dir, e.Name)
	if e.Mode != filemode.Regular && e.Mode != filemode.Executable {
		return nil, fmt.Errorf("%s: not a regular file (mode %v); Sundial reads only regular files", name, e.Mode)
	}
	f, err := tree.TreeEntryFile(&e)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.Size > MaxFileSize {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a config file may have", name, f.Size, MaxFileSize)
	}
	r, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, MaxFileSize))
}

// link is the link to a file at a commit, or "".
func (g *GitSource) link(sha, file string) string {
	if g.opts.Link == "" {
		return ""
	}
	return strings.NewReplacer("{commit}", sha, "{path}", file).Replace(g.opts.Link)
}

// boundedStorage holds a fetch in memory, up to limit bytes: the pack is
// taken as a stream (PackfileWriter), refused once past the bound, then
// inflated into objects that are refused once past it again, so neither a
// huge pack nor a small one that inflates hugely fills the memory.
type boundedStorage struct {
	*memory.Storage
	limit    int64
	inflated int64
	// drain: past the bound, the rest of the pack is read and dropped
	// rather than refused at once. go-git's file transport waits for
	// git-upload-pack to exit when the fetch ends, and it would wait for
	// ever on a pack no one reads.
	drain bool
}

// PackfileWriter takes the fetched pack.
func (s *boundedStorage) PackfileWriter() (io.WriteCloser, error) {
	return &boundedPack{s: s}, nil
}

// SetEncodedObject stores an object inflated from the pack.
func (s *boundedStorage) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	s.inflated += o.Size()
	if s.inflated > s.limit {
		return plumbing.ZeroHash, fmt.Errorf("%w (%d bytes)", ErrRepoTooLarge, s.limit)
	}
	return s.Storage.SetEncodedObject(o)
}

type boundedPack struct {
	s       *boundedStorage
	buf     bytes.Buffer
	tooMany bool
}

func (p *boundedPack) Write(b []byte) (int, error) {
	if p.tooMany || int64(p.buf.Len()+len(b)) > p.s.limit {
		p.tooMany = true
		p.buf = bytes.Buffer{}
		if p.s.drain {
			return len(b), nil
		}
		return 0, fmt.Errorf("%w (%d bytes)", ErrRepoTooLarge, p.s.limit)
	}
	return p.buf.Write(b)
}

// Close inflates the pack into objects, through SetEncodedObject's bound.
func (p *boundedPack) Close() error {
	if p.tooMany {
		return fmt.Errorf("%w (%d bytes)", ErrRepoTooLarge, p.s.limit)
	}
	if p.buf.Len() == 0 {
		return nil
	}
	parser, err := packfile.NewParserWithStorage(packfile.NewScanner(bytes.NewReader(p.buf.Bytes())), objectsOnly{p.s.Storage, p.s})
	if err != nil {
		return err
	}
	_, err = parser.Parse()
	return err
}

// objectsOnly hides boundedStorage's PackfileWriter from the parser, and
// stores what it inflates through boundedStorage's bound.
type objectsOnly struct {
	storer.EncodedObjectStorer
	s *boundedStorage
}

func (o objectsOnly) SetEncodedObject(e plumbing.EncodedObject) (plumbing.Hash, error) {
	return o.s.SetEncodedObject(e)
}
