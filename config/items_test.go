package config

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
)

// yamlNodes is how many nodes the YAML parser builds from data, in every
// document it reads before an error: what itemsBound must not undercount.
func yamlNodes(data []byte) int {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	total := 0
	var count func(*yaml.Node)
	count = func(n *yaml.Node) {
		total++
		for _, c := range n.Content {
			count(c)
		}
	}
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return total
		}
		count(&doc)
	}
}

// itemsCorpus is YAML that makes nodes every way the parser does: empty
// keys and values, anchors and tags alone, explicit keys, single pairs in
// flow lists, JSON, aliases, documents, every line break the parser
// knows, a byte order mark, comments and strings that look like each
// other, block scalars; and the example configs and big generated ones.
func itemsCorpus(t testing.TB) map[string]string {
	corpus := map[string]string{
		"empty values":             "a:\nb:\nc: # none\n",
		"empty keys":               ": a\n- : b\n",
		"anchors alone":            "&a : b\n? &c\n: &d\n- &e\n- !!str\n",
		"an anchor before a value": "a: &x\nb: &y [1, 2]\nc: *x\n",
		"explicit keys":            "? a\n? b\n: c\n?\n:\n",
		"flow":                     "{a, b: , ? c, : d, e: [f, g: h, : i, ? j, [k]: l], &m : n, *o : p}\n",
		"single pairs":             "[" + strings.Repeat("a: b, ", 10) + ": c, d:, ? , e]\n",
		"json":                     `{"a":1,"b":[true,null,{"c":"d"}],"e":{}}` + "\n",
		"documents":                "a: 1\n---\n- b\n--- c\n...\n---\n",
		"empty documents":          "---\n---\n---\n",
		"block entries":            "- - - x\n  -\n-\n- - \n",
		"indentless":               "a:\n- b\n- c:\n  - d\n",
		"crlf":                     "a: 1\r\nb:\r\n- c\r\n",
		"nel":                      "a: 1\u0085b:\u0085c: [d]\u0085",
		"ls and ps":                "a: 1\u2028b:\u2029c: d\u2028",
		"bom":                      "\ufeffa: [b, c]\n",
		"comments":                 "# a: [b, c]\na: 1 # b: [c]\n#c\n",
		"a # in a string":          `a: ["b #", c, d: e, f]` + "\n" + "g: 'h # i', j\n",
		"a string past its line":   "a: \"b\n  # c: [d]\n  e\"\nf: [g, h]\n",
		"block scalars":            "a: |\n  b: [c, d]\n  # e\nf: >-\n  g\nh: [i]\n",
		"tags":                     "a: !!map {b: c}\nd: !!seq [e]\n? !!str\n: !x\n",
		"quotes after anchors":     "a: &x'y'\nb: &z\"w\"\n",
		"plain scalars with marks": "a: b:c, d?e - f [g] {h}\nurl: https://example.com:8080/x?y=z#w\n",
	}
	for _, name := range []string{"demo", "ops"} {
		b, err := os.ReadFile("../examples/configs/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		corpus["the example "+name] = string(b)
	}
	var small, rich strings.Builder
	small.WriteString("jobs:\n")
	rich.WriteString("jobs:\n")
	for i := range 1000 {
		fmt.Fprintf(&small, "  - id: j%d\n    schedule: \"H * * * *\"\n    noop: {}\n", i)
		fmt.Fprintf(&rich, "  # job %d: calls the hook\n  - id: job-%07d\n    schedule: 'H * * * * *'\n    time_zone: Europe/Paris\n"+
			"    retries: {max_attempts: 3, min_backoff: 10s}\n    url_fetch:\n      url: https://example.com/hook/%d?a=b\n"+
			"      headers: {Authorization: \"Bearer x\"}\n    notify:\n      webhook: https://hooks.example.com/services/T/B/X\n      on: [failure]\n", i, i, i)
	}
	corpus["1,000 small jobs"] = small.String()
	corpus["1,000 rich jobs"] = rich.String()
	return corpus
}

// TestItemsBoundCountsEveryNode: for YAML that makes nodes every way the
// parser does, the bound is at least the nodes built; for configs as
// people write them, at most three times as many.
func TestItemsBoundCountsEveryNode(t *testing.T) {
	t.Parallel()
	for name, text := range itemsCorpus(t) {
		nodes := yamlNodes([]byte(text))
		bound, _ := itemsBound([]byte(text), maxFileItems)
		if bound < nodes {
			t.Errorf("%s: bound %d, yet the parser built %d nodes from %q", name, bound, nodes, text)
		}
		if strings.Contains(name, "jobs") || strings.HasPrefix(name, "the example") {
			if bound > 3*nodes {
				t.Errorf("%s: bound %d for %d nodes; want at most three times", name, bound, nodes)
			}
		}
	}
}

// TestItemsBoundSaysWhereItPassesTheLimit: the line is the one whose
// items take the count past the limit.
func TestItemsBoundSaysWhereItPassesTheLimit(t *testing.T) {
	t.Parallel()
	// The document, then a: counts 3 (the key, a mapping, an empty
	// value) and each - x 3 (a list, an empty item, x): 34 in all.
	data := []byte("a:\n" + strings.Repeat("- x\n", 10))
	for _, tc := range []struct{ limit, line int }{{3, 1}, {4, 2}, {6, 2}, {7, 3}, {33, 11}, {34, 0}} {
		if n, line := itemsBound(data, tc.limit); line != tc.line || line == 0 && n != 34 {
			t.Errorf("limit %d: %d items, line %d; want line %d", tc.limit, n, line, tc.line)
		}
	}
}

// FuzzItemsBound: whatever the bytes, the bound is at least the nodes the
// parser builds from them.
func FuzzItemsBound(f *testing.F) {
	for _, text := range itemsCorpus(f) {
		if len(text) < 4096 {
			f.Add([]byte(text))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes := yamlNodes(data)
		if bound, _ := itemsBound(data, maxFileItems); bound < nodes {
			t.Errorf("bound %d, yet the parser built %d nodes from %q", bound, nodes, data)
		}
	})
}

// TestParseCostIsBoundedPerItem: whatever a file holds, parsing it
// allocates at most 400 bytes per item itemsBound counts (the tree the
// YAML parser builds, then the decoder's work): with at most maxFileItems
// of them, at most 800 MB for any file, where a 16 MiB file took 2.9 GB.
func TestParseCostIsBoundedPerItem(t *testing.T) {
	var small strings.Builder
	small.WriteString("jobs:\n")
	for i := range 20_000 {
		fmt.Fprintf(&small, "  - id: j%d\n    schedule: \"H * * * *\"\n    noop: {}\n", i)
	}
	for name, text := range map[string]string{
		"small jobs":         small.String(),
		"one-character list": "jobs: [" + strings.Repeat("1,", 200_000) + "1]",
		"a list item a line": "jobs:\n" + strings.Repeat("- 1\n", 200_000),
		"explicit keys":      "jobs:\n" + strings.Repeat("- ? \n", 100_000),
		"single pairs":       "jobs: [" + strings.Repeat("a: b, ", 100_000) + "]",
		"empty mappings":     "jobs: [" + strings.Repeat("{},", 200_000) + "{}]",
	} {
		items, _ := itemsBound([]byte(text), maxFileItems)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = Parse("p.yaml", []byte(text), map[string]targets.Target{"noop": noop.Target{}})
		runtime.ReadMemStats(&after)
		if perItem := (after.TotalAlloc - before.TotalAlloc) / uint64(items); perItem > 400 {
			t.Errorf("%s: %d bytes allocated per item; want at most 400", name, perItem)
		}
	}
}
