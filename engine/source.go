package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// sourceRecord is the id of the record that names the config source a
// database's projects come from. It is kept beside the projects' records
// (so every backend has it, in the same transactions) and no project can
// take its id: a project id starts with a letter or a digit.
const sourceRecord = "~config-source"

// storedSource is the source record's stored shape.
type storedSource struct {
	Version int       `json:"v"`
	Source  string    `json:"source"`
	Since   time.Time `json:"since"`
}

const storedSourceVersion = 1

// ErrOtherConfigSource is returned when a database's projects come from
// another config source than the caller's.
var ErrOtherConfigSource = errors.New("the database's projects come from another config source")

// ConfigSource is the config source a database's projects come from, as
// ClaimConfigSource recorded it, and since when; "" if none is recorded.
func (e *Engine) ConfigSource(ctx context.Context) (source string, since time.Time, err error) {
	rec, err := e.store.Project(ctx, sourceRecord)
	if errors.Is(err, store.ErrNotFound) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, err
	}
	s, err := decodeSource(rec.Encoded)
	return s.Source, s.Since, err
}

// ClaimConfigSource records source as the one the database's projects
// come from, where none is recorded (a new database, or one written
// before sources were recorded) or where moved says the configs moved
// there on purpose. A database claimed by another source is refused with
// ErrOtherConfigSource, naming it: two servers reading two config sources
// on one database would each remove the other's projects as gone from
// config, and each run the other's jobs.
func (e *Engine) ClaimConfigSource(ctx context.Context, source string, moved bool) error {
	return e.store.UpdateProject(ctx, sourceRecord, func(old *store.ProjectRecord) (*store.ProjectRecord, error) {
		if old != nil {
			s, err := decodeSource(old.Encoded)
			if err != nil {
				return nil, err
			}
			if s.Source == source {
				return nil, nil
			}
			if !moved {
				return nil, otherSource(s.Source, s.Since, source)
			}
		}
		b, err := json.Marshal(storedSource{Version: storedSourceVersion, Source: source, Since: e.opts.Now().UTC()})
		if err != nil {
			return nil, err
		}
		return &store.ProjectRecord{ID: sourceRecord, Encoded: b}, nil
	})
}

// CheckConfigSource returns ErrOtherConfigSource when the database's
// projects are recorded as another source's than source: a refresher
// asks before each pass, so that one that lost its claim to a server
// started with --config-moved changes nothing.
func (e *Engine) CheckConfigSource(ctx context.Context, source string) error {
	recorded, since, err := e.ConfigSource(ctx)
	if err != nil || recorded == "" || recorded == source {
		return err
	}
	return otherSource(recorded, since, source)
}

// otherSource is ErrOtherConfigSource, naming the source recorded and
// the caller's.
func otherSource(recorded string, since time.Time, source string) error {
	return fmt.Errorf("%w: %s, since %s; this one is %s", ErrOtherConfigSource, recorded, since.UTC().Format(time.RFC3339), source)
}

func decodeSource(b []byte) (storedSource, error) {
	var s storedSource
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("the config source record: %w", err)
	}
	if s.Version != storedSourceVersion {
		return s, fmt.Errorf("the config source record: version %d, want %d (a newer release wrote it)", s.Version, storedSourceVersion)
	}
	return s, nil
}
