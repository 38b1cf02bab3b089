-- Revert taskboard:fence to its v0.3.0 definition
--
-- Nothing in the schema changes (see deploy/fence.sql).

BEGIN;

COMMIT;
