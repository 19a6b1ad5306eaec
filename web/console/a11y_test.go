package console_test

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/sundial-cron/sundial/web/signin"
)

// The stylesheet's text colours reach WCAG AA's 4.5:1 on the page's
// white. The outcome colours also fill the strip's cells under white
// letters, so the same ratio holds there.
func TestColoursHaveContrast(t *testing.T) {
	t.Parallel()
	css, err := os.ReadFile("static/console.css")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z]+): (#[0-9a-f]{6})`).FindAllStringSubmatch(string(css), -1) {
		vars[m[1]] = m[2]
	}
	for _, name := range []string{"fg", "muted", "link", "ok", "fail", "run", "abort", "skip"} {
		c, ok := vars[name]
		if !ok {
			t.Errorf("--%s is not in the stylesheet", name)
			continue
		}
		if r := contrast(c, "#ffffff"); r < 4.5 {
			t.Errorf("--%s %s on white: %.2f:1, want at least 4.5:1", name, c, r)
		}
	}
}

func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

func luminance(hex string) float64 {
	var l float64
	for i, w := range []float64{0.2126, 0.7152, 0.0722} {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		c := float64(v) / 255
		if c <= 0.03928 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		l += w * c
	}
	return l
}

// Every control of every page can be found by a screen reader and reached
// by keyboard: each input and select sits in a label, each button and
// link has text, each picture has a role and a label, and the page
// declares its language.
func TestEveryControlIsLabelled(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	inv := s.newest(t, "payments/settle")
	signInPage := tokenSignInPage(t, s)
	for _, path := range []string{"/", "/configs", "/playground?expr=H+*+*+*+*&job=a%2Fb", "/projects/payments", jobPath("settle"), jobPath("reconcile"),
		invPath("settle", inv.ID), "/fleet", "/projects/payments/grid", "/projects/payments/grid?span=6h", "/playground?expr=61+*+*+*+*&tz=Mars",
		"/playground?expr=30+2+*+*+*&tz=America%2FNew_York&skip=2026-03-09&only=mon-fri&from=2026-03-04&max_runs=3",
		"/forecast", "/forecast?project=payments", "/configs/payments/changes",
		signin.TokenSignInPath} {
		p := s.get(t, owner, path)
		if path == signin.TokenSignInPath {
			p = signInPage
		}
		if len(p.find("html", "lang", "en")) != 1 {
			t.Errorf("%s: no lang on html", path)
		}
		for _, tag := range []string{"input", "select"} {
			for _, n := range p.find(tag, "", "") {
				if attr(n, "type") == "hidden" {
					continue
				}
				if !inside(n, "label") && attr(n, "aria-label") == "" {
					t.Errorf("%s: <%s name=%q> has no label", path, tag, attr(n, "name"))
				}
			}
		}
		for _, tag := range []string{"button", "a"} {
			for _, n := range p.find(tag, "", "") {
				if strings.TrimSpace(textOf(n)) == "" && len(findIn(n, "title")) == 0 {
					t.Errorf("%s: a <%s> without text (href %q)", path, tag, attr(n, "href"))
				}
			}
		}
		for _, svg := range p.find("svg", "", "") {
			if attr(svg, "aria-hidden") == "true" {
				continue
			}
			if attr(svg, "role") != "img" || attr(svg, "aria-label") == "" {
				t.Errorf("%s: an <svg class=%q> without role img and a label", path, attr(svg, "class"))
			}
		}
	}
}

func inside(n *html.Node, tag string) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Data == tag {
			return true
		}
	}
	return false
}
