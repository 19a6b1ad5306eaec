package access

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Permission is something a request does to a project or a job.
type Permission string

// The permissions the API and the console ask for.
const (
	// Read: see the project, its jobs, their definitions, invocations and
	// logs.
	Read Permission = "read"
	// Trigger: ask for a run now.
	Trigger Permission = "trigger"
	// Steer: pause, resume, abort a job or one of its invocations.
	Steer Permission = "steer"
)

// Role is a set of permissions a project's config grants; each role holds
// the one before it: Reader ⊂ Triggerer ⊂ Owner.
type Role string

// The roles, weakest first.
const (
	Reader    Role = "reader"
	Triggerer Role = "triggerer"
	Owner     Role = "owner"
)

// AllRoles lists every role, weakest first.
var AllRoles = []Role{Reader, Triggerer, Owner}

// permissions is what each role holds.
var permissions = map[Role][]Permission{
	Reader:    {Read},
	Triggerer: {Read, Trigger},
	Owner:     {Read, Trigger, Steer},
}

// ParseRole reads a role's name.
func ParseRole(s string) (Role, error) {
	if _, ok := permissions[Role(s)]; !ok {
		return "", fmt.Errorf("role %q: want reader, triggerer or owner", s)
	}
	return Role(s), nil
}

// Has reports whether the role holds the permission.
func (r Role) Has(p Permission) bool { return slices.Contains(permissions[r], p) }

// Member is who a grant is for: an identity ("user:...",
// "serviceAccount:...", "anonymous") or a group of the server's settings
// ("group:<name>").
type Member string

// KindGroup is the kind of a Member that names a group.
const KindGroup = "group"

// groupName is what a group's name may be.
var groupName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)

// ParseMember reads a member as project configs write it. Local is never
// a member: it exists only in the single-user mode, where it is the
// administrator, and no config may name it.
func ParseMember(s string) (Member, error) {
	if name, ok := strings.CutPrefix(s, KindGroup+":"); ok {
		if !groupName.MatchString(name) {
			return "", fmt.Errorf("group %q: a name is lower-case letters, digits, _, . and -, starting with a letter or digit", name)
		}
		return Member(s), nil
	}
	id, err := ParseIdentity(s)
	if err != nil {
		return "", fmt.Errorf("member %q: want user:<email>, serviceAccount:<email>, group:<name> or anonymous", s)
	}
	if id == Local {
		return "", fmt.Errorf("member %q: local is the administrator of the single-user mode and cannot be granted a role", s)
	}
	return Member(id), nil
}

// Group returns the group's name, and ok false for a member that is an
// identity.
func (m Member) Group() (name string, ok bool) { return strings.CutPrefix(string(m), KindGroup+":") }

// RoleGrant gives a role to members, in a whole project or, when Jobs is
// not empty, in only the named jobs of it (job names without the project).
type RoleGrant struct {
	Role    Role
	Members []Member
	Jobs    []string
}

// Settings are the server's own access settings: never a project's
// config's, so no project can make itself or anyone an administrator.
type Settings struct {
	// Administrators have every permission in every project, grants or
	// none. A member may be a group.
	Administrators []Member
	// Groups name sets of identities that grants and Administrators may
	// refer to as "group:<name>". A group does not contain groups.
	Groups map[string][]Identity
	// AllowAnonymous honours grants to "anonymous", which make a project
	// (or jobs of it) readable by anyone who can reach the server. Off, a
	// project's config cannot make it public: the operator decides.
	AllowAnonymous bool
	// LocalAdministrator makes Local an administrator: the single-user
	// mode, where no sign-in is configured and only callers on the
	// server's machine are served. Off, Local has no permission at all.
	LocalAdministrator bool
}

// Roles decides who may do what, from the server's settings and the roles
// a project grants. It is immutable and safe for concurrent use.
type Roles struct {
	admins         map[Identity]bool
	adminGroups    []string
	groups         map[string]map[Identity]bool
	allowAnonymous bool
	localAdmin     bool
}

