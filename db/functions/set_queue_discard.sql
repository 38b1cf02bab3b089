-- set_queue_discard(queue, discard) -> boolean
-- discard true: from the next completion on, an accepted completion of a job
-- of `queue` deletes the job, with its history, instead of keeping it
-- succeeded; false (the default of every queue): jobs are kept. For queues
-- whose finished jobs nobody reads. What a discarded job gives up: get_job,
-- find_jobs, the dashboard and the CLI no longer find it, its result is
-- gone, and a completion repeated with its token answers false (as for a
-- pruned job) where a kept job answers true. The completion is fenced as
-- always: a token that is not current deletes nothing. A job is kept
-- succeeded, for prune to delete, when a job waits on it (depends_on), when
-- another transaction holds a lock on it as the delete's lock is taken (a
-- producer's open transaction naming it in depends_on, which the
-- completion never waits for), and when the completion runs in a transaction that
-- is not READ COMMITTED. Failed, dead and cancelled jobs are always kept.
-- A refused write of an earlier holder of a job being deleted gets no
-- history line (taskboard.record_refusals). True when
-- this call changed the setting, false when it already was `discard`.
-- Raises 22023 when queue is NULL, empty or longer than 200 characters, or
-- discard is NULL.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
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

REVOKE ALL ON FUNCTION taskboard.set_queue_discard(text,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.set_queue_discard(text,boolean) TO taskboard_admin;
