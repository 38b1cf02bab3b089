-- find_ids(queue, state, task, after_id, max_rows) -> bigint[]
-- Internal: the search of taskboard.find_jobs and taskboard.find_jobs_summary.
-- The ids of the jobs that match every filter given (NULL: any), below
-- after_id when it is given (keyset paging), newest first, at most
-- max_rows of them. Planned on every call (plan_cache_mode =
-- force_custom_plan): each combination of filters gets its own index.
-- Raises 22023 'queue must not be empty (NULL: every queue)' (the same for
-- task), 'state must be waiting, queued, running, succeeded, dead or
-- cancelled, got <state>' or 'max_rows must be between 1 and 1000, got
-- <max_rows>'.
-- Called by find_jobs and find_jobs_summary; never granted to an
-- application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.find_ids(queue text, state text, task text, after_id bigint, max_rows integer)
 RETURNS bigint[]
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_key('queue', find_ids.queue, NULL, 'NULL: every queue');
    v_checked := taskboard.check_key('task', find_ids.task, NULL, 'NULL: every task');
    IF find_ids.state IS NOT NULL THEN
        v_checked := taskboard.check_choice('state', find_ids.state,
                 'waiting', 'queued', 'running', 'succeeded', 'dead', 'cancelled');
    END IF;
    v_checked := taskboard.check_between('max_rows', find_ids.max_rows, 1, 1000);
    RETURN ARRAY(
        SELECT j.id
          FROM taskboard.jobs AS j
         WHERE (find_ids.queue IS NULL OR j.queue = find_ids.queue)
           AND (find_ids.state IS NULL OR j.state = find_ids.state)
           AND (find_ids.task IS NULL OR j.task = find_ids.task)
           AND (find_ids.after_id IS NULL OR j.id < find_ids.after_id)
         ORDER BY j.id DESC
         LIMIT find_ids.max_rows);
END
$function$;

REVOKE ALL ON FUNCTION taskboard.find_ids(text,text,text,bigint,integer) FROM PUBLIC;
