package datastore

import (
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/store"
)

// Kinds. A Job is the root of its entity group; its Invocations and the
// Definitions they run under are its children, so every transaction on a
// job stays inside one group.
const (
	kindJob        = "Job"
	kindInvocation = "Invocation"
	kindDefinition = "Definition"
	// kindProject is a project's record, a root entity of its own.
	kindProject = "Project"
)

// maxBlobs bounds the bytes an entity's blobs may hold together. Datastore
// refuses entities over 1 MiB with an opaque error; the headroom is for the
// key and the other properties, so the refusal names the field instead.
const maxBlobs = 1<<20 - 16<<10

func (s *Store) jobKey(id string) *datastore.Key {
	k := datastore.NameKey(kindJob, id, nil)
	k.Namespace = s.opts.Namespace
	return k
}

func (s *Store) invocationKey(jobID, id string) *datastore.Key {
	k := datastore.NameKey(kindInvocation, id, s.jobKey(jobID))
	k.Namespace = s.opts.Namespace
	return k
}

func (s *Store) projectKey(id string) *datastore.Key {
	k := datastore.NameKey(kindProject, id, nil)
	k.Namespace = s.opts.Namespace
	return k
}

// definitionKey names a definition by its store.DefinitionHash.
func (s *Store) definitionKey(jobID, hash string) *datastore.Key {
	k := datastore.NameKey(kindDefinition, hash, s.jobKey(jobID))
	k.Namespace = s.opts.Namespace
	return k
}

// jobEntity is a Job as Datastore stores it. Only the properties that
// queries filter or sort on are indexed: every indexed property costs index
// writes on each put. WatchdogTimerTs is left out while it is zero, so the
// watchdog's index holds only jobs that wait for something.
type jobEntity struct{ store.JobRecord }

func (e *jobEntity) Save() ([]datastore.Property, error) {
	j := &e.JobRecord
	if n := len(j.Definition) + len(j.EncodedState); n > maxBlobs {
		return nil, fmt.Errorf("datastore: job %s: Definition and Machine hold %d bytes, more than the %d an entity may", j.ID, n, maxBlobs)
	}
	props := []datastore.Property{
		{Name: "Project", Value: j.Project},
		{Name: "State", Value: j.State, NoIndex: true},
		{Name: "Definition", Value: j.Definition, NoIndex: true},
		{Name: "Machine", Value: j.EncodedState, NoIndex: true},
	}
	if !j.WatchdogTimerTs.IsZero() {
		props = append(props, datastore.Property{Name: "WatchdogTimerTs", Value: j.WatchdogTimerTs})
	}
	return props, nil
}

func (e *jobEntity) Load(props []datastore.Property) error {
	j := &e.JobRecord
	for _, p := range props {
		var ok bool
		switch p.Name {
		case "Project":
			j.Project, ok = p.Value.(string)
		case "State":
			j.State, ok = p.Value.(string)
		case "Definition":
			j.Definition, ok = bytesOf(p.Value)
		case "Machine":
			j.EncodedState, ok = bytesOf(p.Value)
		case "WatchdogTimerTs":
			j.WatchdogTimerTs, ok = p.Value.(time.Time)
		default:
			ok = true // a property a newer version added
		}
		if !ok {
			return fmt.Errorf("datastore: job %s: property %s holds %T", j.ID, p.Name, p.Value)
		}
	}
	return nil
}

// LoadKey takes the job's id from its key, which is where it is stored.
func (e *jobEntity) LoadKey(k *datastore.Key) error {
	e.ID = k.Name
	return nil
}

// invocationEntity is an Invocation as Datastore stores it. Occurrence is
// indexed for the listings, which sort on it; Project and Class for the
// listing of a project's invocations; and Expiry, on finished records
// only, for retention's queries: an unfinished invocation is in no index
// retention reads, so it cannot be found to be deleted.
type invocationEntity struct{ store.InvocationRecord }

func (e *invocationEntity) Save() ([]datastore.Property, error) {
	v := &e.InvocationRecord
	if n := len(v.Definition) + len(v.Log); n > maxBlobs {
		return nil, fmt.Errorf("datastore: invocation %s of %s: Definition and Log hold %d bytes, more than the %d an entity may", v.ID, v.JobID, n, maxBlobs)
	}
	noindex := func(name string, value any) datastore.Property {
		return datastore.Property{Name: name, Value: value, NoIndex: true}
	}
	props := []datastore.Property{
		{Name: "Occurrence", Value: v.Occurrence},
		noindex("Status", v.Status),
		noindex("Attempt", int64(v.Attempt)),
		noindex("Manual", v.Manual),
		noindex("Created", v.Created),
		noindex("Started", v.Started),
		noindex("Ended", v.Ended),
		noindex("Message", v.Message),
		noindex("Reason", v.Reason),
		noindex("Count", int64(v.Count)),
		noindex("Last", v.Last),
	}
	// A record names its definition; only one an older release wrote
	// holds the bytes.
	if v.Definition != nil {
		props = append(props, noindex("Definition", v.Definition))
	}
	props = append(props, noindex("Log", v.Log))
	if v.DefinitionHash != "" {
		props = append(props, noindex("DefinitionHash", v.DefinitionHash))
	}
	// Only manual occurrences have one: a scheduled record keeps the
	// properties it always had.
	if v.TriggeredBy != "" {
		props = append(props, noindex("TriggeredBy", v.TriggeredBy))
	}
	// Likewise only a backfilled occurrence's record has it.
	if v.Backfill {
		props = append(props, noindex("Backfill", true))
	}
	if class := expiryClass(v.Status); class != "" {
		props = append(props, datastore.Property{Name: "Expiry", Value: class})
	}
	return append(props, listingProperties(v.JobID, v.Status)...), nil
}

