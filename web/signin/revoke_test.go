package signin_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/internal/emulator/emulatortest"
	"github.com/sundial-cron/sundial/web/signin"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// testRevocations is what every Revocations must do: an id revoked is
// seen as revoked, by another handle on the same list too (another
// instance), and other ids are not.
func testRevocations(t *testing.T, list, other signin.Revocations) {
	t.Helper()
	ctx := context.Background()
	for _, id := range []string{"session:a", "state:a"} {
		if revoked, err := list.Revoked(ctx, id); err != nil || revoked {
			t.Fatalf("Revoked(%s) before Revoke = %t, %v", id, revoked, err)
		}
	}
	if err := list.Revoke(ctx, "session:a", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := list.Revoke(ctx, "session:a", t0.Add(time.Hour)); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	for name, l := range map[string]signin.Revocations{"the same handle": list, "another instance": other} {
		if revoked, err := l.Revoked(ctx, "session:a"); err != nil || !revoked {
			t.Errorf("%s: Revoked(session:a) = %t, %v; want true", name, revoked, err)
		}
		if revoked, err := l.Revoked(ctx, "state:a"); err != nil || revoked {
			t.Errorf("%s: Revoked(state:a) = %t, %v; want false", name, revoked, err)
		}
	}
}

func TestMemoryRevocations(t *testing.T) {
	t.Parallel()
	m := signin.NewMemory(func() time.Time { return t0 })
	testRevocations(t, m, m)
}

// datastoreList returns a function opening handles, each with its own
// client as each instance has, on one list in a namespace of its own.
func datastoreList(t *testing.T, name string) func() signin.Revocations {
	t.Helper()
	emulatortest.Datastore(t)
	ns := fmt.Sprintf("signin-%s-%d", name, os.Getpid())
	return func() signin.Revocations {
		client, err := datastore.NewClient(t.Context(), "sundial-test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		return signin.NewDatastore(client, ns)
	}
}

func TestDatastoreRevocationsAreSharedByInstances(t *testing.T) {
	t.Parallel()
	open := datastoreList(t, "shared")
	testRevocations(t, open(), open())
}

// In the cloud shape a sign-out served by one instance ends the session
// on every other: the cookie replayed to another instance is refused.
func TestSignOutOnOneInstanceEndsTheSessionOnAnother(t *testing.T) {
	t.Parallel()
	open := datastoreList(t, "signout")
	s := newSite(t, siteOptions{revocations: open()})
	other := s.instance(open())
	b := s.browser()
	b.signIn(s, "/")
	c := b.cookie(s, signin.SessionCookie)
	req := func() *http.Request {
		r, _ := http.NewRequest("GET", "/", nil)
		r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		return r
	}
	if id, err := other.Authenticate(req()); err != nil || id != access.User(alice) {
		t.Fatalf("another instance before sign-out: %q, %v; want %s", id, err, access.User(alice))
	}
	resp, err := b.client.Post(s.srv.URL+signin.SignOutPath, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if id, err := other.Authenticate(req()); err == nil {
		t.Errorf("another instance after sign-out on the first took the cookie as %q", id)
	}
}
