-- Verify taskboard:function_comments on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

DO $verify$
DECLARE
    v_fn pg_catalog.regprocedure := 'taskboard.claim(text,text,integer,interval)';
BEGIN
    IF (pg_catalog.obj_description(v_fn, 'pg_proc') LIKE 'claim(queue, worker, batch, lease) -> %') IS NOT TRUE THEN
        RAISE EXCEPTION '% must carry its contract header as its comment', v_fn;
    END IF;
END
$verify$;

ROLLBACK;
