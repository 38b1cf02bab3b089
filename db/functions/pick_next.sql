-- pick_next(queue, clock, most) -> bigint[]
-- Internal: the picker of claim's common path (a queue without limits).
-- NULL when a lease of `queue` expired by `clock`: the claim then takes the
-- path that reclaims and buries. Else the first `most` queued jobs whose
-- run_at is due by `clock`, in claim order (priority, higher first, then
-- run_at, then id), locked FOR NO KEY UPDATE SKIP LOCKED, as pick_queued
-- picks them: a walk from the head of the queue's queued index.
-- A session with taskboard.claim_cursor = on (the driver's control
-- connections set it) keeps a cursor per queue in a session setting
-- (taskboard.cursor_<hash of the queue>): the claim-order key of the last
-- job it picked, and when its next walk from the head is due. Until then,
-- it picks the queued jobs after its cursor instead, and looks for no
-- expired lease; when those are fewer than `most` it walks from the head as
-- any claim does. A walk is due 200 ms after the last one ended, later
-- while walks are slow (twenty times the last walk's own time: its check
-- and its read of the head), and never more than 2 s after. So, while a
-- transaction holds the xmin horizon back and the head of the indexes fills
-- with entries no claim can use, most claims of such a session read only
-- the jobs they take; what it gives up: a job that becomes queued ahead of
-- the cursor (a higher priority, an earlier run_at, a release or retry
-- committed late) and an expired lease wait for the next walk of some
-- session, 2 s at most, unless a claim finds fewer jobs after its cursor
-- than it asked for. The setting is transactional: a claim rolled back
-- leaves the cursor as it was. A value no walk wrote (malformed, of
-- another queue, due more than 2 s after `clock`) counts as no cursor and
-- raises nothing. A queue is given a setting once the session picks one of
-- its jobs.
-- Writes nothing but that setting; the rows it locked stay locked until the
-- caller's transaction ends.
-- Called by claim; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.pick_next(queue text, clock timestamp with time zone, most integer)
 RETURNS bigint[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_keeps boolean := pg_catalog.current_setting('taskboard.claim_cursor', true) IS NOT DISTINCT FROM 'on';
    v_name text := 'taskboard.cursor_' || pg_catalog.to_hex(pg_catalog.hashtext(pick_next.queue));
    v_kept text;
    -- The cursor: when the next walk is due (µs since the epoch), then the
    -- last picked job's priority, run_at (days and µs since the epoch, UTC:
    -- rebuilt exactly, without floating point) and id, then the queue.
    v_cursor text[];
    v_clock bigint := (EXTRACT(epoch FROM pick_next.clock) * 1000000)::bigint;
    v_due bigint;
    v_walked timestamptz;
    v_priority bigint;
    v_run_at timestamptz;
    v_us bigint;
    v_id bigint;
    v_ids bigint[];
BEGIN
    IF v_keeps THEN
        v_kept := pg_catalog.current_setting(v_name, true);
        v_cursor := pg_catalog.regexp_match(v_kept COLLATE "C",
            '^([0-9]{1,17}) (-?[0-9]{1,12}) (-[0-9]{1,6}|[0-9]{1,7}) (-?[0-9]{1,11}) ([0-9]{1,18}) (.*)$');
    END IF;
    IF v_cursor IS NOT NULL AND v_cursor[6] = pick_next.queue
       AND v_clock < v_cursor[1]::bigint AND v_cursor[1]::bigint <= v_clock + 2000000 THEN
        v_priority := v_cursor[2]::bigint;
        v_run_at := ('1970-01-01 00:00:00'::timestamp + v_cursor[3]::integer * interval '1 day'
                     + v_cursor[4]::bigint * interval '1 microsecond') AT TIME ZONE 'UTC';
        v_ids := ARRAY(
            SELECT j.id
              FROM taskboard.jobs AS j
             WHERE j.queue = pick_next.queue
               AND j.state = 'queued'
               AND j.priority = v_priority
               AND (j.run_at, j.id) > (v_run_at, v_cursor[5]::bigint)
               AND j.run_at <= pick_next.clock
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT pick_next.most
               FOR NO KEY UPDATE SKIP LOCKED);
        IF pg_catalog.cardinality(v_ids) < pick_next.most THEN
            v_ids := v_ids || ARRAY(
                SELECT j.id
                  FROM taskboard.jobs AS j
                 WHERE j.queue = pick_next.queue
                   AND j.state = 'queued'
                   AND j.priority < v_priority
                   AND j.run_at <= pick_next.clock
                 ORDER BY j.priority DESC, j.run_at, j.id
                 LIMIT pick_next.most - pg_catalog.cardinality(v_ids)
                   FOR NO KEY UPDATE SKIP LOCKED);
        END IF;
        IF pg_catalog.cardinality(v_ids) = pick_next.most THEN
            v_due := v_cursor[1]::bigint;
        END IF;
    END IF;

    IF v_due IS NULL THEN
        -- The walk from the head, once no lease of the queue has expired (the
        -- check walks this queue's running jobs).
        v_walked := pg_catalog.clock_timestamp();
        IF EXISTS (
            SELECT
              FROM taskboard.jobs AS x
             WHERE x.queue = pick_next.queue
               AND x.state = 'running'
               AND x.lease_expires_at <= pick_next.clock) THEN
            RETURN NULL;
        END IF;
        v_ids := taskboard.pick_queued(pick_next.queue, pick_next.clock, pick_next.most);
        IF NOT v_keeps OR (pg_catalog.cardinality(v_ids) = 0 AND coalesce(v_kept, '') = '') THEN
            RETURN v_ids;
        END IF;
        v_due := (EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000000)::bigint
                 + LEAST(2000000, GREATEST(200000,
                         20 * (EXTRACT(epoch FROM pg_catalog.clock_timestamp() - v_walked) * 1000000)::bigint));
    END IF;

    -- The cursor moves to the last job picked; none picked, none kept.
    SELECT j.priority, j.run_at, j.id
      INTO v_priority, v_run_at, v_id
      FROM taskboard.jobs AS j
     WHERE j.id = v_ids[pg_catalog.cardinality(v_ids)];
    v_us := (EXTRACT(epoch FROM v_run_at) * 1000000)::bigint;
    PERFORM pg_catalog.set_config(v_name, CASE WHEN v_id IS NOT NULL THEN pg_catalog.concat_ws(' ',
        v_due, v_priority, v_us / 86400000000, v_us % 86400000000, v_id, pick_next.queue) ELSE '' END,
        false);
    RETURN v_ids;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.pick_next(text,timestamp with time zone,integer) FROM PUBLIC;
