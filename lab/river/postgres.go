package main

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// postgresVersion is the server's version string.
func postgresVersion(ctx context.Context, pool *pgxpool.Pool) string {
	var v string
	if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return ""
	}
	return v
}
