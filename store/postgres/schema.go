package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The schema is brought forward by numbered migrations, forward only,
// each a file of migrations/ applied once and recorded in
// sundial.schema_migrations. A small migrator of its own rather than a
// library's: what it must do is what store/sqlite's does (apply in order,
// refuse a database a newer release migrated, say what it would run), in
// one transaction under one transaction-scoped lock, which keeps it
// working behind PgBouncer in transaction mode; golang-migrate and goose
// take session locks or run outside one transaction, and would bring
// drivers and dependencies for a loop of forty lines.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one step of the schema.
type Migration struct {
	Version int
	Name    string // the file's name
	SQL     string
}

// migrations are this release's steps, in order; Version i+1 at index i.
var migrations = func() []Migration {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	slices.Sort(names)
	out := make([]Migration, len(names))
	for i, name := range names {
		base := path.Base(name)
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil || n != i+1 {
			panic(fmt.Sprintf("postgres: migration %s: want number %04d", base, i+1))
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			panic(err)
		}
		out[i] = Migration{Version: n, Name: base, SQL: string(b)}
	}
	return out
}()

// SchemaVersion is the version this release migrates to and reads.
func SchemaVersion() int { return len(migrations) }

// ErrNewerSchema is wrapped by the error Open and Migrate return for a
// database a newer release migrated: this release could misread it, so it
// refuses it whole and writes nothing to it.
var ErrNewerSchema = errors.New("migrated by a newer release of Sundial")

// migrationLock is the advisory lock key every release's Migrate takes.
const migrationLock = "sundial: schema migrations"

// Migrate brings the database's schema to SchemaVersion in one
// transaction, which holds an advisory lock so that instances starting
// together migrate once. With dryRun it returns the migrations it would
// apply and applies none. A database at a later version is refused.
func Migrate(ctx context.Context, pool *pgxpool.Pool, dryRun *[]Migration) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", migrationLock); err != nil {
			return err
		}
		v, err := schemaVersion(ctx, tx)
		if err != nil {
			return err
		}
		if v > len(migrations) {
			return fmt.Errorf("%w (schema version %d; this release reads versions up to %d): "+
				"run the newer release, or restore the backup taken before the upgrade to go back to this one (docs/upgrade.md)",
				ErrNewerSchema, v, len(migrations))
		}
		if dryRun != nil {
			*dryRun = slices.Clone(migrations[v:])
			return nil
		}
		if v == 0 {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS sundial;
				CREATE TABLE sundial.schema_migrations (
					version    integer PRIMARY KEY,
					name       text NOT NULL,
					applied_at timestamptz NOT NULL DEFAULT now()
				)`); err != nil {
				return err
			}
		}
		for _, m := range migrations[v:] {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO sundial.schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: schema: %w", err)
	}
	return nil
}

// schemaVersion is the database's version: 0 before the first migration.
func schemaVersion(ctx context.Context, tx pgx.Tx) (int, error) {
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass('sundial.schema_migrations') IS NOT NULL").Scan(&exists); err != nil || !exists {
		return 0, err
	}
	var v int
	err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM sundial.schema_migrations").Scan(&v)
	return v, err
}

// MigrateDatabase connects to the database at url and migrates it, or
// with dryRun only lists what Migrate would run, for `sundial migrate`:
// it returns the migrations applied, or that would be.
func MigrateDatabase(ctx context.Context, url string, dryRun bool) ([]Migration, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", redact(err))
	}
	defer pool.Close()
	var pending []Migration
	if err := Migrate(ctx, pool, &pending); err != nil || dryRun || len(pending) == 0 {
		return pending, err
	}
	// Another instance may migrate in between: what this call applied is
	// what was still pending under its lock.
	return pending, Migrate(ctx, pool, nil)
}
