package sqlite

import (
	"testing"

	"github.com/sundial-cron/sundial/store"
)

// The Store skips storing a definition it knows it stored: it must know
// only the hash it was told of, for that job, and nothing else.
func TestStoredDefinitionsKnowOnlyWhatWasStored(t *testing.T) {
	t.Parallel()
	var d storedDefinitions
	one, two := store.DefinitionHash([]byte(`{"v":1}`)), store.DefinitionHash([]byte(`{"v":2}`))
	if d.stored("p/j", one) {
		t.Fatal("an empty map knows a definition")
	}
	d.put("p/j", one)
	for _, tc := range []struct {
		job, hash string
		want      bool
	}{
		{"p/j", one, true},
		{"p/j", two, false},
		{"p/other", one, false},
		{"p/j", one[:10], false},
	} {
		if got := d.stored(tc.job, tc.hash); got != tc.want {
			t.Errorf("stored(%s, %s) = %v, want %v", tc.job, tc.hash, got, tc.want)
		}
	}
	d.put("p/j", two)
	if d.stored("p/j", one) || !d.stored("p/j", two) {
		t.Error("a job's new definition did not replace its old one")
	}
	d.put("p/j", "not a hash")
	if d.stored("p/j", two) {
		t.Error("a job told of a hash the map cannot hold still answers for its old one")
	}
}
