package swarming

import (
	"fmt"
	"strings"
)

// RealmGrant lets one project's jobs run Swarming tasks in a realm, or in
// every realm of a LUCI project ("<luci project>:*"). A server's grants are
// its operator's (--swarming-realms).
type RealmGrant struct {
	// Project is the Sundial project the grant is for.
	Project string
	// Realm is "<luci project>:<realm>", or with Any the LUCI project.
	Realm string
	// Any says the grant was written "<luci project>:*".
	Any bool
}

// ParseRealmGrant reads a --swarming-realms entry, PROJECT=REALM. It does
// not judge PROJECT beyond its being there: what a Sundial project id may be
// is the caller's to check.
func ParseRealmGrant(s string) (RealmGrant, error) {
	project, realm, ok := strings.Cut(s, "=")
	project, realm = strings.TrimSpace(project), strings.TrimSpace(realm)
	if !ok || project == "" || realm == "" {
		return RealmGrant{}, fmt.Errorf("%q: want PROJECT=REALM, e.g. billing=billing:ci or billing=billing:*", s)
	}
	if luci, ok := strings.CutSuffix(realm, ":*"); ok {
		if !realmRE.MatchString(luci + ":x") {
			return RealmGrant{}, fmt.Errorf("%q: %q is not a LUCI project", s, luci)
		}
		return RealmGrant{Project: project, Realm: luci, Any: true}, nil
	}
	if !realmRE.MatchString(realm) {
		return RealmGrant{}, fmt.Errorf("%q: realm %q: want <luci project>:<realm> or <luci project>:*", s, realm)
	}
	return RealmGrant{Project: project, Realm: realm}, nil
}

func (g RealmGrant) allows(project, realm string) bool {
	if g.Project != project {
		return false
	}
	if g.Any {
		luci, _, _ := strings.Cut(realm, ":")
		return luci == g.Realm
	}
	return realm == g.Realm
}
