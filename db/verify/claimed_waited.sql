-- Verify taskboard:claimed_waited on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT (NULL::taskboard.claimed).waited;

ROLLBACK;
