package signin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"cloud.google.com/go/datastore"
)

// revocationKind is the Datastore kind of a revocation entry.
const revocationKind = "SundialRevocation"

// revocation is one entry: the id's hash is its key name; Until is when
// it may go (a Datastore TTL policy on SundialRevocation.Until deletes it
// then).
type revocation struct {
	Until time.Time `datastore:"Until"`
}

// Datastore is a Revocations in Cloud Datastore, shared by every instance
// of the cloud shape: a sign-out on one instance ends the session on all
// of them at once. Each check is one lookup by key, strongly consistent.
type Datastore struct {
	client    *datastore.Client
	namespace string
}

// NewDatastore returns the revocation list in the client's database and
// namespace.
func NewDatastore(client *datastore.Client, namespace string) *Datastore {
	return &Datastore{client: client, namespace: namespace}
}

// key names an entry by the id's SHA-256, so the database holds no
// session id a reader could present.
func (d *Datastore) key(id string) *datastore.Key {
	sum := sha256.Sum256([]byte(id))
	k := datastore.NameKey(revocationKind, hex.EncodeToString(sum[:]), nil)
	k.Namespace = d.namespace
	return k
}

// Revoke implements Revocations.
func (d *Datastore) Revoke(ctx context.Context, id string, until time.Time) error {
	_, err := d.client.Put(ctx, d.key(id), &revocation{Until: until.UTC()})
	return err
}

// Revoked implements Revocations. An entry past its Until that the TTL
// policy has not deleted yet still counts: what it revoked has expired
// anyway.
func (d *Datastore) Revoked(ctx context.Context, id string) (bool, error) {
	var r revocation
	err := d.client.Get(ctx, d.key(id), &r)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, datastore.ErrNoSuchEntity):
		return false, nil
	}
	return false, err
}
