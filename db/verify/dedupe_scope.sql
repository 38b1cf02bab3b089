-- Verify taskboard:dedupe_scope on pg

BEGIN;

SET LOCAL taskboard.role_prefix TO :'prefix';
\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;
-- pg_get_indexdef writes literals for the setting in force.
SET LOCAL standard_conforming_strings TO on;

DO $verify$
DECLARE
    v_index pg_catalog.regclass := pg_catalog.to_regclass('taskboard.jobs_unfinished_task_dedupe_key');
BEGIN
    IF v_index IS NULL THEN
        RAISE EXCEPTION 'taskboard.jobs_unfinished_task_dedupe_key is missing';
    END IF;
    IF pg_catalog.pg_get_indexdef(v_index) <>
       'CREATE UNIQUE INDEX jobs_unfinished_task_dedupe_key ON taskboard.jobs USING btree '
       '(queue, task, sha256(decode(replace(dedupe_key, ''\''::text, ''\\''::text), ''escape''::text))) '
       'WHERE ((dedupe_key IS NOT NULL) AND (state = ANY (ARRAY[''queued''::text, ''running''::text])))'
       OR NOT (SELECT i.indisunique AND i.indisvalid FROM pg_catalog.pg_index AS i WHERE i.indexrelid = v_index) THEN
        RAISE EXCEPTION 'taskboard.jobs_unfinished_task_dedupe_key must be a valid unique index on (queue, task, sha256 of the key) of unfinished jobs with a key, got %',
            pg_catalog.pg_get_indexdef(v_index);
    END IF;
    IF pg_catalog.to_regclass('taskboard.jobs_unfinished_dedupe_key') IS NOT NULL THEN
        RAISE EXCEPTION 'taskboard.jobs_unfinished_dedupe_key (v0.1.0''s dedupe index on queue and key) must be gone';
    END IF;
END
$verify$;

ROLLBACK;
