-- Deploy taskboard:schema to pg
-- requires: roles

BEGIN;

CREATE SCHEMA taskboard AUTHORIZATION taskboard_owner;

COMMENT ON SCHEMA taskboard IS
    'Taskboard job queue: who holds a job, until when, and whether a write is still allowed.';

-- Applications see the schema but no table in it: everything they may do
-- goes through the functions granted to their role.
GRANT USAGE ON SCHEMA taskboard TO taskboard_producer, taskboard_worker, taskboard_admin;

COMMIT;
