-- Revert taskboard:dependencies from pg
--
-- The functions that read the columns are reverted before this; the
-- dependencies go with them, and waiting jobs must be gone first: the
-- state check of before refuses them (revert_losses counts them).

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

DROP TABLE taskboard.job_dependencies;
DROP INDEX taskboard.jobs_with_dependents;
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