// NewRoles checks the settings and returns the Roles they make. A group named
// among the administrators must be defined; Local and Anonymous cannot be
// administrators or group members.
func NewRoles(s Settings) (*Roles, error) {
	r := &Roles{
		admins: map[Identity]bool{}, groups: map[string]map[Identity]bool{},
		allowAnonymous: s.AllowAnonymous, localAdmin: s.LocalAdministrator,
	}
	for name, ids := range s.Groups {
		if !groupName.MatchString(name) {
			return nil, fmt.Errorf("group %q: a name is lower-case letters, digits, _, . and -, starting with a letter or digit", name)
		}
		set := map[Identity]bool{}
		for _, id := range ids {
			if err := personOrMachine(id); err != nil {
				return nil, fmt.Errorf("group %s: %w", name, err)
			}
			set[id] = true
		}
		r.groups[name] = set
	}
	for _, m := range s.Administrators {
		if name, ok := m.Group(); ok {
			if _, ok := r.groups[name]; !ok {
				return nil, fmt.Errorf("administrators: group %q is not defined in the settings' groups", name)
			}
			r.adminGroups = append(r.adminGroups, name)
			continue
		}
		if err := personOrMachine(Identity(m)); err != nil {
			return nil, fmt.Errorf("administrators: %w", err)
		}
		r.admins[Identity(m)] = true
	}
	return r, nil
}

// personOrMachine refuses anything but a user or service account in the
// canonical form ParseIdentity gives.
func personOrMachine(id Identity) error {
	parsed, err := ParseIdentity(string(id))
	switch {
	case err != nil:
		return err
	case parsed != id:
		return fmt.Errorf("identity %q: write it as %q", id, parsed)
	case id.Kind() != KindUser && id.Kind() != KindServiceAccount:
		return fmt.Errorf("identity %q: only users and service accounts can be named here", id)
	}
	return nil
}

// GroupDefined reports whether the settings define the group, for
// warnings about grants that name one they do not.
func (r *Roles) GroupDefined(name string) bool {
	_, ok := r.groups[name]
	return ok
}

// AllowsAnonymous reports whether grants to anonymous are honoured.
func (r *Roles) AllowsAnonymous() bool { return r.allowAnonymous }

// Administrator reports whether id has every permission everywhere.
func (r *Roles) Administrator(id Identity) bool {
	if id == Local {
		return r.localAdmin
	}
	if id == Anonymous || id == "" {
		return false
	}
	if r.admins[id] {
		return true
	}
	for _, g := range r.adminGroups {
		if r.groups[g][id] {
			return true
		}
	}
	return false
}

// covers reports whether the member stands for id.
func (r *Roles) covers(m Member, id Identity) bool {
	if name, ok := m.Group(); ok {
		return r.groups[name][id]
	}
	if Identity(m) == Anonymous {
		// Anyone may do what anonymous may: signing in never takes a
		// right away.
		return r.allowAnonymous
	}
	return Identity(m) == id
}

// May decides whether id may do perm to the job of a project with the
// given grants; job is the job's name without the project, or "" for the
// project as a whole, which only a grant without Jobs covers. It is the
// one decision the API and the console ask.
func (r *Roles) May(id Identity, perm Permission, grants []RoleGrant, job string) bool {
	if r.Administrator(id) {
		return true
	}
	if id == Local {
		return false // Local outside the single-user mode is no one
	}
	for _, g := range grants {
		if !g.Role.Has(perm) {
			continue
		}
		if len(g.Jobs) > 0 && (job == "" || !slices.Contains(g.Jobs, job)) {
			continue
		}
		for _, m := range g.Members {
			if r.covers(m, id) {
				return true
			}
		}
	}
	return false
}

// Sees reports whether id may see that the project exists: it may read
// the whole project or some of its jobs. A project it does not see does
// not exist for it.
func (r *Roles) Sees(id Identity, grants []RoleGrant) bool {
	if r.May(id, Read, grants, "") {
		return true
	}
	for _, g := range grants {
		for _, job := range g.Jobs {
			if r.May(id, Read, grants, job) {
				return true
			}
		}
	}
	return false
}

// ReadableJobs returns the names of the only jobs id may read in a project
// with the given grants, and all true when it may read every job (then
// jobs is nil).
func (r *Roles) ReadableJobs(id Identity, grants []RoleGrant) (jobs []string, all bool) {
	if r.May(id, Read, grants, "") {
		return nil, true
	}
	for _, g := range grants {
		for _, job := range g.Jobs {
			if !slices.Contains(jobs, job) && r.May(id, Read, grants, job) {
				jobs = append(jobs, job)
			}
		}
	}
	slices.Sort(jobs)
	return jobs, false
}
