-- Deploy taskboard:job_events to pg
-- requires: jobs
--
-- A job's history beyond its errors: the lease a reclaim took over, a
-- cancel, an admin retry, and the late writes the fence refused. Written
-- by claim (reclaim path only), cancel, retry, and by complete,
-- complete_many, fail, renew and renew_many on their refusal path only;
-- read through taskboard.job_history. A row goes with its job (ON DELETE
-- CASCADE), so prune deletes both.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE TABLE taskboard.job_events (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id           bigint      NOT NULL REFERENCES taskboard.jobs (id) ON DELETE CASCADE,
    at               timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    -- reclaimed: claim took over an expired lease (worker lost it to actor).
    -- cancelled: cancel ended the job (worker: the holder, when it ran).
    -- retried: retry queued a dead or cancelled job again.
    -- refused_complete, refused_fail, refused_renew: a write by the holder
    -- of a lease the history recorded as reclaimed or cancelled, refused.
    kind             text        NOT NULL,
    -- The holder the line is about: whose lease was reclaimed or cancelled,
    -- whose write was refused.
    worker           text,
    -- Who acted: the reclaiming worker, or the login role that cancelled
    -- or retried.
    actor            text,
    -- The holder's attempt and fence number, and its lease's deadline.
    attempt          integer,
    fence            bigint,
    lease_expires_at timestamptz,
    -- sha256 of the holder's lease token: matches a late write by that
    -- holder, never shown. The token it digests is no longer current.
    token_digest     bytea,

    CONSTRAINT job_events_kind_known CHECK (kind IN (
        'reclaimed', 'cancelled', 'retried', 'refused_complete', 'refused_fail', 'refused_renew')),
    CONSTRAINT job_events_refusal_has_token CHECK (kind NOT LIKE 'refused_%' OR token_digest IS NOT NULL),
    -- One line per token and kind: a holder repeating a refused write adds
    -- nothing. Also the index job_history and the cascade from jobs use.
    CONSTRAINT job_events_once UNIQUE (job_id, token_digest, kind)
);

COMMENT ON TABLE taskboard.job_events IS
    'A job''s history: reclaimed leases, cancels, retries, refused late writes. Written only by the taskboard functions; no token, only its digest.';

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
