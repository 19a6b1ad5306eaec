package access

import "testing"

func TestParseIdentity(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"user:alice@example.com", "user:alice@example.com", true},
		{"user:Alice@Example.COM", "user:alice@example.com", true},
		{"serviceAccount:ci@proj.iam.gserviceaccount.com", "serviceAccount:ci@proj.iam.gserviceaccount.com", true},
		{"anonymous", "anonymous", true},
		{"local", "local", true},
		{"alice@example.com", "", false},
		{"group:admins", "", false},
		{"user:", "", false},
		{"user:not an email", "", false},
		{"user:Alice <alice@example.com>", "", false},
		{"serviceaccount:ci@p.iam.gserviceaccount.com", "", false},
	} {
		got, err := ParseIdentity(tc.in)
		if (err == nil) != tc.ok || string(got) != tc.want {
			t.Errorf("ParseIdentity(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	if id := User("Bob@Example.com"); id != "user:bob@example.com" || id.Kind() != KindUser || id.Email() != "bob@example.com" {
		t.Errorf("User: %q kind %q email %q", id, id.Kind(), id.Email())
	}
	if Anonymous.Kind() != "anonymous" || Anonymous.Email() != "" {
		t.Errorf("Anonymous: kind %q email %q", Anonymous.Kind(), Anonymous.Email())
	}
}
