package store_test

import (
	"testing"

	"github.com/sundial-cron/sundial/store"
)

// The Store skips storing a definition it knows it stored: it must know
// only the hash it was told of, for that job, and nothing else.
func TestStoredDefinitionsKnowOnlyWhatWasStored(t *testing.T) {
	t.Parallel()
	var d store.StoredDefinitions
	one, two := store.DefinitionHash([]byte(`{"v":1}`)), store.DefinitionHash([]byte(`{"v":2}`))
	if d.Stored("p/j", one) {
		t.Fatal("an empty map knows a definition")
	}
	d.Put("p/j", one)
	for _, tc := range []struct {
		job, hash string
		want      bool
	}{
		{"p/j", one, true},
		{"p/j", two, false},
		{"p/other", one, false},
		{"p/j", one[:10], false},
	} {
		if got := d.Stored(tc.job, tc.hash); got != tc.want {
			t.Errorf("Stored(%s, %s) = %v, want %v", tc.job, tc.hash, got, tc.want)
		}
	}
	d.Put("p/j", two)
	if d.Stored("p/j", one) || !d.Stored("p/j", two) {
		t.Error("a job's new definition did not replace its old one")
	}
	d.Put("p/j", "not a hash")
	if d.Stored("p/j", two) {
		t.Error("a job told of a hash the map cannot hold still answers for its old one")
	}
}
