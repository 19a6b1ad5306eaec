// Package version says which build of Sundial runs: its version, the
// commit it was built from and that commit's time, and the Go that built
// it, from the build information the Go toolchain records in the binary.
// `sundial version` prints it, the API serves it at GET /api/v1/version,
// and /metrics as sundial_build_info.
//
// A build in a git checkout records the commit (vcs.revision, vcs.time,
// vcs.modified) unless it is told -buildvcs=false, and Go stamps the main
// module's version from a tag that names the commit (v0.1.0), or else a
// pseudo-version (v0.1.1-0.20260301120000-1cf3b5f0a2b4, +dirty when
// modified). Go records the commit's time, not the build's, so that two
// builds of one commit are the same file; Sundial says no more.
//
// Go records none of it in a git worktree (whose .git is a file), from a
// source archive, or with -buildvcs=false; such a build is given what it
// lacks by the linker, each value taking the place of the recorded one (a
// revision given says the checkout is unmodified unless modified=true is
// given too), as deploy/container/build does:
//
//	go build -ldflags "-X github.com/sundial-cron/sundial/internal/version.version=v0.1.0
//	  -X github.com/sundial-cron/sundial/internal/version.revision=<40 hex digits>
//	  -X github.com/sundial-cron/sundial/internal/version.commitTime=2026-03-01T12:00:00Z
//	  -X github.com/sundial-cron/sundial/internal/version.modified=true" ./cmd/sundial
package version

import (
	"runtime"
	"runtime/debug"
	"time"
)

// Set by the linker (-X) for a build without VCS information; see the
// package comment.
var version, revision, commitTime, modified string

// devel is the version of a build Go could not stamp: its own word for it.
const devel = "(devel)"

// Info is one build of Sundial, as the API serves it.
type Info struct {
	// Version is the release (v0.1.0), a pseudo-version naming the commit,
	// or "(devel)" when the build recorded neither.
	Version string `json:"version"`
	// Revision is the commit the build was made from; "" when unknown.
	Revision string `json:"revision,omitempty"`
	// CommitTime is that commit's time; zero when unknown.
	CommitTime time.Time `json:"commit_time,omitzero"`
	// Modified says the checkout had changes not in that commit.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the Go toolchain that built the binary (go1.26.8).
	GoVersion string `json:"go_version"`
	// Platform is the operating system and architecture (linux/amd64).
	Platform string `json:"platform"`
}

// Get returns the running binary's build.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return linked(fromBuildInfo(bi), version, revision, commitTime, modified)
}

// fromBuildInfo reads what the toolchain recorded; bi is nil in a binary
// built without module support.
func fromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: devel, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return info
	}
	if bi.Main.Version != "" {
		info.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.CommitTime, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// linked lays what the linker set over info. A commit time that does not
// parse is left out rather than shown as something it is not.
func linked(info Info, version, revision, commitTime, modified string) Info {
	if version != "" {
		info.Version = version
	}
	if revision != "" {
		info.Revision = revision
		info.Modified = modified == "true"
	}
	if commitTime != "" {
		info.CommitTime, _ = time.Parse(time.RFC3339, commitTime)
	}
	return info
}
