-- Revert taskboard:function_comments from pg

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

COMMENT ON FUNCTION taskboard.cancel(bigint) IS NULL;
COMMENT ON FUNCTION taskboard.claim(text,text,integer,interval) IS NULL;
COMMENT ON FUNCTION taskboard.complete(bigint,uuid,jsonb) IS NULL;
COMMENT ON FUNCTION taskboard.complete_many(bigint[],uuid[],jsonb[]) IS NULL;
COMMENT ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb) IS NULL;
COMMENT ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb) IS NULL;
COMMENT ON FUNCTION taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer) IS NULL;
COMMENT ON FUNCTION taskboard.fail(bigint,uuid,text,interval,boolean,text) IS NULL;
COMMENT ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) IS NULL;
COMMENT ON FUNCTION taskboard.get_job(bigint) IS NULL;
COMMENT ON FUNCTION taskboard.job_activity(interval) IS NULL;
COMMENT ON FUNCTION taskboard.lease_state(bigint,uuid) IS NULL;
COMMENT ON FUNCTION taskboard.notify_runnable(text) IS NULL;
COMMENT ON FUNCTION taskboard.pause(text) IS NULL;
COMMENT ON FUNCTION taskboard.prune(interval,integer) IS NULL;
COMMENT ON FUNCTION taskboard.queue_overview(interval) IS NULL;
COMMENT ON FUNCTION taskboard.release(bigint,uuid,interval) IS NULL;
COMMENT ON FUNCTION taskboard.renew(bigint,uuid,interval) IS NULL;
COMMENT ON FUNCTION taskboard.renew_many(bigint[],uuid[],interval) IS NULL;
COMMENT ON FUNCTION taskboard.resume(text) IS NULL;
COMMENT ON FUNCTION taskboard.retry(bigint) IS NULL;
COMMENT ON FUNCTION taskboard.set_queue_limit(text,integer) IS NULL;
COMMENT ON FUNCTION taskboard.version() IS NULL;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
