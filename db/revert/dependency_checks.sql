-- Revert taskboard:dependency_checks from pg
--
-- The functions reverted before this one are those of release 0.5.0, which
-- know a job's dependents by jobs.has_dependents and settle each ended job
-- in the transaction that ends it: every job still named by an edge is
-- marked so again, and the edges of jobs that have ended (a check not done
-- yet) are settled here, so no job is left waiting for a job that ended.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

UPDATE taskboard.jobs AS j
   SET has_dependents = true
 WHERE j.id IN (SELECT d.depends_on FROM taskboard.job_dependencies AS d)
   AND NOT j.has_dependents;
SELECT taskboard.settle_dependents(ARRAY(
    SELECT DISTINCT d.depends_on
      FROM taskboard.job_dependencies AS d
      JOIN taskboard.jobs AS p ON p.id = d.depends_on
     WHERE p.state IN ('succeeded', 'dead', 'cancelled')
     ORDER BY d.depends_on));
DROP TABLE taskboard.dependency_checks;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
