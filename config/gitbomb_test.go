package config_test

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/config"
)

// gibOfZeros is the id of a blob of 1 GiB of zeros, as
// `head -c 1G /dev/zero | git hash-object --stdin` prints it: hashing the
// gigabyte again at every run would cost seconds.
const (
	gibOfZeros     = "4fce05a4e4ed8cefef2d99f32c519b2fd7841b74"
	gibOfZerosSize = 1 << 30
)

// addZeroBomb commits, at path, the blob of 1 GiB of zeros: about 1 MB in
// the pack git serves, as a push would leave it. The blob is written as a
// pack of its own, deflated by repeating the deflate of a mebibyte of zeros,
// so that making it costs milliseconds rather than the git CLI's minute.
func (r *gitRepo) addZeroBomb(path string) string {
	r.t.Helper()
	zeros := make([]byte, 1<<20)
	var z bytes.Buffer
	z.Write([]byte{0x78, 0x9c}) // zlib, deflate with a 32 KiB window
	fw, err := flate.NewWriter(&z, flate.BestCompression)
	if err != nil {
		r.t.Fatal(err)
	}
	fw.Write(zeros)
	fw.Flush()
	first := z.Len()
	// After a mebibyte of zeros, the next one deflates to the same bytes
	// whatever came before, ending on a byte boundary (the flush).
	fw.Write(zeros)
	fw.Flush()
	again := bytes.Clone(z.Bytes()[first:])
	z.Truncate(first)
	for range gibOfZerosSize>>20 - 1 {
		z.Write(again)
	}
	z.Write([]byte{0x03, 0x00})                                              // an empty final block
	binary.Write(&z, binary.BigEndian, uint32((gibOfZerosSize%65521)<<16|1)) // the Adler-32 of zeros

	var entry bytes.Buffer // the object's header, type 3 (blob), then its size
	size := uint64(gibOfZerosSize)
	b := byte(3<<4) | byte(size&0x0f)
	for size >>= 4; size > 0; size >>= 7 {
		entry.WriteByte(b | 0x80)
		b = byte(size & 0x7f)
	}
	entry.WriteByte(b)
	entry.Write(z.Bytes())

	var pack bytes.Buffer
	pack.WriteString("PACK")
	binary.Write(&pack, binary.BigEndian, [2]uint32{2, 1})
	pack.Write(entry.Bytes())
	packSum := sha1.Sum(pack.Bytes())
	pack.Write(packSum[:])

	id, _ := hex.DecodeString(gibOfZeros)
	var idx bytes.Buffer
	idx.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	for i := range 256 {
		n := uint32(0)
		if i >= int(id[0]) {
			n = 1
		}
		binary.Write(&idx, binary.BigEndian, n)
	}
	idx.Write(id)
	binary.Write(&idx, binary.BigEndian, [2]uint32{crc32.ChecksumIEEE(entry.Bytes()), 12})
	idx.Write(packSum[:])
	idxSum := sha1.Sum(idx.Bytes())
	idx.Write(idxSum[:])

	name := filepath.Join(r.dir, ".git", "objects", "pack", "pack-"+hex.EncodeToString(packSum[:]))
	if err := os.WriteFile(name+".pack", pack.Bytes(), 0o444); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(name+".idx", idx.Bytes(), 0o444); err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.made++
	r.git("update-index", "--add", "--cacheinfo", "100644,"+gibOfZeros+","+path)
	r.git("commit", "-q", "-m", "a gigabyte of zeros at "+path)
	return r.git("rev-parse", "HEAD")
}

// refFlood serves, over smart HTTP, a ref listing of HEAD, then refs
// made-up refs of about 70 bytes each, made as they are sent, then main
// (the repo's own, so that a fetch of it works); every other request goes
// to git's own server of the repo.
func refFlood(t *testing.T, r *gitRepo, refs int) *gitServer {
	t.Helper()
	srv := serveGit(t, r)
	main := r.git("rev-parse", "main")
	flood := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasSuffix(req.URL.Path, "/info/refs") {
			req.SetBasicAuth(gitUser, gitToken)
			srv.Config.Handler.ServeHTTP(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		out := bufio.NewWriter(w)
		pkt := func(s string) { fmt.Fprintf(out, "%04x%s", len(s)+4, s) }
		pkt("# service=git-upload-pack\n")
		out.WriteString("0000")
		pkt(main + " HEAD\x00multi_ack_detailed side-band-64k ofs-delta shallow no-progress symref=HEAD:refs/heads/main\n")
		for i := range refs {
			pkt(fmt.Sprintf("%s refs/heads/flood/%09d\n", main, i))
		}
		pkt(main + " refs/heads/main\n")
		out.WriteString("0000")
		out.Flush()
	}))
	t.Cleanup(flood.Close)
	return &gitServer{Server: flood}
}

// readEnv makes the test binary a process that reads a git source once, the
// GitOptions (as JSON) in it, and prints a readResult.
const readEnv = "SUNDIAL_TEST_GIT_READ"

// readResult is what a reading process found, its resident memory
// before the read, and the peak of it.
type readResult struct {
	Files          int
	Error          string
	BaseKB, PeakKB int64
}

// extraMB is what the read cost, in MB: the peak above what the process
// held before it.
func (r readResult) extraMB() int64 { return (r.PeakKB - r.BaseKB) >> 10 }

func TestMain(m *testing.M) {
	if opts := os.Getenv(readEnv); opts != "" {
		readOnce(opts)
		return
	}
	os.Exit(m.Run())
}

func readOnce(opts string) {
	var o config.GitOptions
	if err := json.Unmarshal([]byte(opts), &o); err != nil {
		panic(err)
	}
	o.Auth = goodAuth
	res := readResult{BaseKB: statusKB("self", "VmRSS")}
	src, err := config.NewGitSource(o)
	if err == nil {
		var s config.Snapshot
		s, err = src.Read(context.Background())
		res.Files = len(s.Files)
	}
	if err != nil {
		res.Error = err.Error()
	}
	res.PeakKB = statusKB("self", "VmHWM")
	json.NewEncoder(os.Stdout).Encode(res)
}

// statusKB is a field of a process's /proc status, in kB; 0 if it has
// none.
func statusKB(pid, field string) int64 {
	status, _ := os.ReadFile("/proc/" + pid + "/status")
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// readInProcess reads opts' source once in a process of its own, as a
// server's refresh does, and returns what it found and its peak resident
// memory. A process whose memory passes limitMB is killed there, so that a
// failing test does not take the machine's memory with it.
func readInProcess(t *testing.T, opts config.GitOptions, limitMB int64) readResult {
	t.Helper()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this machine to read a process's peak memory from")
	}
	if raceDetector {
		t.Skip("under the race detector a process's peak is mostly the detector's")
	}
	opts.Auth = nil
	js, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), readEnv+"="+string(js))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var killedAt atomic.Int64
	done := make(chan struct{})
	go func() {
		pid := strconv.Itoa(cmd.Process.Pid)
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if rss := statusKB(pid, "VmRSS"); rss > limitMB<<10 {
				killedAt.Store(rss)
				cmd.Process.Kill()
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	if kb := killedAt.Load(); kb > 0 {
		t.Fatalf("the reading process passed %d MB of resident memory and was killed there", kb>>10)
	}
	var res readResult
	if err != nil || json.Unmarshal(out.Bytes(), &res) != nil {
		t.Fatalf("the reading process: %v\n%s", err, out.Bytes())
	}
	t.Logf("the read took %d MB above the %d MB its process held before", res.extraMB(), res.BaseKB>>10)
	return res
}
