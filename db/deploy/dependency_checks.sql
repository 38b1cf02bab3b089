-- Deploy taskboard:dependency_checks to pg
-- requires: dependencies
--
-- The dependency edges to look at again after their transaction. An
-- enqueue with depends_on records its edges without locking the rows of
-- the jobs it depends on against their holders (a FOR KEY SHARE lock,
-- which no renew, complete, fail or claim waits for), so a dependency may
-- end, in another transaction, while the enqueue is still open: that end
-- settles the edges it can see, and cannot see an edge not committed yet.
-- Each row here is one such job, read again by
-- taskboard.recheck_dependencies (claim calls it) once the transaction
-- that wrote the row has committed:
--   side 'dependent':  a job whose edges an enqueue wrote;
--                      each dependency it names that has ended by then is
--                      settled, and the row goes once every dependency it
--                      still names was read with no end in flight.
--   side 'dependency': a job that ended with dependents left to settle:
--                      more of them than one call settles (big graphs), or
--                      an end in a transaction whose snapshot is older than
--                      its statements (REPEATABLE READ, SERIALIZABLE),
--                      which may not see every edge committed before it.
-- A row left here delays nothing that could start: it stands for edges
-- whose dependency has ended and whose dependent still waits for them.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE TABLE taskboard.dependency_checks (
    job_id    bigint      NOT NULL,
    side      text        NOT NULL,
    added_at  timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    CONSTRAINT dependency_checks_pkey PRIMARY KEY (job_id, side),
    CONSTRAINT dependency_checks_side_known CHECK (side IN ('dependent', 'dependency'))
);

COMMENT ON TABLE taskboard.dependency_checks IS
    'Jobs whose dependency edges are read again after their transaction: side dependent, edges an enqueue wrote while a dependency could end; side dependency, a job that ended with dependents left to settle. Written by enqueue and the calls that end a job; emptied by recheck_dependencies.';

-- Since this release every settle counts a cancelled dependent's lost edges
-- too (a retry waits for the edges it has, by that count): the cancelled
-- dependents of the release before are given the count of their edges.
UPDATE taskboard.jobs AS j
   SET dependencies_left = (SELECT pg_catalog.count(*)::integer
                              FROM taskboard.job_dependencies AS d
                             WHERE d.job_id = j.id)
 WHERE j.state = 'cancelled'
   AND j.dependencies_left IS NOT NULL;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
