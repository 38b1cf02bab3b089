-- Deploy taskboard:concurrency_key to pg
-- requires: jobs
-- requires: queues
-- requires: held_until
--
-- jobs.concurrency_key: the key a job shares with others of its queue that
-- must not run more than the queue's max_running_per_key at once (one sync
-- per customer, say). NULL: the job has no key and no key limit applies.
-- queues.max_running_per_key: that limit, NULL for none.
--
-- The index finds a key's holders: its running jobs (a live lease, or an
-- expired one not yet reclaimed) and its jobs cancelled under a lease that
-- has not ended. A job without a key is never in it, so a queue without
-- keys writes no entry for it.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- No default: PostgreSQL adds the columns without rewriting the tables.
ALTER TABLE taskboard.jobs
    ADD COLUMN concurrency_key text,
    ADD CONSTRAINT jobs_concurrency_key_named
        CHECK (concurrency_key <> '' AND pg_catalog.char_length(concurrency_key) <= 200);

COMMENT ON COLUMN taskboard.jobs.concurrency_key IS
    'The key whose jobs in this queue run at most max_running_per_key at once; NULL: none.';

ALTER TABLE taskboard.queues
    ADD COLUMN max_running_per_key integer,
    ADD CONSTRAINT queues_max_running_per_key_positive
        CHECK (max_running_per_key IS NULL OR max_running_per_key >= 1);

COMMENT ON COLUMN taskboard.queues.max_running_per_key IS
    'At most this many jobs of one concurrency key run at once in this queue; NULL: no key limit.';

CREATE INDEX jobs_holders_by_key
    ON taskboard.jobs (queue, concurrency_key)
    WHERE concurrency_key IS NOT NULL AND (state = 'running' OR held_until IS NOT NULL);

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
