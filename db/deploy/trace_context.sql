-- Deploy taskboard:trace_context to pg
-- requires: jobs
--
-- jobs.trace_context: the W3C trace context (traceparent, tracestate) of the
-- code that enqueued the job, as a JSON object of strings, NULL when the
-- enqueuer sent none. enqueue and enqueue_many store it; claim hands it to
-- the holder (taskboard.claimed.trace_context, last) so that the handler's
-- span continues the enqueuer's trace. Nothing else reads or changes it.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- No default: PostgreSQL adds the column without rewriting the table.
ALTER TABLE taskboard.jobs ADD COLUMN trace_context jsonb;

ALTER TYPE taskboard.claimed ADD ATTRIBUTE trace_context jsonb;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
