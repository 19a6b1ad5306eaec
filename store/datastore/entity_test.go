package datastore

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/store"
)

var createGoldens = flag.Bool("create-goldens", false, "write the entity golden files that do not exist yet (never overwrites one)")

// The entities' property names and types are the format every job and
// invocation in Datastore is in (the blobs in them carry their own
// versions, pinned in engine/testdata). testdata/entity holds the
// properties Save gives known entities. job.json and invocation.json are
// also what release 313afd2 stored: Save still gives an invocation that
// holds its definition's bytes, as that release wrote every one, the same
// properties. invocation-named.json is one that names its definition, and
// definition.json the Definition entity that holds it. A finished record
// has gained Expiry, the class retention finds it by: the -expiry goldens
// are what Save gave since, and the ones before still load. Every record
// has since gained Project and Class, which the listing of a project's
// invocations finds it by: the -listing goldens are what Save gives now.

var goldenAt = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

var goldenJob = store.JobRecord{
	ID: "proj/job", Project: "proj", State: "SCHEDULED", WatchdogTimerTs: goldenAt.Add(5*time.Minute + 30*time.Second),
	Definition:   []byte(`{"v":1,"schedule":"*/5 * * * *","target":"noop"}`),
	EncodedState: []byte(`{"v":1,"state":"SCHEDULED","tick_nonce":7}`),
}

var goldenInvocation = store.InvocationRecord{
	JobID: "proj/job", ID: "20260302T100000Z", Occurrence: goldenAt, Status: "FAILED", Attempt: 2, Manual: true,
	Created: goldenAt.Add(time.Second), Started: goldenAt.Add(time.Minute), Ended: goldenAt.Add(2 * time.Minute),
	Message: "exit status 1", Reason: "overrun", Count: 3, Last: goldenAt.Add(10 * time.Minute),
	Definition: []byte(`{"v":1,"schedule":"*/5 * * * *","target":"noop"}`), Log: []byte("attempt 1 FAILED\n"),
}

var goldenNamedInvocation = store.InvocationRecord{
	JobID: "proj/job", ID: "20260302T100500Z", Occurrence: goldenAt.Add(5 * time.Minute), Status: "SUCCEEDED", Attempt: 1,
	Created: goldenAt.Add(5*time.Minute + time.Second), Started: goldenAt.Add(5*time.Minute + 2*time.Second), Ended: goldenAt.Add(6 * time.Minute),
	Message: "ok", DefinitionHash: store.DefinitionHash(goldenJob.Definition), Log: []byte("attempt 1 SUCCEEDED\n"),
}

// goldenManualInvocation is one a person asked for: the only kind with
// TriggeredBy.
var goldenManualInvocation = store.InvocationRecord{
	JobID: "proj/job", ID: "manual-1", Occurrence: goldenAt.Add(7 * time.Minute), Status: "QUEUED", Attempt: 1, Manual: true,
	TriggeredBy: "user:alice@example.com", Created: goldenAt.Add(7 * time.Minute),
	DefinitionHash: store.DefinitionHash(goldenJob.Definition), Log: []byte("attempt 1 QUEUED\n"),
}

// goldenBackfillInvocation is a scheduled occurrence a backfill ran: the
// only kind with Backfill.
var goldenBackfillInvocation = store.InvocationRecord{
	JobID: "proj/job", ID: "20260302T080000Z", Occurrence: goldenAt.Add(-2 * time.Hour), Status: "QUEUED", Attempt: 1, Backfill: true,
	Created: goldenAt, DefinitionHash: store.DefinitionHash(goldenJob.Definition), Log: []byte("attempt 1 QUEUED\n"),
}

var goldenProject = store.ProjectRecord{ID: "proj", Encoded: []byte(`{"v":1,"revision":"abc","grants":[{"role":"owner","members":["user:alice@example.com"]}]}`)}

// goldenProperty is a datastore.Property as a golden file spells it.
type goldenProperty struct {
	Name    string     `json:"name"`
	NoIndex bool       `json:"noindex,omitempty"`
	String  *string    `json:"string,omitempty"`
	Int     *int64     `json:"int,omitempty"`
	Bool    *bool      `json:"bool,omitempty"`
	Time    *time.Time `json:"time,omitempty"`
	Bytes   []byte     `json:"bytes,omitempty"`
}

func toGolden(props []datastore.Property) ([]goldenProperty, error) {
	var out []goldenProperty
	for _, p := range props {
		g := goldenProperty{Name: p.Name, NoIndex: p.NoIndex}
		switch v := p.Value.(type) {
		case string:
			g.String = &v
		case int64:
			g.Int = &v
		case bool:
			g.Bool = &v
		case time.Time:
			g.Time = &v
		case []byte:
			g.Bytes = v
		default:
			return nil, fmt.Errorf("property %s holds %T", p.Name, p.Value)
		}
		out = append(out, g)
	}
	return out, nil
}

func fromGolden(gs []goldenProperty) []datastore.Property {
	var out []datastore.Property
	for _, g := range gs {
		p := datastore.Property{Name: g.Name, NoIndex: g.NoIndex}
		switch {
		case g.String != nil:
			p.Value = *g.String
		case g.Int != nil:
			p.Value = *g.Int
		case g.Bool != nil:
			p.Value = *g.Bool
		case g.Time != nil:
			p.Value = *g.Time
		default:
			p.Value = g.Bytes
		}
		out = append(out, p)
	}
	return out
}