// listingProperties are what the listing of a project's invocations
// (Store.ProjectInvocations) finds a record by: its job's project and its
// status's class, both derived, and both indexed.
func listingProperties(jobID, status string) []datastore.Property {
	return []datastore.Property{
		{Name: "Project", Value: jobid.Split(jobID).Project},
		{Name: "Class", Value: store.StatusClass(status)},
	}
}

func (e *invocationEntity) Load(props []datastore.Property) error {
	v := &e.InvocationRecord
	for _, p := range props {
		var ok bool
		var n int64
		switch p.Name {
		case "Occurrence":
			v.Occurrence, ok = p.Value.(time.Time)
		case "Status":
			v.Status, ok = p.Value.(string)
		case "Attempt":
			n, ok = p.Value.(int64)
			v.Attempt = int(n)
		case "Manual":
			v.Manual, ok = p.Value.(bool)
		case "Created":
			v.Created, ok = p.Value.(time.Time)
		case "Started":
			v.Started, ok = p.Value.(time.Time)
		case "Ended":
			v.Ended, ok = p.Value.(time.Time)
		case "Message":
			v.Message, ok = p.Value.(string)
		case "Reason":
			v.Reason, ok = p.Value.(string)
		case "Count":
			n, ok = p.Value.(int64)
			v.Count = int(n)
		case "Last":
			v.Last, ok = p.Value.(time.Time)
		case "Definition":
			v.Definition, ok = bytesOf(p.Value)
		case "Log":
			v.Log, ok = bytesOf(p.Value)
		case "DefinitionHash":
			v.DefinitionHash, ok = p.Value.(string)
		case "TriggeredBy":
			v.TriggeredBy, ok = p.Value.(string)
		case "Backfill":
			v.Backfill, ok = p.Value.(bool)
		case "Expiry", "Class":
			ok = true // derived from Status
		case "Project":
			ok = true // derived from the key
		default:
			ok = true
		}
		if !ok {
			return fmt.Errorf("datastore: invocation %s of %s: property %s holds %T", v.ID, v.JobID, p.Name, p.Value)
		}
	}
	return nil
}

// LoadKey takes the invocation's id and its job's from its key.
func (e *invocationEntity) LoadKey(k *datastore.Key) error {
	e.ID = k.Name
	if k.Parent != nil {
		e.JobID = k.Parent.Name
	}
	return nil
}

// expiryClass is the Expiry property of a record with this status: the
// retention class of a finished one, "" (no property) for an unfinished one.
func expiryClass(status string) string {
	switch {
	case !store.Finished(status):
		return ""
	case store.Failure(status):
		return "failed"
	}
	return "done"
}

// definitionEntity is one of a job's definitions, keyed by its hash.
type definitionEntity struct{ encoded []byte }

func (e *definitionEntity) Save() ([]datastore.Property, error) {
	if len(e.encoded) > maxBlobs {
		return nil, fmt.Errorf("datastore: a definition of %d bytes, more than the %d an entity may hold", len(e.encoded), maxBlobs)
	}
	return []datastore.Property{{Name: "Definition", Value: e.encoded, NoIndex: true}}, nil
}

func (e *definitionEntity) Load(props []datastore.Property) error {
	for _, p := range props {
		if p.Name != "Definition" {
			continue // a property a newer version added
		}
		var ok bool
		if e.encoded, ok = bytesOf(p.Value); !ok {
			return fmt.Errorf("datastore: definition: property Definition holds %T", p.Value)
		}
	}
	return nil
}

// projectEntity is a project's record; its blob is the engine's.
type projectEntity struct{ store.ProjectRecord }

func (e *projectEntity) Save() ([]datastore.Property, error) {
	if len(e.Encoded) > maxBlobs {
		return nil, fmt.Errorf("datastore: project %s: Encoded holds %d bytes, more than the %d an entity may", e.ID, len(e.Encoded), maxBlobs)
	}
	return []datastore.Property{{Name: "Encoded", Value: e.Encoded, NoIndex: true}}, nil
}

func (e *projectEntity) Load(props []datastore.Property) error {
	for _, p := range props {
		if p.Name != "Encoded" {
			continue // a property a newer version added
		}
		var ok bool
		if e.Encoded, ok = bytesOf(p.Value); !ok {
			return fmt.Errorf("datastore: project %s: property Encoded holds %T", e.ID, p.Value)
		}
	}
	return nil
}

// LoadKey takes the project's id from its key.
func (e *projectEntity) LoadKey(k *datastore.Key) error {
	e.ID = k.Name
	return nil
}

// bytesOf reads a blob property; an empty blob may come back as nil.
func bytesOf(v any) ([]byte, bool) {
	if v == nil {
		return nil, true
	}
	b, ok := v.([]byte)
	return b, ok
}
