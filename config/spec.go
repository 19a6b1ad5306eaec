package config

import (
	"encoding/json"
	"fmt"
	"math"

	"go.yaml.in/yaml/v3"
)

// The bounds on what target specs may expand to. YAML aliases let a small
// file name one value many times, and nested ones multiply ("a billion
// laughs"): these count every use of an alias, so no spec, and no file of
// specs together, is bigger once expanded than the bound, whatever the
// file's own size. A spec is stored with its job and with each of its
// invocations: one of 256 KiB is already a large one.
const (
	maxSpecNodes     = 10000     // values in one spec
	maxSpecBytes     = 256 << 10 // bytes of keys and scalars in one spec
	maxFileSpecBytes = MaxFileSize
)

// specBudget is what is left of one spec's bounds.
type specBudget struct {
	nodes, bytes int
}

// specJSON converts a target's YAML subtree to JSON as it is: mappings
// become objects (keys sorted, so the same spec always encodes the same
// way), lists arrays, and scalars strings, numbers, booleans or null. An
// empty subtree (`noop:` or `noop: {}`) is the empty object.
func (d *decoder) specJSON(n *yaml.Node, path string) (json.RawMessage, bool) {
	budget := specBudget{nodes: maxSpecNodes, bytes: maxSpecBytes}
	v, ok := d.specValue(n, path, &budget)
	if !ok {
		return nil, false
	}
	if v == nil {
		v = map[string]any{}
	}
	if _, isObject := v.(map[string]any); !isObject {
		d.errorf(resolve(n), path, "want a mapping of the target's settings, got %s", describe(resolve(n)))
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		d.errorf(n, path, "cannot be written as JSON: %v", err)
		return nil, false
	}
	return b, true
}

// spend takes a value of size bytes from the spec's budget and the file's,
// and reports whether both still hold; the first to run out is an error.
func (d *decoder) spend(n *yaml.Node, path string, b *specBudget, size int) bool {
	b.nodes--
	b.bytes -= size
	d.specBytes += size
	switch {
	case b.nodes < 0:
		d.errorf(n, path, "too large: more than %d values once its aliases are expanded", maxSpecNodes)
	case b.bytes < 0:
		d.errorf(n, path, "too large: more than %d bytes once its aliases are expanded", maxSpecBytes)
	case d.specBytes > maxFileSpecBytes:
		d.errorf(n, path, "the file's target settings come to more than %d bytes once their aliases are expanded", maxFileSpecBytes)
	default:
		return true
	}
	b.nodes, b.bytes = -1, -1 // spent: the callers above stop here
	return false
}

func (d *decoder) specValue(n *yaml.Node, path string, budget *specBudget) (any, bool) {
	n = resolve(n)
	size := 0
	if n.Kind == yaml.ScalarNode {
		size = len(n.Value)
	}
	if !d.spend(n, path, budget, size) {
		return nil, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				d.errorf(k, path, "keys must be field names; merge keys (<<) are not supported")
				ok = false
				continue
			}
			if !d.spend(k, path, budget, len(k.Value)) {
				return nil, false
			}
			if _, dup := m[k.Value]; dup {
				d.errorf(k, join(path, k.Value), "given twice")
				ok = false
				continue
			}
			v, vok := d.specValue(n.Content[i+1], join(path, k.Value), budget)
			if !vok {
				if budget.nodes < 0 {
					return nil, false
				}
				ok = false
			}
			m[k.Value] = v
		}
		return m, ok
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		ok := true
		for i, c := range n.Content {
			v, vok := d.specValue(c, fmt.Sprintf("%s[%d]", path, i), budget)
			if !vok {
				if budget.nodes < 0 {
					return nil, false
				}
				ok = false
			}
			list = append(list, v)
		}
		return list, ok
	case yaml.ScalarNode:
		return d.specScalar(n, path)
	}
	d.errorf(n, path, "want a value, got %s", describe(n))
	return nil, false
}

// specScalar keeps strings as written: a timestamp or anything YAML would
// give a tag of its own stays the text the owner typed.
func (d *decoder) specScalar(n *yaml.Node, path string) (any, bool) {
	switch n.Tag {
	case "!!null":
		return nil, true
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err == nil {
			return b, true
		}
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, true
		}
		var f float64
		if err := n.Decode(&f); err == nil && !math.IsInf(f, 0) {
			return f, true
		}
	case "!!float":
		var f float64
		if err := n.Decode(&f); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, true
		}
	default:
		return n.Value, true
	}
	d.errorf(n, path, "%s cannot be written as JSON", describe(n))
	return nil, false
}
