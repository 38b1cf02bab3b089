-- Deploy taskboard:fence to pg
-- requires: jobs
--
-- The fence: jobs.fence counts the claims of a job, and claim hands the new
-- value to the holder with its token (taskboard.claimed.fence, last). It
-- strictly increases with every claim, a reclaim after a release or an
-- expired lease included, and never resets (retry keeps it). Where a token
-- cannot travel (an external store, an API), the fence can: a store that
-- compares and sets refuses a write whose fence is lower than one it saw.
-- Jobs claimed before this change have fence 0, which no holder was given.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- A constant default: PostgreSQL adds the column without rewriting the table.
ALTER TABLE taskboard.jobs
    ADD COLUMN fence bigint NOT NULL DEFAULT 0,
    ADD CONSTRAINT jobs_fence_not_negative CHECK (fence >= 0);

ALTER TYPE taskboard.claimed ADD ATTRIBUTE fence bigint;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
