-- Deploy taskboard:version to pg
--
-- Release 0.7.1: written by `make schema` from the function files (never by
-- hand), those that differ from release 0.7.0's.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- taskboard.record_refusals
CREATE OR REPLACE FUNCTION taskboard.record_refusals(kind text, job_ids bigint[], tokens uuid[])
 RETURNS void
 LANGUAGE sql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
INSERT INTO taskboard.job_events
       (job_id, kind, worker, attempt, fence, lease_expires_at, token_digest)
SELECT DISTINCT ON (e.job_id, e.token_digest)
       e.job_id, record_refusals.kind, e.worker, e.attempt, e.fence, e.lease_expires_at, e.token_digest
  FROM unnest(record_refusals.job_ids, record_refusals.tokens) AS i(id, token)
  JOIN taskboard.job_events AS e
    ON e.job_id = i.id
   AND e.token_digest = pg_catalog.sha256(pg_catalog.uuid_send(i.token))
   AND e.kind IN ('reclaimed', 'cancelled')
 WHERE EXISTS (SELECT FROM taskboard.jobs AS k WHERE k.id = e.job_id FOR KEY SHARE SKIP LOCKED)
 ORDER BY e.job_id, e.token_digest
ON CONFLICT ON CONSTRAINT job_events_once DO NOTHING
$function$;

COMMENT ON FUNCTION taskboard.record_refusals(text,bigint[],uuid[]) IS
$comment$record_refusals(kind, job_ids, tokens) -> void
Internal: the history lines of refused writes. For each job_ids[i], when
tokens[i] is a token the job's history knows (its lease was reclaimed or
cancelled: a line 'reclaimed' or 'cancelled' carries its digest), writes
one line of `kind` ('refused_complete', 'refused_fail' or
'refused_renew') with that lease's worker, attempt, fence and deadline,
once per token and kind (a second refusal writes nothing); a token the
history does not know is not recorded. Empty arrays read nothing.
The job is held FOR KEY SHARE until the caller's statement ends: an
admin's prune of it that commits first takes the line with it, rather
than failing the refusal with 23503. A job another transaction holds
FOR UPDATE (deleting it: prune, or the accepted completion of a queue
that discards) gets no line, and the refusal does not wait for that
transaction: the job's history goes with it. Two workers whose leases
crossed, each refused on the job the other completes, would otherwise
wait for each other.
Called by complete_many, renew_many and fail, after the write they
refused; never granted to an application role.$comment$;

REVOKE ALL ON FUNCTION taskboard.record_refusals(text,bigint[],uuid[]) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";

-- taskboard.set_queue_discard
CREATE OR REPLACE FUNCTION taskboard.set_queue_discard(queue text, discard boolean)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_name('queue', set_queue_discard.queue);
    v_checked := taskboard.check_given('discard', set_queue_discard.discard,
                                       'true deletes completed jobs, false keeps them');
    IF NOT set_queue_discard.discard
       AND NOT EXISTS (SELECT FROM taskboard.queues AS r WHERE r.queue = set_queue_discard.queue) THEN
        RETURN false;
    END IF;

    INSERT INTO taskboard.queues AS q (queue, discard_succeeded)
    VALUES (set_queue_discard.queue, set_queue_discard.discard)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET discard_succeeded = EXCLUDED.discard_succeeded,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.discard_succeeded IS DISTINCT FROM EXCLUDED.discard_succeeded;
    RETURN FOUND;
END
$function$;

COMMENT ON FUNCTION taskboard.set_queue_discard(text,boolean) IS
$comment$set_queue_discard(queue, discard) -> boolean
discard true: from the next completion on, an accepted completion of a job
of `queue` deletes the job, with its history, instead of keeping it
succeeded; false (the default of every queue): jobs are kept. For queues
whose finished jobs nobody reads. What a discarded job gives up: get_job,
find_jobs, the dashboard and the CLI no longer find it, its result is
gone, and a completion repeated with its token answers false (as for a
pruned job) where a kept job answers true. The completion is fenced as
always: a token that is not current deletes nothing. A job is kept
succeeded, for prune to delete, when a job waits on it (depends_on), when
another transaction holds a lock on it as the delete's lock is taken (a
producer's open transaction naming it in depends_on, which the
completion never waits for), and when the completion runs in a transaction that
is not READ COMMITTED. Failed, dead and cancelled jobs are always kept.
A refused write of an earlier holder of a job being deleted gets no
history line (taskboard.record_refusals). True when
this call changed the setting, false when it already was `discard`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
discard is NULL.$comment$;

REVOKE ALL ON FUNCTION taskboard.set_queue_discard(text,boolean) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.set_queue_discard(text,boolean) TO :"admin_role";

-- taskboard.version
CREATE OR REPLACE FUNCTION taskboard.version()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
SELECT '0.7.1'::text
$function$;

COMMENT ON FUNCTION taskboard.version() IS
$comment$version() -> text
The schema's release, for the driver's start-up check.
Raises nothing.$comment$;

REVOKE ALL ON FUNCTION taskboard.version() FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
