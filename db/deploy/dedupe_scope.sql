-- Deploy taskboard:dedupe_scope to pg
-- requires: jobs
--
-- Dedupe keys scoped to (queue, task, key): an unfinished job of task
-- `charge` holding key K no longer stands for a job of task `refund` with
-- key K on the same queue. v0.1.0's unique index on (queue, dedupe_key)
-- gives way to one on (queue, task, SHA-256 of the key).
--
-- Why a hash: a btree entry holds at most 2704 bytes, and a queue and a task
-- of 200 four-byte characters (800 bytes each) with a key of 400 (1600
-- bytes) need more. The SHA-256 is 32 bytes whatever the key.
--
-- Why this expression: an index expression must be IMMUTABLE, and sha256
-- takes bytea. convert_to and textsend are STABLE (textsend even depends on
-- client_encoding). The cast text::bytea is allowed but wrong: it goes
-- through bytea's input function, which reads backslash escapes ('\x41'
-- and 'A' would be one key, '\q' an error).
-- decode(text, 'escape') is IMMUTABLE and copies every byte of the text,
-- in the database encoding, except that a backslash starts an escape; with
-- every backslash doubled first (replace, IMMUTABLE), its result is exactly
-- the key's bytes: distinct keys, distinct input to sha256. The encoding of
-- a database never changes, so the result is a function of the key alone.
-- The literals are E'' strings, read the same whatever
-- standard_conforming_strings says.
--
-- A collision: two different keys with the same SHA-256 (none is known) are
-- one key to this index, which keeps the second out while a job holding the
-- first is unfinished. enqueue and enqueue_many compare the key of the job
-- they find with the one asked for, and raise 23505 on a difference instead
-- of answering with the other key's job.
--
-- enqueue and enqueue_many name this index in their ON CONFLICT and look
-- the holder up by the same expression. Their reworks come before this step
-- in the plan, which keeps it last so that a revert to v0.1.0 runs its
-- check for blocking pairs before anything is undone; between those steps
-- and this one, within one `sqitch deploy`, they find no such index and
-- raise 42P10. `taskboard sql --from 0.1.0` is one transaction.
-- Building it takes a SHARE lock on jobs (writers wait) for one scan of the
-- table; dropping the old index then takes ACCESS EXCLUSIVE until COMMIT.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- At most one unfinished job per queue, task and dedupe key, race-free.
-- Every row v0.1.0's index admitted fits this one: a (queue, key) pair
-- unique among unfinished jobs is unique with its task too.
CREATE UNIQUE INDEX jobs_unfinished_task_dedupe_key
    ON taskboard.jobs (queue, task,
                       pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(dedupe_key, E'\\', E'\\\\'), 'escape')))
    WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running');

DROP INDEX taskboard.jobs_unfinished_dedupe_key;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
