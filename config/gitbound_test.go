package config_test

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/config"
)

// What a refused hostile remote may cost a Read, in MB above what the
// process held before it: the bound is refused before the pack or the ref
// listing is held, so it costs a few buffers, whatever the bound.
const refusedMB = 16

// What a Read may hold at the worst, in MB above what the process held
// before it, for a bound of maxBytes: the pack, and while it is indexed its
// largest object again.
func worstMB(maxBytes int64) int64 { return 2*maxBytes>>20 + 16 }

// killMB is where a reading process is killed: far past any figure above,
// far below what the hostile remotes would take unbounded.
const killMB = 1024

// TestGitReadRefusesABlobInflatingToAGibibyteBeforeInflatingIt: a push of
// about 1 MB holding, beside the configs, a blob that inflates to 1 GiB is
// refused from the blob's header, over smart HTTP, at the default bound;
// the read costs a few MB.
func TestGitReadRefusesABlobInflatingToAGibibyteBeforeInflatingIt(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.commit("billing", map[string]string{"projects/billing.yaml": noopJob("@hourly")})
	r.addZeroBomb("assets/zeros.bin")
	res := readInProcess(t, config.GitOptions{URL: serveGit(t, r).url(), Path: "projects"}, killMB)
	if !strings.Contains(res.Error, "larger than the bound a config repo may have (67108864 bytes): a blob of 1073741824 bytes") {
		t.Errorf("read: %+v; want the blob refused, naming its size and the bound", res)
	}
	if res.extraMB() > refusedMB {
		t.Errorf("the read took %d MB; want at most %d", res.extraMB(), refusedMB)
	}
}

// TestGitReadOfARepoWithAHugeBlobInAnOldCommitNeverFetchesIt: the same
// blob in a commit before the ref's is not fetched at all (the fetch is
// of the ref's commit alone), and the configs are read.
func TestGitReadOfARepoWithAHugeBlobInAnOldCommitNeverFetchesIt(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.addZeroBomb("assets/zeros.bin")
	r.commit("billing, and the zeros gone", map[string]string{"projects/billing.yaml": noopJob("@hourly")})
	res := readInProcess(t, config.GitOptions{URL: serveGit(t, r).url(), Path: "projects"}, killMB)
	if res.Error != "" || res.Files != 1 {
		t.Errorf("read: %+v; want billing's file", res)
	}
	if res.extraMB() > refusedMB {
		t.Errorf("the read took %d MB; want at most %d", res.extraMB(), refusedMB)
	}
}

// TestGitReadRefusesARefListingPastTheBound: a remote advertising 4
// million refs (about 280 MB) is refused once the listing passes the
// bound, holding none of it.
func TestGitReadRefusesARefListingPastTheBound(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.commit("billing", map[string]string{"projects/billing.yaml": noopJob("@hourly")})
	res := readInProcess(t, config.GitOptions{URL: refFlood(t, r, 4_000_000).url(), Path: "projects"}, killMB)
	if !strings.Contains(res.Error, "asking for the ref's commit: the fetch is larger than the bound a config repo may have (67108864 bytes): the ref listing is larger") {
		t.Errorf("read: %+v; want the ref listing refused at the bound", res)
	}
	if res.extraMB() > refusedMB {
		t.Errorf("the read took %d MB; want at most %d", res.extraMB(), refusedMB)
	}
}

// TestGitReadOfALongRefListingHoldsOnlyItsRef: a listing of 300,000 refs
// (about 21 MB, within the bound) is read through for the one ref the
// source reads, named last, and costs a few MB.
func TestGitReadOfALongRefListingHoldsOnlyItsRef(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.commit("billing", map[string]string{"projects/billing.yaml": noopJob("@hourly")})
	res := readInProcess(t, config.GitOptions{URL: refFlood(t, r, 300_000).url(), Path: "projects"}, killMB)
	if res.Error != "" || res.Files != 1 {
		t.Errorf("read: %+v; want billing's file", res)
	}
	if res.extraMB() > refusedMB {
		t.Errorf("the read took %d MB; want at most %d", res.extraMB(), refusedMB)
	}
}

// TestGitReadHoldsAtMostTwiceTheBound: a repo just within the bound (a
// 15 MiB file that does not compress, under a bound of 16 MiB) is read,
// and the read's peak is at most twice the bound and a few MB.
func TestGitReadHoldsAtMostTwiceTheBound(t *testing.T) {
	t.Parallel()
	noise := make([]byte, 15<<20)
	rand.Read(noise)
	r := newGitRepo(t)
	r.commit("billing, and noise", map[string]string{"projects/billing.yaml": noopJob("@hourly"), "noise.bin": string(noise)})
	const bound = 16 << 20
	res := readInProcess(t, config.GitOptions{URL: serveGit(t, r).url(), Path: "projects", MaxBytes: bound}, killMB)
	if res.Error != "" || res.Files != 1 {
		t.Errorf("read: %+v; want billing's file", res)
	}
	if res.extraMB() > worstMB(bound) {
		t.Errorf("the read took %d MB; want at most %d", res.extraMB(), worstMB(bound))
	}
}

// TestGitSourceDoesNotFetchARefusedCommitAgain: a commit whose fetch
// passed the bound is not fetched again while the ref names it (each
// refresh asks only for the ref's commit); the next commit is.
func TestGitSourceDoesNotFetchARefusedCommitAgain(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.commit("zeros", map[string]string{"billing.yaml": noopJob("@hourly"), "zeros.bin": strings.Repeat("\x00", 8<<20)})
	srv := serveGit(t, r)
	src := gitSource(t, config.GitOptions{URL: srv.url(), Auth: goodAuth, MaxBytes: 1 << 20})
	for range 3 {
		if _, err := src.Read(t.Context()); err == nil || !strings.Contains(err.Error(), "a blob of 8388608 bytes") {
			t.Fatalf("read: %v; want the blob refused", err)
		}
	}
	if n := srv.fetched(); n != 1 {
		t.Errorf("three reads of one refused commit fetched %d times; want 1", n)
	}
	r.commit("no zeros", map[string]string{"zeros.bin": ""})
	if s, err := src.Read(t.Context()); err != nil || len(s.Files) != 1 || srv.fetched() != 2 {
		t.Errorf("after a push: %+v, %v, %d fetches; want billing's file, fetched once more", s, err, srv.fetched())
	}
}

// TestGitReadRefusesAConfigFileLargerThanAConfigMayBe: a project's file
// past MaxFileSize is that project's error; the other projects are read.
func TestGitReadRefusesAConfigFileLargerThanAConfigMayBe(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.commit("a huge billing", map[string]string{"billing.yaml": "#" + strings.Repeat(" ", config.MaxFileSize), "search.yaml": noopJob("@daily")})
	s, err := gitSource(t, config.GitOptions{URL: r.fileURL()}).Read(t.Context())
	if err != nil || len(s.Files) != 2 {
		t.Fatalf("read: %+v, %v; want both files", s, err)
	}
	if want := "billing.yaml: 16777217 bytes, more than the 16777216 a config file may have"; s.Files[0].Err == nil || s.Files[0].Err.Error() != want || s.Files[0].Data != nil {
		t.Errorf("billing: %v; want %q", s.Files[0].Err, want)
	}
	if s.Files[1].Err != nil || string(s.Files[1].Data) != noopJob("@daily") {
		t.Errorf("search: %+v; want its file", s.Files[1])
	}
}
