-- The instances serving from this database, each as it said at its start
-- and when it last said it was alive: what GET /api/v1/instances and
-- `sundial instances` list, and what each instance compares the settings
-- every instance must share with (docs/postgres.md, "The fleet").
-- settings holds a digest of each group of them, by the group's name.
CREATE TABLE sundial.instances (
	id       text PRIMARY KEY,
	host     text NOT NULL,
	pid      integer NOT NULL,
	version  text NOT NULL,
	started  timestamptz NOT NULL,
	seen     timestamptz NOT NULL,
	settings jsonb NOT NULL
);
