-- Revert taskboard:roles to its v0.1.0 definition
--
-- Nothing to undo: the v0.1.0 change leaves the same roles in place, and a
-- role is dropped only when the v0.1.0 change itself is reverted, and then
-- only when nothing on the server uses it any more.

BEGIN;

COMMIT;
