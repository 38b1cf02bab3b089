-- revert_losses(release) -> table of (data, added_in, rows)
-- What a revert to `release` would drop: one row for each kind of data that
-- a release after `release` added and that holds something now, with the
-- release that added it and how many rows hold it:
--   fences          jobs whose fence is above 0 (0.3.0)
--   queue settings  paused or limited queues (0.3.0)
--   schedules       schedules with an enqueued slot (0.3.0)
--   started_at      jobs with a start time (0.3.0)
--   trace contexts  jobs carrying a trace context (0.4.0)
--   job history     lines of the jobs' history (0.4.5)
--   held places     cancelled jobs whose lease has not ended yet, holding
--                   their place and dedupe key (0.4.5)
--   slot tasks and queues
--                   schedules whose latest slot's task and queue are kept (0.4.5)
--   concurrency keys
--                   jobs carrying a concurrency key (0.4.8)
--   key limits      queues with a limit per concurrency key (0.4.8)
--   rate limits     queues with a rate limit, and their log of starts (0.4.9)
--   dependencies    jobs enqueued with dependencies (0.5.0)
--   waiting jobs    jobs waiting for dependencies, which a revert cancels (0.5.0)
--   reclaiming workers
--                   history lines of reclaims that keep the worker name the
--                   reclaiming claim stated beside its role (0.6.1)
--   discarding queues
--                   queues that delete their jobs at completion (0.7.0)
--   jobs            every job, only for release NULL (a revert of everything)
-- No rows: the revert drops no data. Reads only; ordered by release.
-- Raises 22023 when release is not NULL and not of the form 0.2.0.
-- The revert of change revert_guard calls it, and refuses while it returns
-- a row for release 0.1.0 unless the Sqitch variable drop_data is yes.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.revert_losses(release text DEFAULT NULL::text)
 RETURNS TABLE(data text, added_in text, rows bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_to integer[];
BEGIN
    IF revert_losses.release IS NOT NULL THEN
        v_checked := taskboard.check_arg(revert_losses.release ~ '^[0-9]{1,4}[.][0-9]{1,4}[.][0-9]{1,4}$',
                 'release must be a release such as 0.2.0, or NULL for a revert of everything, got '
                 || pg_catalog.quote_literal(revert_losses.release));
        v_to := pg_catalog.string_to_array(revert_losses.release, '.')::integer[];
    END IF;
    RETURN QUERY
    SELECT lost.data, lost.added_in, lost.rows
      FROM (VALUES
            ('jobs', '0.1.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs)),
            ('fences', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.fence > 0)),
            ('queue settings', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.paused OR q.max_running IS NOT NULL)),
            ('schedules', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.schedule_slots)),
            ('started_at', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.started_at IS NOT NULL)),
            ('trace contexts', '0.4.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.trace_context IS NOT NULL)),
            ('job history', '0.4.5', (SELECT pg_catalog.count(*) FROM taskboard.job_events)),
            ('held places', '0.4.5', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.held_until > pg_catalog.clock_timestamp())),
            ('slot tasks and queues', '0.4.5', (SELECT pg_catalog.count(*) FROM taskboard.schedule_slots AS s WHERE s.task IS NOT NULL)),
            ('concurrency keys', '0.4.8', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.concurrency_key IS NOT NULL)),
            ('key limits', '0.4.8', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.max_running_per_key IS NOT NULL)),
            ('rate limits', '0.4.9', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.rate_starts IS NOT NULL)),
            ('dependencies', '0.5.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.dependencies_left IS NOT NULL)),
            ('waiting jobs', '0.5.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.state = 'waiting')),
            ('reclaiming workers', '0.6.1', (SELECT pg_catalog.count(*) FROM taskboard.job_events AS e WHERE e.actor_worker IS NOT NULL)),
            ('discarding queues', '0.7.0', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.discard_succeeded))
           ) AS lost(data, added_in, rows)
     WHERE lost.rows > 0
       AND (v_to IS NULL
            OR pg_catalog.string_to_array(lost.added_in, '.')::integer[] > v_to)
     ORDER BY pg_catalog.string_to_array(lost.added_in, '.')::integer[], lost.data;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.revert_losses(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.revert_losses(text) TO taskboard_admin;
