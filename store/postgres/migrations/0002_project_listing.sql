-- A project's invocations across its jobs (Store.ProjectInvocations):
-- each record's project and status class, computed from its job id and
-- status as it is written, and one index on them by occurrence. A page
-- of one class reads its own rows; a page of every class merges one page
-- of each of the four (one index, not a second on the project alone,
-- since every index costs each invocation's write).
ALTER TABLE sundial.invocations
	ADD COLUMN project text GENERATED ALWAYS AS (split_part(job_id, '/', 1)) STORED,
	ADD COLUMN class text GENERATED ALWAYS AS (CASE
		WHEN status = 'SUCCEEDED' THEN 'succeeded'
		WHEN status IN ('FAILED', 'ABORTED') THEN 'failed'
		WHEN status = 'SKIPPED' THEN 'skipped'
		ELSE 'running' END) STORED;
CREATE INDEX invocations_project_class ON sundial.invocations (project, class, occurrence DESC, job_id DESC, id DESC);