// TestEntityGoldens: the properties Save gives a job, invocations and a
// definition are their goldens, and the goldens' properties (with one a
// later release might add) load as the entity they came from.
func TestEntityGoldens(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		file string
		// was are goldens of earlier Saves, which must still load.
		was  []string
		save func() ([]datastore.Property, error)
		load func([]datastore.Property) (any, error)
		want any
	}{
		{"job.json", nil, (&jobEntity{goldenJob}).Save, func(ps []datastore.Property) (any, error) {
			e := jobEntity{store.JobRecord{ID: goldenJob.ID}}
			return e.JobRecord, e.Load(ps)
		}, goldenJob},
		{"invocation-listing.json", []string{"invocation-expiry.json", "invocation.json"}, (&invocationEntity{goldenInvocation}).Save, func(ps []datastore.Property) (any, error) {
			e := invocationEntity{store.InvocationRecord{JobID: goldenInvocation.JobID, ID: goldenInvocation.ID}}
			err := e.Load(ps)
			return e.InvocationRecord, err
		}, goldenInvocation},
		{"invocation-named-listing.json", []string{"invocation-named-expiry.json", "invocation-named.json"}, (&invocationEntity{goldenNamedInvocation}).Save, func(ps []datastore.Property) (any, error) {
			e := invocationEntity{store.InvocationRecord{JobID: goldenNamedInvocation.JobID, ID: goldenNamedInvocation.ID}}
			err := e.Load(ps)
			return e.InvocationRecord, err
		}, goldenNamedInvocation},
		{"invocation-manual-listing.json", []string{"invocation-manual.json"}, (&invocationEntity{goldenManualInvocation}).Save, func(ps []datastore.Property) (any, error) {
			e := invocationEntity{store.InvocationRecord{JobID: goldenManualInvocation.JobID, ID: goldenManualInvocation.ID}}
			err := e.Load(ps)
			return e.InvocationRecord, err
		}, goldenManualInvocation},
		{"invocation-backfill-listing.json", []string{"invocation-backfill.json"}, (&invocationEntity{goldenBackfillInvocation}).Save, func(ps []datastore.Property) (any, error) {
			e := invocationEntity{store.InvocationRecord{JobID: goldenBackfillInvocation.JobID, ID: goldenBackfillInvocation.ID}}
			err := e.Load(ps)
			return e.InvocationRecord, err
		}, goldenBackfillInvocation},
		{"project.json", nil, (&projectEntity{goldenProject}).Save, func(ps []datastore.Property) (any, error) {
			e := projectEntity{store.ProjectRecord{ID: goldenProject.ID}}
			err := e.Load(ps)
			return e.ProjectRecord, err
		}, goldenProject},
		{"definition.json", nil, (&definitionEntity{goldenJob.Definition}).Save, func(ps []datastore.Property) (any, error) {
			var e definitionEntity
			err := e.Load(ps)
			return e, err
		}, definitionEntity{goldenJob.Definition}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "entity", tt.file)
			props, err := tt.save()
			if err != nil {
				t.Fatal(err)
			}
			gs, err := toGolden(props)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := json.MarshalIndent(gs, "", "\t")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); os.IsNotExist(err) && *createGoldens {
				if err := os.WriteFile(path, enc, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(enc) != string(b) {
				t.Errorf("Save's properties changed:\n got %s\nwant %s\nEvery stored entity has the old ones: "+
					"keep loading them (Load), and add goldens for the new form.", enc, b)
			}
			paths := []string{path}
			for _, was := range tt.was {
				paths = append(paths, filepath.Join("testdata", "entity", was))
			}
			for _, path := range paths {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var stored []goldenProperty
				if err := json.Unmarshal(b, &stored); err != nil {
					t.Fatal(err)
				}
				ps := append(fromGolden(stored), datastore.Property{Name: "AddedLater", Value: int64(1), NoIndex: true})
				got, err := tt.load(ps)
				if err != nil {
					t.Fatalf("loading %s: %v", path, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s loads as\n%+v\nwant\n%+v", path, got, tt.want)
				}
			}
		})
	}
}

// TestCursorsOfThePreviousReleaseAreRead: a cursor of release 313afd2
// (the listing's letter and Datastore's cursor, no version mark) reads as
// the same position as this release's, so someone paging through an
// upgrade gets the next page; each listing still refuses the other's.
func TestCursorsOfThePreviousReleaseAreRead(t *testing.T) {
	t.Parallel()
	const position = "CkESO2oMc35zdW5kaWFsLWRldnIrCxIDSm9iIghwcm9qL2pvYgwLEgpJbnZvY2F0aW9uIghtYW51YWwtMQwYACAA"
	want, err := datastore.DecodeCursor(position)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ prefix, v0, v1 string }{
		{"i", "i" + position, "1i" + position},
		{"j", "j" + position, "1j" + position},
	} {
		for _, c := range []string{tt.v0, tt.v1} {
			got, err := decodeCursor(tt.prefix, c)
			if err != nil || got.String() != want.String() {
				t.Errorf("decodeCursor(%q, %q) = %v, %v; want the position %s", tt.prefix, c, got, err, position)
			}
		}
		other := map[string]string{"i": "j", "j": "i"}[tt.prefix]
		if _, err := decodeCursor(other, tt.v1); err == nil {
			t.Errorf("a %s cursor was taken for a %s listing", tt.prefix, other)
		}
	}
}
