package config

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
)

// wireBudget is what one Read may still take from the remote over HTTP:
// the ref listing, the server's answer and the pack together. Once it is
// spent, every body fails and over says so, whatever error go-git makes
// of the failure.
type wireBudget struct {
	left atomic.Int64
	over atomic.Bool
}

// reset gives the budget limit bytes for a new Read.
func (b *wireBudget) reset(limit int64) {
	b.left.Store(limit)
	b.over.Store(false)
}

// take spends n bytes and reports whether they were within the budget.
func (b *wireBudget) take(n int64) bool {
	if b.left.Add(-n) < 0 {
		b.over.Store(true)
		return false
	}
	return true
}

// boundedTransport is the HTTP transport of a GitSource: it counts every
// response body's bytes against the Read's budget and keeps, of a ref
// listing, only the lines the source reads. Without it go-git reads the
// whole listing into memory before the source can look at one ref, and a
// remote advertising millions of refs would cost gigabytes.
type boundedTransport struct {
	base   http.RoundTripper
	budget *wireBudget
	// keep reports whether a ref, by name, is one the source reads.
	keep func(name string) bool
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	// A length said up front is refused before a byte of the body is read.
	if res.ContentLength > 0 && !t.budget.take(res.ContentLength) {
		res.Body.Close()
		return nil, ErrRepoTooLarge
	}
	body := io.ReadCloser(&budgetedBody{ReadCloser: res.Body, budget: t.budget, prepaid: max(res.ContentLength, 0)})
	if strings.HasSuffix(req.URL.Path, "/info/refs") && res.StatusCode == http.StatusOK {
		body = &refFilter{body: body, in: pktline.NewScanner(body), keep: t.keep}
	}
	res.Body = body
	return res, nil
}

// budgetedBody is a response body that fails once the budget is spent.
type budgetedBody struct {
	io.ReadCloser
	budget *wireBudget
	// prepaid is the declared length already taken from the budget: bytes
	// past it are taken as they come.
	prepaid int64
}

func (b *budgetedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	paid := min(int64(n), b.prepaid)
	b.prepaid -= paid
	if !b.budget.take(int64(n) - paid) {
		return 0, ErrRepoTooLarge
	}
	return n, err
}

// refFilter passes a smart-HTTP ref listing through pkt-line by pkt-line,
// leaving out every ref line but the first (which carries the server's
// capabilities) and those keep wants, so what go-git holds of it is a few
// lines whatever its length.
type refFilter struct {
	body io.ReadCloser
	in   *pktline.Scanner
	keep func(name string) bool
	out  bytes.Buffer
	refs int // ref lines seen
	done bool
}

func (f *refFilter) Read(p []byte) (int, error) {
	for f.out.Len() == 0 && !f.done {
		if !f.in.Scan() {
			if err := f.in.Err(); err != nil {
				return 0, err
			}
			f.done = true
			break
		}
		line := f.in.Bytes()
		if name, ok := refName(line); ok {
			f.refs++
			if f.refs > 1 && !f.keep(name) {
				continue
			}
		}
		enc := pktline.NewEncoder(&f.out)
		var err error
		if len(line) == 0 {
			err = enc.Flush()
		} else {
			err = enc.Encode(line)
		}
		if err != nil {
			return 0, err
		}
	}
	if f.out.Len() == 0 {
		return 0, io.EOF
	}
	return f.out.Read(p)
}

func (f *refFilter) Close() error { return f.body.Close() }

// refName is the ref a listing's line names ("<sha> <name>[\0caps]\n"),
// and whether the line is one.
func refName(line []byte) (string, bool) {
	if len(line) < 42 || line[40] != ' ' || !isHex(line[:40]) {
		return "", false
	}
	name := line[41:]
	if i := bytes.IndexAny(name, "\x00\n"); i >= 0 {
		name = name[:i]
	}
	return string(name), true
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
