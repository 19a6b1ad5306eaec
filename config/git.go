package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// DefaultMaxRepoBytes bounds what one read of a config repo may take (see
// GitOptions.MaxBytes): a repo of configs is small, and a fetch of a huge
// one (a 2 GB mistake committed beside them) must not take the server's
// memory.
const DefaultMaxRepoBytes = 64 << 20

// ErrRepoTooLarge is the error of a Read that took, or would have
// inflated to, more than GitOptions.MaxBytes.
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
	// MaxBytes bounds what one Read may take: over HTTP, every byte the
	// remote sends (the ref listing, its answer and the pack together);
	// over any transport, the pack, and again the sizes its objects'
	// headers say they inflate to, with objectCost each, checked before
	// they are inflated. 0 means DefaultMaxRepoBytes.
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
// remote for the ref's commit (ls-remote) and, in the same session,
// fetches only a commit it has not read yet, shallow and alone, so
// polling an unchanged repo costs one small request.
type GitSource struct {
	opts      GitOptions
	ref       plumbing.ReferenceName
	transport transport.Transport
	// budget is what the Read under way may still take from an HTTP
	// remote; nil over ssh and file, whose reading go-git keeps to itself.
	budget *wireBudget
	// drain: a pack refused part-way is read to its end and dropped.
	// go-git's file transport waits for git-upload-pack to exit when the
	// session closes, and it would wait for ever on a pack no one reads.
	drain bool

	mu   sync.Mutex // one Read at a time; guards last and refused
	last *Snapshot  // the snapshot of the commit read last
	// refused is the commit whose fetch passed MaxBytes, and that error:
	// the commit is not fetched again while the ref names it.
	refused struct {
		sha string
		err error
	}
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
	g := &GitSource{opts: opts, ref: ref}
	ep, err := transport.NewEndpoint(opts.URL)
	if err != nil {
		return nil, err
	}
	switch ep.Protocol {
	case "http", "https":
		g.budget = &wireBudget{}
		g.transport = githttp.NewClient(&http.Client{Transport: &boundedTransport{base: http.DefaultTransport, budget: g.budget, keep: g.reads}})
	default:
		g.drain = ep.Protocol == "file"
		if g.transport, err = client.NewClient(ep); err != nil {
			return nil, err
		}
	}
	return g, nil
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
// the last Read's is not fetched again, nor is one whose fetch passed
// MaxBytes. A remote that cannot be reached, refuses the credentials,
// lacks the ref, hangs past the timeout or sends more than MaxBytes is an
// error.
func (g *GitSource) Read(ctx context.Context) (Snapshot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, g.opts.Timeout)
	defer cancel()
	if g.budget != nil {
		g.budget.reset(g.opts.MaxBytes)
	}
	// The endpoint is made anew each time: go-git moves it when the
	// remote redirects.
	ep, err := transport.NewEndpoint(g.opts.URL)
	if err != nil {
		return Snapshot{}, err
	}
	sess, err := g.transport.NewUploadPackSession(ep, g.opts.Auth)
	if err != nil {
		return Snapshot{}, g.errorf(ctx, "asking for the ref's commit: %w", err)
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return Snapshot{}, g.errorf(ctx, "asking for the ref's commit: %w", g.bounded(err, "the ref listing"))
	}
	want, sha, err := g.commitOf(ar)
	if err != nil {
		return Snapshot{}, g.errorf(ctx, "asking for the ref's commit: %w", err)
	}
	if g.last != nil && g.last.Commit.SHA == sha.String() {
		return *g.last, nil
	}
	if g.refused.sha == sha.String() {
		return Snapshot{}, g.refused.err
	}
	s, err := g.fetch(ctx, sess, ar.Capabilities, want)
	if err != nil {
		err = g.errorf(ctx, "fetching commit "+sha.String()[:12]+": %w", g.bounded(err, "the remote's answer"))
		if errors.Is(err, ErrRepoTooLarge) {
			g.refused.sha, g.refused.err = sha.String(), err
		}
		return Snapshot{}, err
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

// bounded is err, or ErrRepoTooLarge when what the remote sent over HTTP
// passed the bound, however go-git reported that.
func (g *GitSource) bounded(err error, what string) error {
	if g.budget == nil || !g.budget.over.Load() {
		return err
	}
	return fmt.Errorf("%w (%d bytes): %s is larger", ErrRepoTooLarge, g.opts.MaxBytes, what)
}

// commitOf is the object the ref names in the remote's listing, to fetch,
// and the commit it is or tags.
func (g *GitSource) commitOf(ar *packp.AdvRefs) (want, commit plumbing.Hash, err error) {
	want, ok := ar.References[g.ref.String()]
	if !ok {
		return plumbing.ZeroHash, plumbing.ZeroHash, fmt.Errorf("the remote has no %s (deleted?)", g.ref)
	}
	if peeled, ok := ar.Peeled[g.ref.String()]; ok { // an annotated tag's commit
		return want, peeled, nil
	}
	return want, want, nil
}

// reads reports whether a ref of the remote's listing, by name, is the
// one the source reads, or its commit when it is an annotated tag.
func (g *GitSource) reads(name string) bool {
	return name == g.ref.String() || name == g.ref.String()+"^{}"
}

// fetch fetches the object want alone, shallow, into memory, and reads
// the files of its commit.
func (g *GitSource) fetch(ctx context.Context, sess transport.UploadPackSession, caps *capability.List, want plumbing.Hash) (Snapshot, error) {
	req := packp.NewUploadPackRequestFromCapabilities(caps)
	req.Wants = []plumbing.Hash{want}
	req.Depth = packp.DepthCommits(1)
	if err := req.Capabilities.Set(capability.Shallow); err != nil {
		return Snapshot{}, err
	}
	if caps.Supports(capability.NoProgress) {
		if err := req.Capabilities.Set(capability.NoProgress); err != nil {
			return Snapshot{}, err
		}
	}
	res, err := sess.UploadPack(ctx, req)
	if err != nil {
		return Snapshot{}, err
	}
	defer res.Close()
	pack := io.Reader(res)
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		pack = sideband.NewDemuxer(sideband.Sideband64k, res)
	case req.Capabilities.Supports(capability.Sideband):
		pack = sideband.NewDemuxer(sideband.Sideband, res)
	}
	st, err := unpack(pack, g.opts.MaxBytes)
	if err != nil {
		if g.drain && errors.Is(err, ErrRepoTooLarge) {
			io.Copy(io.Discard, pack)
		}
		return Snapshot{}, err
	}
	commit, err := object.GetCommit(st, want)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		if tag, terr := object.GetTag(st, want); terr == nil {
			commit, err = tag.Commit()
		}
	}
	if err != nil {
		return Snapshot{}, err
	}
	return g.read(commit, st)
}
