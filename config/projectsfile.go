package config

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// ProjectEntry is one project of a service config (--projects-file): the
// repo, ref and directory its <project>.yaml is read from. Teams own their
// configs in repos of their own, as in LUCI.
type ProjectEntry struct {
	ID   string `yaml:"id"`
	Repo string `yaml:"repo"`
	Ref  string `yaml:"ref"`  // "" is main
	Path string `yaml:"path"` // "" is the repo's root
}

// ReadProjectsFile reads a service config:
//
//	projects:
//	  - id: billing
//	    repo: https://github.com/example/billing-config
//	    ref: main
//	    path: sundial/
//
// A project is in exactly one place: one listed twice is an error, as is
// an unknown field, an id that is not a project id or an entry without a
// repo; errors name the file and line.
func ReadProjectsFile(path string) ([]ProjectEntry, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseProjectsFile(path, data)
}

// ParseProjectsFile parses a service config read elsewhere (from a repo),
// as ReadProjectsFile does; path names it in errors.
func ParseProjectsFile(path string, data []byte) ([]ProjectEntry, error) {
	var doc struct {
		Projects []yaml.Node `yaml:"projects"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	var out []ProjectEntry
	line := map[string]int{}
	for i, n := range doc.Projects {
		var e ProjectEntry
		// Node.Decode does not refuse unknown fields as the decoder does.
		for k := 0; n.Kind == yaml.MappingNode && k+1 < len(n.Content); k += 2 {
			switch key := n.Content[k]; key.Value {
			case "id", "repo", "ref", "path":
			default:
				return nil, &Error{File: path, Line: key.Line, Field: fmt.Sprintf("projects[%d].%s", i, key.Value), Msg: "unknown field: want id, repo, ref or path"}
			}
		}
		if err := n.Decode(&e); err != nil {
			return nil, &Error{File: path, Line: n.Line, Field: fmt.Sprintf("projects[%d]", i), Msg: err.Error()}
		}
		switch {
		case !ValidProjectID(e.ID):
			return nil, &Error{File: path, Line: n.Line, Field: fmt.Sprintf("projects[%d].id", i), Msg: fmt.Sprintf("%q is not a project id: want lower-case letters, digits, _ and -, starting with a letter or digit", e.ID)}
		case line[e.ID] != 0:
			return nil, &Error{File: path, Line: n.Line, Field: fmt.Sprintf("projects[%d].id", i), Msg: fmt.Sprintf("project %s is listed twice (also at line %d): a project is in exactly one place", e.ID, line[e.ID])}
		case e.Repo == "":
			return nil, &Error{File: path, Line: n.Line, Field: fmt.Sprintf("projects[%d].repo", i), Msg: fmt.Sprintf("missing: want the URL of the repo holding %s.yaml", e.ID)}
		}
		if err := checkRepoURL(e.Repo); err != nil {
			return nil, &Error{File: path, Line: n.Line, Field: fmt.Sprintf("projects[%d].repo", i), Msg: err.Error()}
		}
		line[e.ID] = n.Line
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, &Error{File: path, Field: "projects", Msg: "none listed"}
	}
	return out, nil
}
