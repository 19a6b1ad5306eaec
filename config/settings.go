package config

import (
	"fmt"
	"maps"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/sundial-cron/sundial/access"
)

// ReadSettings reads the server's access settings (`sundial serve
// --access-file`): its administrators, its groups, and whether grants to
// anonymous are honoured. They are the operator's, never a project's:
//
//	administrators: [user:oncall-lead@example.com, group:sundial-admins]
//	groups:
//	  sundial-admins: [user:alice@example.com]
//	allow_anonymous: false
//
// The file is read as a project's config is (a regular file, bounded), and
// its errors are Errors naming the line and field. The settings are checked
// whole (access.NewRoles) before they are returned.
func ReadSettings(path string) (access.Settings, error) {
	data, err := ReadFile(path)
	if err != nil {
		return access.Settings{}, err
	}
	d := &decoder{file: path}
	var s access.Settings
	if root := d.document(data); root != nil {
		d.settings(&s, root)
	}
	if len(d.errs) > 0 {
		return access.Settings{}, d.errs
	}
	if _, err := access.NewRoles(s); err != nil {
		return access.Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (d *decoder) settings(s *access.Settings, root *yaml.Node) {
	fields, ok := d.mapping(root, "", "administrators", "groups", "allow_anonymous")
	if !ok {
		return
	}
	if f, ok := fields["administrators"]; ok {
		names, _ := d.strList(f.value, "administrators")
		for i, name := range names {
			m, err := access.ParseMember(name)
			if err != nil {
				d.errorf(resolve(f.value).Content[i], fmt.Sprintf("administrators[%d]", i), "%v", err)
				continue
			}
			s.Administrators = append(s.Administrators, m)
		}
	}
	if f, ok := fields["groups"]; ok {
		groups := resolve(f.value)
		if groups.Kind != yaml.MappingNode {
			d.errorf(groups, "groups", "want a mapping of group name to a list of members, got %s", describe(groups))
		} else {
			s.Groups = map[string][]access.Identity{}
			// Any name is a field here; mapping still finds a name given
			// twice and a key that is not one.
			var names []string
			for i := 0; i+1 < len(groups.Content); i += 2 {
				names = append(names, groups.Content[i].Value)
			}
			byName, _ := d.mapping(groups, "groups", names...)
			for _, name := range slices.Sorted(maps.Keys(byName)) {
				path := join("groups", name)
				members, _ := d.strList(byName[name].value, path)
				for i, m := range members {
					id, err := access.ParseIdentity(m)
					if err != nil {
						d.errorf(resolve(byName[name].value).Content[i], fmt.Sprintf("%s[%d]", path, i), "%v", err)
						continue
					}
					s.Groups[name] = append(s.Groups[name], id)
				}
			}
		}
	}
	if f, ok := fields["allow_anonymous"]; ok {
		s.AllowAnonymous, _ = d.boolean(f.value, "allow_anonymous")
	}
}
