-- Deploy taskboard:fence to pg
-- requires: fence@v0.3.0
-- requires: trace_context
--
-- Nothing in the schema changes: jobs.fence and taskboard.claimed.fence are
-- as fence@v0.3.0 made them. Its verify asked that fence be the last
-- attribute of taskboard.claimed; trace_context follows it now, and this
-- change's verify asks for the fence wherever it is.

BEGIN;

COMMIT;
