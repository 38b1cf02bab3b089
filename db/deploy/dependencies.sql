-- Deploy taskboard:dependencies to pg
-- requires: jobs
-- requires: held_until
--
-- Jobs that wait for other jobs. A job enqueued with dependencies that have
-- not all succeeded is `waiting`: claim never takes it. Each of its
-- dependencies is an edge in taskboard.job_dependencies until that
-- dependency ends; jobs.dependencies_left counts the edges left. The
-- dependency's end settles its edges (taskboard.settle_dependents) in the
-- transaction of the call that ended it: a success takes one off each
-- dependent, and the last makes it `queued`; a death or a cancel makes
-- each dependent `cancelled`, and its own dependents after it, unless the
-- dependent was enqueued with on_dependency_failure 'run' (then it counts
-- as a success). jobs.has_dependents tells the calls that end a job
-- whether there is anything to settle, so a job without dependents costs
-- them nothing more.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

ALTER TABLE taskboard.jobs
    DROP CONSTRAINT jobs_state_known,
    ADD CONSTRAINT jobs_state_known
        CHECK (state IN ('waiting', 'queued', 'running', 'succeeded', 'dead', 'cancelled')) NOT VALID,
    -- No default for the first two: PostgreSQL adds the columns without
    -- rewriting the table; has_dependents' constant default needs none either.
    ADD COLUMN dependencies_left integer,
    ADD COLUMN on_dependency_failure text,
    ADD COLUMN has_dependents boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT jobs_waiting_has_dependencies
        CHECK (state <> 'waiting' OR dependencies_left > 0),
    ADD CONSTRAINT jobs_on_dependency_failure_known
        CHECK (on_dependency_failure IN ('cancel', 'run'));
ALTER TABLE taskboard.jobs VALIDATE CONSTRAINT jobs_state_known;

COMMENT ON COLUMN taskboard.jobs.dependencies_left IS
    'How many of the dependencies of this job have not ended yet; NULL: it was enqueued without any.';
COMMENT ON COLUMN taskboard.jobs.on_dependency_failure IS
    'What a dependency that ends dead or cancelled does to this job: cancel it (cancel), or count as a success (run); NULL: no dependencies.';
COMMENT ON COLUMN taskboard.jobs.has_dependents IS
    'Whether a job was ever enqueued depending on this one: its end then settles their edges.';

CREATE TABLE taskboard.job_dependencies (
    job_id     bigint NOT NULL REFERENCES taskboard.jobs (id) ON DELETE CASCADE,
    depends_on bigint NOT NULL REFERENCES taskboard.jobs (id) ON DELETE CASCADE,
    CONSTRAINT job_dependencies_pkey PRIMARY KEY (job_id, depends_on)
);

COMMENT ON TABLE taskboard.job_dependencies IS
    'The dependencies of waiting jobs not ended yet: job_id waits for depends_on. Written by enqueue, removed as each dependency ends.';

CREATE INDEX job_dependencies_by_dependency ON taskboard.job_dependencies (depends_on);

-- The few jobs with dependents, for the calls that end a batch of jobs
-- (complete_many): a look-up of the batch here finds none of a job that
-- has no dependents, and costs next to nothing.
CREATE INDEX jobs_with_dependents ON taskboard.jobs (id) WHERE has_dependents;

-- The waiting jobs of a queue, for queue_overview: only they are in it.
CREATE INDEX jobs_waiting_by_queue ON taskboard.jobs (queue) WHERE state = 'waiting';

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
