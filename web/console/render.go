package console

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
)

// layout is what the frame around every page shows.
type layout struct {
	Title  string
	Viewer access.Identity
	// SignIn are the sign-ins offered to a signed-out viewer, each back
	// to this page; SignOut is where a signed-in one ends its session.
	SignIn  []crumb
	SignOut string
	Refresh bool // the page's lists refresh themselves
	Crumbs  []crumb
	Page    any
}

// crumb is one step of the path shown above a page.
type crumb struct {
	Name string
	URL  string
}

// utcSecond is a time as a page writes it: to the second, in UTC, saying
// so.
func utcSecond(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

var funcs = template.FuncMap{
	"utc":         utcSecond,
	"iso":         func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"duration":    roundDuration,
	"pathEsc":     url.PathEscape,
	"inc":         func(n int) int { return n + 1 },
	"lower":       strings.ToLower,
	"outcomeOf":   outcome,
	"barWidth":    func(start, end float64) float64 { return end - start },
	"list":        func(s ...string) []string { return s },
	"splitClass":  func(s string) []string { return strings.SplitN(s, ":", 2) },
	"short":       shortSHA,
	"sub":         func(a, b int) int { return a - b },
	"skipReasons": func() []skipReason { return skipReasons },
}

// parsePages parses each page's template with the frame around it and
// the partials every page may use (templates/parts*.html).
func parsePages() map[string]*template.Template {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	base := template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts*.html"))
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" || strings.HasPrefix(name, "parts") {
			continue
		}
		pages[name] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, n))
	}
	return pages
}

// render writes a page whole or, if its template fails, an error: a page
// cut in half would read as a page with fewer jobs.
func (c *console) render(w http.ResponseWriter, r *http.Request, v viewer, status int, name string, page any) {
	c.renderTitled(w, r, v, status, name, "", nil, page)
}

func (c *console) renderTitled(w http.ResponseWriter, r *http.Request, v viewer, status int, name, title string, crumbs []crumb, page any) {
	l := layout{Title: title, Viewer: v.ID, Crumbs: crumbs, Page: page}
	if l.Title == "" {
		l.Title = name
	}
	l.SignIn, l.SignOut = c.doors(r, v)
	if _, ok := page.(interface{ refreshes() }); ok {
		l.Refresh = true
	}
	var buf bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&buf, "layout", l); err != nil {
		c.Logger.Error("console template failed", "page", name, "error", err)
		http.Error(w, "the server failed to render this page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// doors are the sign-ins a signed-out viewer is offered, back to the page
// it asked for, and the sign-out a viewer signed in with a session gets.
func (c *console) doors(r *http.Request, v viewer) (in []crumb, out string) {
	switch v.ID {
	case access.Anonymous:
		next := "?next=" + url.QueryEscape(r.URL.RequestURI())
		if c.Entry.OIDC != "" {
			in = append(in, crumb{Name: "Sign in", URL: c.Entry.OIDC + next})
		}
		if c.Entry.Token != "" {
			in = append(in, crumb{Name: "Sign in with a token", URL: c.Entry.Token + next})
		}
	case access.Local:
	default:
		out = c.Entry.SignOut
	}
	return in, out
}

// roundDuration writes a duration as people read it: "3 min", "2 h 5 min",
// "850 ms".
func roundDuration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		h := int(d.Hours())
		if m := int(d.Minutes()) % 60; m != 0 {
			return fmt.Sprintf("%d h %d min", h, m)
		}
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

// relative says when t is from now: "in 3 min", "5 min ago", "now".
func relative(t, now time.Time) string {
	d := t.Sub(now)
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d > 0:
		return "in " + roundDuration(d)
	}
	return roundDuration(d) + " ago"
}

// moment is a time as a page shows it: UTC in the page (the script
// turns it into the viewer's zone, keeping UTC on hover) and how far
// from now.
type moment struct {
	T        time.Time
	Relative string
}

func at(t, now time.Time) *moment {
	if t.IsZero() {
		return nil
	}
	return &moment{T: t, Relative: relative(t, now)}
}

// shortSHA is a commit's id as git abbreviates it; a revision that is not
// a commit (a file's hash) is shortened alike.
func shortSHA(sha string) string { return sha[:min(len(sha), 12)] }
