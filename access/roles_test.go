package access

import (
	"fmt"
	"testing"
)

var (
	alice  = User("alice@example.com")
	bob    = User("bob@example.com")
	carol  = User("carol@example.com")
	ci     = ServiceAccount("ci@proj.iam.gserviceaccount.com")
	admin  = User("root@example.com")
	oncall = User("oncall@example.com")
)

func mustRoles(t *testing.T, s Settings) *Roles {
	t.Helper()
	p, err := NewRoles(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// grants is a project's: alice owns it, ci triggers it, the sre group
// reads it, bob reads only job "nightly", anonymous reads job "status".
var grants = []RoleGrant{
	{Role: Owner, Members: []Member{Member(alice)}},
	{Role: Triggerer, Members: []Member{Member(ci)}},
	{Role: Reader, Members: []Member{"group:sre"}},
	{Role: Reader, Members: []Member{Member(bob)}, Jobs: []string{"nightly"}},
	{Role: Reader, Members: []Member{Member(Anonymous)}, Jobs: []string{"status"}},
}

func TestMayDecidesByRoleJobAndSettings(t *testing.T) {
	p := mustRoles(t, Settings{
		Administrators: []Member{Member(admin), "group:admins"},
		Groups:         map[string][]Identity{"sre": {carol}, "admins": {oncall}},
	})
	for _, tc := range []struct {
		id   Identity
		perm Permission
		job  string
		want bool
	}{
		{alice, Read, "", true},
		{alice, Steer, "nightly", true},
		{ci, Trigger, "nightly", true},
		{ci, Steer, "nightly", false},
		{carol, Read, "nightly", true}, // through group sre
		{carol, Trigger, "nightly", false},
		{bob, Read, "nightly", true},
		{bob, Read, "other", false},
		{bob, Read, "", false}, // a job-restricted grant is not the whole project
		{Anonymous, Read, "status", false},
		{admin, Steer, "anything", true},
		{oncall, Steer, "", true}, // an administrator through group admins
		{Local, Read, "", false},  // not the single-user mode
		{User("mallory@example.com"), Read, "", false},
		{"", Read, "", false},
	} {
		if got := p.May(tc.id, tc.perm, grants, tc.job); got != tc.want {
			t.Errorf("May(%s, %s, job %q) = %v; want %v", tc.id, tc.perm, tc.job, got, tc.want)
		}
	}
}

func TestAnonymousGrantsNeedTheOperatorsConsent(t *testing.T) {
	public := []RoleGrant{{Role: Reader, Members: []Member{Member(Anonymous)}}}
	closed := mustRoles(t, Settings{})
	open := mustRoles(t, Settings{AllowAnonymous: true})
	if closed.May(Anonymous, Read, public, "") || closed.Sees(alice, public) {
		t.Error("a grant to anonymous is honoured without Settings.AllowAnonymous")
	}
	if !open.May(Anonymous, Read, public, "") || !open.May(alice, Read, public, "") {
		t.Error("with AllowAnonymous, a grant to anonymous is not honoured for anonymous and signed-in callers")
	}
	if open.May(Anonymous, Trigger, public, "") {
		t.Error("a reader grant to anonymous lets anonymous trigger")
	}
}

func TestLocalIsAdministratorOnlyInTheSingleUserMode(t *testing.T) {
	single := mustRoles(t, Settings{LocalAdministrator: true})
	signedIn := mustRoles(t, Settings{})
	if !single.May(Local, Steer, nil, "") {
		t.Error("single-user mode: Local may not steer a project with no grants")
	}
	if signedIn.May(Local, Read, []RoleGrant{{Role: Owner, Members: []Member{"anonymous"}}}, "") || signedIn.Administrator(Local) {
		t.Error("with sign-in configured, Local has a permission")
	}
}

func TestSeesAndReadableJobs(t *testing.T) {
	p := mustRoles(t, Settings{Administrators: []Member{Member(admin)}, Groups: map[string][]Identity{"sre": {carol}}})
	for _, tc := range []struct {
		id   Identity
		sees bool
		jobs []string
		all  bool
	}{
		{alice, true, nil, true},
		{carol, true, nil, true},
		{bob, true, []string{"nightly"}, false},
		{User("mallory@example.com"), false, nil, false},
		{Anonymous, false, nil, false},
		{admin, true, nil, true},
	} {
		jobs, all := p.ReadableJobs(tc.id, grants)
		if got := p.Sees(tc.id, grants); got != tc.sees || all != tc.all || fmt.Sprint(jobs) != fmt.Sprint(tc.jobs) {
			t.Errorf("%s: Sees %v, ReadableJobs %v %v; want %v, %v %v", tc.id, got, jobs, all, tc.sees, tc.jobs, tc.all)
		}
	}
	if p.Sees(alice, nil) || !p.Sees(admin, nil) {
		t.Error("a project with no grants is not visible to administrators only")
	}
}

// TestRolesAreNested checks, for every identity, role, permission and job,
// that a stronger role never allows less than a weaker one, and that a
// role allows exactly its permissions.
func TestRolesAreNested(t *testing.T) {
	p := mustRoles(t, Settings{})
	perms := []Permission{Read, Trigger, Steer}
	for _, jobs := range [][]string{nil, {"a"}} {
		for _, job := range []string{"", "a", "b"} {
			for _, perm := range perms {
				prev := false
				for _, r := range AllRoles {
					got := p.May(alice, perm, []RoleGrant{{Role: r, Members: []Member{Member(alice)}, Jobs: jobs}}, job)
					if prev && !got {
						t.Errorf("%s allows %s on job %q (grant jobs %v) but the stronger %s does not", AllRoles[0], perm, job, jobs, r)
					}
					covered := len(jobs) == 0 || job == "a"
					if want := r.Has(perm) && covered; got != want {
						t.Errorf("role %s, grant jobs %v: May(%s, job %q) = %v; want %v", r, jobs, perm, job, got, want)
					}
					prev = got
				}
			}
		}
	}
	if !Owner.Has(Steer) || Triggerer.Has(Steer) || Reader.Has(Trigger) || !Reader.Has(Read) {
		t.Error("the roles' permissions are not reader: read, triggerer: +trigger, owner: +steer")
	}
}

func TestParseMember(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"user:alice@example.com", true},
		{"serviceAccount:ci@p.iam.gserviceaccount.com", true},
		{"group:sre-oncall", true},
		{"anonymous", true},
		{"local", false},
		{"group:", false},
		{"group:Bad Name", false},
		{"alice@example.com", false},
		{"role:owner", false},
	} {
		if _, err := ParseMember(tc.in); (err == nil) != tc.ok {
			t.Errorf("ParseMember(%q): %v; want ok %v", tc.in, err, tc.ok)
		}
	}
	if _, err := ParseRole("admin"); err == nil {
		t.Error(`ParseRole("admin") succeeded; administrators come from the server's settings only`)
	}
}

func TestNewRolesRefusesBadSettings(t *testing.T) {
	for name, s := range map[string]Settings{
		"undefined admin group":   {Administrators: []Member{"group:nobody"}},
		"anonymous administrator": {Administrators: []Member{"anonymous"}},
		"local administrator":     {Administrators: []Member{"local"}},
		"malformed administrator": {Administrators: []Member{"alice"}},
		"upper-case email":        {Administrators: []Member{"user:Alice@example.com"}},
		"anonymous in a group":    {Groups: map[string][]Identity{"g": {Anonymous}}},
		"bad group name":          {Groups: map[string][]Identity{"G G": {alice}}},
	} {
		if _, err := NewRoles(s); err == nil {
			t.Errorf("%s: NewRoles accepted %+v", name, s)
		}
	}
}
