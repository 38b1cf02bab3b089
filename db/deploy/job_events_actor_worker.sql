-- Deploy taskboard:job_events_actor_worker to pg
-- requires: job_events
--
-- A history line's actor is the database role that made the call; the
-- worker name a reclaiming claim stated is kept beside it, in actor_worker
-- (NULL on the lines of other kinds, and on reclaims recorded before).

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

ALTER TABLE taskboard.job_events ADD COLUMN actor_worker text;

COMMENT ON COLUMN taskboard.job_events.actor IS
    'Who acted: the database role in force (SET ROLE, else the login) that reclaimed, cancelled or retried; on reclaims recorded before actor_worker, the reclaiming worker''s name.';
COMMENT ON COLUMN taskboard.job_events.actor_worker IS
    'reclaimed: the worker name the reclaiming claim stated (its worker argument); NULL otherwise.';

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
