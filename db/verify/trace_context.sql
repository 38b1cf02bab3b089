-- Verify taskboard:trace_context on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT trace_context FROM taskboard.jobs WHERE false;

SELECT (NULL::taskboard.claimed).trace_context;

ROLLBACK;
