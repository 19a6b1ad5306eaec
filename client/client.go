// Package client calls a Sundial server's JSON API (docs/api.md) with a
// bearer token: what the CLI's verbs are made of.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Client calls one server's API.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// Error is the API's JSON error, or what came instead of one.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// New is a client of the server at server (http(s)://HOST[:PORT], with a
// path prefix if the server sits behind one), sending token ("": none).
// A token goes only over https, or plain http to this machine.
func New(server, token string) (*Client, error) {
	base, err := url.Parse(server)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("--server %q: want http(s)://HOST[:PORT]", server)
	}
	if token != "" && base.Scheme == "http" && !loopback(base.Hostname()) {
		return nil, fmt.Errorf("--server %s: a token goes only over https, or plain http to this machine", server)
	}
	return &Client{base: base, token: token, http: &http.Client{
		// A redirect could carry the token to another host; the API
		// never redirects.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// ReadToken reads the token from file, else from $SUNDIAL_TOKEN (getenv):
// a token never comes as a flag's value, which any user of the machine
// can read in the process list.
func ReadToken(file string, getenv func(string) string) (string, error) {
	if file == "" {
		return strings.TrimSpace(getenv("SUNDIAL_TOKEN")), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("--token-file %s: want one line with one token", file)
	}
	return token, nil
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// maxAnswer bounds what is read of one answer.
const maxAnswer = 32 << 20

// Do sends a request with a JSON body (nil: none) and decodes the JSON
// answer into out, or returns the API's *Error.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	// A server behind a path prefix keeps it: https://host/sundial.
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.base.String(), "/")+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Error string }
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(raw))
		}
		return &Error{Status: resp.StatusCode, Message: e.Error}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the API's JSON: %w", method, path, err)
	}
	return nil
}
