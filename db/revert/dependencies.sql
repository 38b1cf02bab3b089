-- Revert taskboard:dependencies from pg
--
-- The functions that read the columns are reverted before this; the
-- dependencies go with them, and waiting jobs end cancelled (revert_losses
-- counts both, and the guard asks for drop_data=yes first).

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- Waiting jobs have no state before this release: with drop_data=yes
-- (revert_losses counted them) they end cancelled, saying why.
UPDATE taskboard.jobs AS j
   SET state = 'cancelled',
       finished_at = pg_catalog.clock_timestamp(),
       errors = j.errors || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
           'error', 'waiting for dependencies when a revert removed them',
           'attempt', j.attempt,
           'at', pg_catalog.clock_timestamp()))
 WHERE j.state = 'waiting';
DROP TABLE taskboard.job_dependencies;
DROP INDEX taskboard.jobs_with_dependents;
DROP INDEX taskboard.jobs_waiting_by_queue;
ALTER TABLE taskboard.jobs
    DROP CONSTRAINT jobs_waiting_has_dependencies,
    DROP CONSTRAINT jobs_on_dependency_failure_known,
    DROP COLUMN dependencies_left,
    DROP COLUMN on_dependency_failure,
    DROP COLUMN has_dependents,
    DROP CONSTRAINT jobs_state_known,
    ADD CONSTRAINT jobs_state_known
        CHECK (state IN ('queued', 'running', 'succeeded', 'dead', 'cancelled'));

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
