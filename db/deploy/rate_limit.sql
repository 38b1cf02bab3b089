-- Deploy taskboard:rate_limit to pg
-- requires: queues
-- requires: concurrency_key
--
-- queues.rate_starts, rate_per, rate_by_key: a queue's rate limit, at most
-- rate_starts job starts (claims, reclaims included) in any window of
-- rate_per, counted for the whole queue or, with rate_by_key, for each
-- concurrency key. All NULL (and rate_by_key false) for none.
--
-- taskboard.queue_starts: the starts of the queues with a rate limit, kept
-- for one window: claim writes a row per job it starts and removes the rows
-- older than the window; set_rate_limit(queue, NULL, NULL) removes the
-- queue's. Read through claim and queue_stats only.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

ALTER TABLE taskboard.queues
    ADD COLUMN rate_starts integer,
    ADD COLUMN rate_per interval,
    ADD COLUMN rate_by_key boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT queues_rate_limit_whole
        CHECK ((rate_starts IS NULL) = (rate_per IS NULL) AND (rate_starts IS NOT NULL OR NOT rate_by_key)),
    ADD CONSTRAINT queues_rate_limit_positive
        CHECK (rate_starts IS NULL
               OR (rate_starts BETWEEN 1 AND 100000 AND rate_per > interval '0' AND rate_per <= interval '744 hours'));

COMMENT ON COLUMN taskboard.queues.rate_starts IS
    'At most this many jobs of this queue (or of one concurrency key, rate_by_key) start in any window of rate_per; NULL: no rate limit.';
COMMENT ON COLUMN taskboard.queues.rate_per IS
    'The window of the rate limit; NULL: no rate limit.';
COMMENT ON COLUMN taskboard.queues.rate_by_key IS
    'Whether the rate limit counts each concurrency key''s starts apart (jobs without a key are then not limited).';

CREATE TABLE taskboard.queue_starts (
    queue text NOT NULL,
    concurrency_key text,
    started_at timestamptz NOT NULL
);

COMMENT ON TABLE taskboard.queue_starts IS
    'The job starts of the queues with a rate limit within their window: written and pruned by claim.';

CREATE INDEX queue_starts_by_time ON taskboard.queue_starts (queue, started_at);
CREATE INDEX queue_starts_by_key ON taskboard.queue_starts (queue, concurrency_key, started_at)
    WHERE concurrency_key IS NOT NULL;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
