package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sundial-cron/sundial/access"
)

// roles reads a project's `roles:` list: who may see and steer its jobs.
// Each entry grants one role to members, in the whole project or in the
// named jobs only, which must be jobs of this file. Groups are the
// server's settings and not known here: a grant to a group the server does
// not define covers no one.
func (d *decoder) roles(p *Project, n *yaml.Node, known map[string]int) {
	list := resolve(n)
	if list.Kind != yaml.SequenceNode {
		d.errorf(list, "roles", "want a list of grants ({role: ..., members: [...]}), got %s", describe(list))
		return
	}
	for i, g := range list.Content {
		path := fmt.Sprintf("roles[%d]", i)
		fs, ok := d.mapping(g, path, "role", "members", "jobs")
		if !ok {
			continue
		}
		var grant access.RoleGrant
		good := true
		if f, ok := fs["role"]; !ok {
			d.errorf(g, path+".role", "missing: want reader, triggerer or owner")
			good = false
		} else if s, ok := d.str(f.value, path+".role"); !ok {
			good = false
		} else if grant.Role, ok = parseRole(s); !ok {
			d.errorf(f.value, path+".role", "%q: want reader, triggerer or owner (administrators come from the server's settings, not a project's config)", s)
			good = false
		}
		f, ok := fs["members"]
		if !ok {
			d.errorf(g, path+".members", "missing: want a list of user:<email>, serviceAccount:<email>, group:<name> or anonymous")
			good = false
		} else {
			members, ok := d.strList(f.value, path+".members")
			if ok && len(members) == 0 {
				d.errorf(f.value, path+".members", "empty: a grant needs at least one member")
				ok = false
			}
			good = good && ok
			for j, s := range members {
				mpath := fmt.Sprintf("%s.members[%d]", path, j)
				node := resolve(f.value).Content[j]
				m, err := access.ParseMember(s)
				if err != nil {
					d.errorf(node, mpath, "%v", err)
					good = false
					continue
				}
				if access.Identity(m) == access.Anonymous && grant.Role != "" && grant.Role != access.Reader {
					d.errorf(node, mpath, "anonymous may be granted reader only, not %s: anyone who reaches the server is anonymous", grant.Role)
					good = false
				}
				if !slices.Contains(grant.Members, m) {
					grant.Members = append(grant.Members, m)
				}
			}
		}
		if f, ok := fs["jobs"]; ok {
			jobs, ok := d.strList(f.value, path+".jobs")
			if ok && len(jobs) == 0 {
				d.errorf(f.value, path+".jobs", "empty: leave jobs out to grant the role in every job")
				ok = false
			}
			good = good && ok
			for j, name := range jobs {
				if known[name] == 0 {
					d.errorf(resolve(f.value).Content[j], fmt.Sprintf("%s.jobs[%d]", path, j), "%q is not a job of this file", name)
					good = false
					continue
				}
				if !slices.Contains(grant.Jobs, name) {
					grant.Jobs = append(grant.Jobs, name)
				}
			}
		}
		if good {
			p.Grants = append(p.Grants, grant)
		}
	}
}

func parseRole(s string) (access.Role, bool) {
	r, err := access.ParseRole(s)
	return r, err == nil
}

// strList reads a list of strings.
func (d *decoder) strList(n *yaml.Node, path string) ([]string, bool) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "want a list of strings, got %s", describe(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, e := range n.Content {
		s, good := d.str(e, fmt.Sprintf("%s[%d]", path, i))
		ok = ok && good
		out = append(out, strings.TrimSpace(s))
	}
	if !ok {
		return nil, false
	}
	return out, true
}
