-- Revert taskboard:version from pg
--
-- Release 0.7.3: written by `make schema` (never by hand). A revert stops at
-- the guard, before anything changes, while taskboard.revert_losses('0.1.0') finds
-- data, unless the Sqitch variable drop_data is yes; then release 0.7.2's
-- functions come back.

\if :{?drop_data}
\else
\set drop_data no
\endif

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

SET LOCAL taskboard.drop_data TO :'drop_data';

DO $guard$
DECLARE
    v_lost text;
BEGIN
    SELECT pg_catalog.string_agg(pg_catalog.format('%s (%s rows, added in %s)', l.data, l.rows, l.added_in), ', ')
      INTO v_lost
      FROM taskboard.revert_losses('0.1.0') AS l;
    IF v_lost IS NOT NULL AND pg_catalog.current_setting('taskboard.drop_data') <> 'yes' THEN
        RAISE EXCEPTION 'a revert to a release before 0.7.3 may drop data: %', v_lost
            USING ERRCODE = '55000',
                  HINT = 'taskboard migrate --revert --to RELEASE lists what a revert to that release drops; to drop it, revert with sqitch revert --set drop_data=yes';
    END IF;
END
$guard$;

-- taskboard.pick_next
CREATE OR REPLACE FUNCTION taskboard.pick_next(queue text, clock timestamp with time zone, most integer)
 RETURNS bigint[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_keeps boolean := pg_catalog.current_setting('taskboard.claim_cursor', true) IS NOT DISTINCT FROM 'on';
    v_name text := 'taskboard.cursor_' || pg_catalog.to_hex(pg_catalog.hashtext(pick_next.queue));
    -- The cursor: when the next walk is due (µs since the epoch), then the
    -- last picked job's priority, run_at (µs since the epoch) and id.
    v_cursor text[];
    v_due bigint;
    v_priority bigint;
    v_run_at timestamptz;
    v_id bigint;
    v_ids bigint[];
BEGIN
    IF v_keeps THEN
        v_cursor := pg_catalog.regexp_match(pg_catalog.current_setting(v_name, true),
                                            '^(\d{1,17}) (-?\d{1,12}) (-?\d{1,17}) (\d{1,18}) (.*)$');
    END IF;
    IF v_cursor IS NOT NULL AND v_cursor[5] = pick_next.queue
       AND (EXTRACT(epoch FROM pick_next.clock) * 1000000)::bigint < v_cursor[1]::bigint THEN
        v_priority := v_cursor[2]::bigint;
        v_run_at := 'epoch'::timestamptz + v_cursor[3]::bigint * interval '1 microsecond';
        v_ids := ARRAY(
            SELECT j.id
              FROM taskboard.jobs AS j
             WHERE j.queue = pick_next.queue
               AND j.state = 'queued'
               AND j.priority = v_priority
               AND (j.run_at, j.id) > (v_run_at, v_cursor[4]::bigint)
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
        IF EXISTS (
            SELECT
              FROM taskboard.jobs AS x
             WHERE x.queue = pick_next.queue
               AND x.state = 'running'
               AND x.lease_expires_at <= pick_next.clock) THEN
            RETURN NULL;
        END IF;
        v_ids := taskboard.pick_queued(pick_next.queue, pick_next.clock, pick_next.most);
        IF NOT v_keeps THEN
            RETURN v_ids;
        END IF;
        v_due := (EXTRACT(epoch FROM pick_next.clock) * 1000000)::bigint
                 + GREATEST(200000, 20 * (EXTRACT(epoch FROM pg_catalog.clock_timestamp() - pick_next.clock)
                                          * 1000000)::bigint);
    END IF;

    -- The cursor moves to the last job picked; none picked, none kept.
    SELECT j.priority, j.run_at, j.id
      INTO v_priority, v_run_at, v_id
      FROM taskboard.jobs AS j
     WHERE j.id = v_ids[pg_catalog.cardinality(v_ids)];
    PERFORM pg_catalog.set_config(v_name, CASE WHEN v_id IS NOT NULL THEN pg_catalog.concat_ws(' ',
        v_due, v_priority, (EXTRACT(epoch FROM v_run_at) * 1000000)::bigint, v_id, pick_next.queue) ELSE '' END,
        false);
    RETURN v_ids;
END
$function$;

COMMENT ON FUNCTION taskboard.pick_next(text,timestamp with time zone,integer) IS
$comment$pick_next(queue, clock, most) -> bigint[]
Internal: the picker of claim's common path (a queue without limits).
NULL when a lease of `queue` expired by `clock`: the claim then takes the
path that reclaims and buries. Else the first `most` queued jobs whose
run_at is due by `clock`, in claim order (priority, higher first, then
run_at, then id), locked FOR NO KEY UPDATE SKIP LOCKED, as pick_queued
picks them: a walk from the head of the queue's queued index.
A session with taskboard.claim_cursor = on (the driver's control
connections set it) keeps a cursor per queue in a session setting
(taskboard.cursor_<hash of the queue>): the claim-order key of the last
job it picked, and when its next walk from the head is due. Until then,
it picks the queued jobs after its cursor instead, and looks for no
expired lease; when those are fewer than `most` it walks from the head as
any claim does. A walk is due at least 200 ms after the last one, later
while walks are slow: twenty times the last walk's time, counted from the
claim's clock to the walk's end. So, while a transaction holds the xmin
horizon back and the head of the index fills with entries no claim can
use, most claims of such a session read only the jobs they take; what it
gives up: a job that becomes queued ahead of the cursor (a higher
priority, an earlier run_at, a release or retry committed late) and an
expired lease wait for the next walk of some session, unless a claim
finds fewer jobs after its cursor than it asked for. The setting is
transactional: a claim rolled back leaves the cursor as it was. A
malformed or foreign value counts as no cursor.
Writes nothing but that setting; the rows it locked stay locked until the
caller's transaction ends.
Called by claim; never granted to an application role.$comment$;

REVOKE ALL ON FUNCTION taskboard.pick_next(text,timestamp with time zone,integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";

-- taskboard.version
CREATE OR REPLACE FUNCTION taskboard.version()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
SELECT '0.7.2'::text
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
