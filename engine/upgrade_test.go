package engine

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
)

// TestAnUpgradeAddingAPolicyFieldRedefinesNoJob: for every policy field,
// a job whose stored definition an older release wrote without that field
// (in version 0, and in the current version) is not redefined by the same
// config on this release, which reads the field as zero: its tick nonce and
// its stored definition stay as they were. Each field is also one key of
// the stored policy, left out while zero, so a release that adds a field
// changes no stored definition's bytes.
func TestAnUpgradeAddingAPolicyFieldRedefinesNoJob(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sundial.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	e := New(st, dropQueue{}, map[string]targets.Target{"url_fetch": noop.Target{}}, Options{Now: func() time.Time { return now }})

	v0, err := os.ReadFile(filepath.Join("testdata", "definition", "v0-full.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decodeDefinition(v0); err != nil || !got.Equal(&goldenFullDefinition) {
		t.Fatalf("v0-full.json reads as %+v (%v): not the definition this test starts from", got, err)
	}
	// The fields added after version 0, which v0-full.json cannot hold.
	latest := goldenFullDefinition
	latest.Policy.MaxRuns = 7
	full := reflect.ValueOf(latest.Policy)
	for i := range full.NumField() {
		field := full.Type().Field(i).Name
		t.Run(field, func(t *testing.T) {
			// The config as this release reads it: the field the older
			// release did not have is zero.
			without := func(base Definition) Definition {
				reflect.ValueOf(&base.Policy).Elem().Field(i).SetZero()
				return base
			}
			def := without(latest)

			// The key the current version stores the field under: one, and
			// none while the field is zero.
			var only Definition
			reflect.ValueOf(&only.Policy).Elem().Field(i).Set(full.Field(i))
			keys := policyKeys(t, mustEncode(t, only))
			if len(keys) != 1 {
				t.Fatalf("the field alone encodes to policy keys %v, want one", keys)
			}
			if slices.Contains(policyKeys(t, mustEncode(t, def)), keys[0]) {
				t.Fatalf("key %s is stored while the field is zero: adding a field would change every stored definition", keys[0])
			}
			// A field added after version 0 has no key in v0-full.json.
			olderV0 := v0
			if !reflect.ValueOf(goldenFullDefinition.Policy).Field(i).IsZero() {
				olderV0 = withoutPolicyKey(t, v0, field)
			}
			for version, c := range map[string]struct {
				older []byte
				def   Definition
			}{
				"v0": {olderV0, without(goldenFullDefinition)},
				"v1": {withoutPolicyKey(t, mustEncode(t, latest), keys[0]), def},
			} {
				older, def := c.older, c.def
				id := "p/" + field + "-" + version
				if err := e.Define(ctx, id, def); err != nil {
					t.Fatal(err)
				}
				// What the older release left in the store: the job as
				// the file holds it (a transaction may hand back the
				// engine's memo of its state instead of the bytes).
				job, err := st.Job(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				job.Definition = older
				if _, err := st.Update(ctx, id, func(tx store.Tx) error { return tx.PutJob(job) }); err != nil {
					t.Fatal(err)
				}
				before, err := st.Job(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if err := e.Define(ctx, id, def); err != nil {
					t.Fatal(err)
				}
				after, err := st.Job(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				mb, _ := State(before)
				ma, err := State(after)
				if err != nil {
					t.Fatal(err)
				}
				if mb.TickNonce == 0 || ma.TickNonce != mb.TickNonce || string(after.Definition) != string(older) {
					t.Errorf("%s: the same config redefined a job an older release stored as %s: tick nonce %d -> %d, definition now %s",
						version, older, mb.TickNonce, ma.TickNonce, after.Definition)
				}
			}
		})
	}
}

func mustEncode(t *testing.T, def Definition) []byte {
	t.Helper()
	b, err := encodeDefinition(def)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// policyKeys returns the keys of an encoded definition's policy.
func policyKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var d struct{ Policy map[string]json.RawMessage }
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(d.Policy))
}

// withoutPolicyKey returns an encoded definition without one key of its
// policy, as a release without that field wrote it.
func withoutPolicyKey(t *testing.T, b []byte, key string) []byte {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	p, _ := d["policy"].(map[string]any)
	if _, ok := p[key]; !ok {
		t.Fatalf("%s has no policy key %s", b, key)
	}
	delete(p, key)
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
