-- Revert taskboard:started_at to its v0.3.0 definition
--
-- Nothing in the schema changes (see deploy/started_at.sql).

BEGIN;

COMMIT;
