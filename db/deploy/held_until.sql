-- Deploy taskboard:held_until to pg
-- requires: jobs
--
-- jobs.held_until: for a job cancelled while running under a live lease, the
-- deadline that lease had. Its holder may believe it holds the job until
-- then (cancel leaves it no way to learn sooner than its next renewal), so
-- until then the job keeps its place under its queue's limit (claim counts
-- it), its dedupe key (a job enqueued meanwhile with that key is due no
-- sooner) and, retried, is due no sooner itself. NULL for every other job:
-- a queued job's cancel has no holder to wait for. Written only by cancel;
-- read by claim, retry and the enqueue family; a time in the past means
-- nothing.
--
-- The index finds a queue's held places by a range on held_until > clock:
-- however many cancelled jobs the table keeps, a look-up reads only those
-- whose lease has not ended (at most 12 hours of cancels).
--
-- Jobs cancelled before this change kept only their lease's deadline: a
-- cancelled job whose lease_expires_at is still ahead is taken as held
-- until then (a job cancelled while queued after a release included, as
-- retry treated it before).

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- No default: PostgreSQL adds the column without rewriting the table.
ALTER TABLE taskboard.jobs ADD COLUMN held_until timestamptz;

COMMENT ON COLUMN taskboard.jobs.held_until IS
    'Cancelled while running: the deadline its holder was given. The job keeps its place under the queue''s limit and its dedupe key until then. NULL otherwise.';

UPDATE taskboard.jobs AS j
   SET held_until = j.lease_expires_at
 WHERE j.state = 'cancelled'
   AND j.lease_expires_at > pg_catalog.clock_timestamp();

CREATE INDEX jobs_held_by_queue
    ON taskboard.jobs (queue, held_until)
    WHERE held_until IS NOT NULL;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
