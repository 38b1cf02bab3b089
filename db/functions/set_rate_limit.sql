-- set_rate_limit(queue, starts, per, by_key default false) -> boolean
-- From the next claim on, claim starts at most `starts` jobs of `queue` in
-- any window of length `per`, on the database's clock, across all workers
-- and under concurrent claimers; a reclaim of an expired lease is a start.
-- With by_key, each concurrency key gets `starts` per window of its own, and
-- jobs without a key are not limited by it; claim still takes the jobs of
-- other keys behind a key that used up its window. Jobs held back wait,
-- queued, neither failed nor delayed. The starts are counted from the claims
-- made since the limit was set: setting one waits for the claim
-- transactions of the queue still open. NULL starts and per remove the rate
-- limit and forget the queue's starts. True when this call changed the
-- limit, false when it already was this one.
-- Raises 22023 when queue is NULL, empty or longer than 200 characters,
-- only one of starts and per is NULL, starts is outside 1..100000, per is
-- not positive or longer than 31 days, or by_key is NULL, or true without a
-- limit. per is kept as a fixed length of time, a month counted as 30 days
-- and a day as 24 hours, so that the window is the same on every date and
-- in every time zone ('1 day' is kept as 24:00:00).

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.set_rate_limit(queue text, starts integer, per interval, by_key boolean DEFAULT false)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    -- per as a fixed length: months counted as 30 days and days as 24
    -- hours (as EXTRACT(epoch) counts them), so that the window is the same
    -- on every date and in every session's time zone.
    v_seconds numeric;
    v_per interval;
BEGIN
    v_checked := taskboard.check_name('queue', set_rate_limit.queue);
    v_checked := taskboard.check_arg((set_rate_limit.starts IS NULL) = (set_rate_limit.per IS NULL),
                     pg_catalog.format('starts and per must both be given, or both be NULL (no rate limit), got starts %s and per %s',
                                       coalesce(set_rate_limit.starts::text, 'NULL'), coalesce(set_rate_limit.per::text, 'NULL')));
    v_checked := taskboard.check_arg(set_rate_limit.by_key IS NOT NULL, 'by_key must be true or false, got NULL');
    v_checked := taskboard.check_arg(set_rate_limit.starts IS NOT NULL OR NOT set_rate_limit.by_key,
                     'by_key needs a rate limit: give starts and per, or by_key false to remove it');
    v_checked := taskboard.check_limit('starts', set_rate_limit.starts, 100000, 'no rate limit');
    IF set_rate_limit.per IS NOT NULL THEN
        v_seconds := EXTRACT(epoch FROM set_rate_limit.per);
        v_checked := taskboard.check_arg(v_seconds > 0, 'per must be positive, got ' || set_rate_limit.per);
        v_checked := taskboard.check_arg(v_seconds <= 31 * 86400, 'per must be at most 31 days, got ' || set_rate_limit.per);
        v_per := pg_catalog.make_interval(secs => v_seconds::double precision);
    END IF;

    IF set_rate_limit.starts IS NULL THEN
        -- No row is written for a queue that has none, and the log of the
        -- queue's starts goes with its limit.
        UPDATE taskboard.queues AS q
           SET rate_starts = NULL, rate_per = NULL, rate_by_key = false,
               updated_at = pg_catalog.clock_timestamp()
         WHERE q.queue = set_rate_limit.queue
           AND q.rate_starts IS NOT NULL;
        IF NOT FOUND THEN
            RETURN false;
        END IF;
        DELETE FROM taskboard.queue_starts AS s WHERE s.queue = set_rate_limit.queue;
    ELSE
        -- A rate limit must count the starts of the claims still in flight,
        -- as a first queue limit does (taskboard.set_queue_limit): each claim
        -- holds the queue's claim lock, shared, until its transaction ends,
        -- and this call waits for them; the claims after it take turns on
        -- the queue's row and log their starts.
        PERFORM pg_catalog.pg_advisory_xact_lock(1952605797, pg_catalog.hashtext(set_rate_limit.queue));
        INSERT INTO taskboard.queues AS q (queue, rate_starts, rate_per, rate_by_key)
        VALUES (set_rate_limit.queue, set_rate_limit.starts, v_per, set_rate_limit.by_key)
        ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
           SET rate_starts = EXCLUDED.rate_starts,
               rate_per = EXCLUDED.rate_per,
               rate_by_key = EXCLUDED.rate_by_key,
               updated_at = pg_catalog.clock_timestamp()
         WHERE (q.rate_starts, q.rate_per, q.rate_by_key)
               IS DISTINCT FROM (EXCLUDED.rate_starts, EXCLUDED.rate_per, EXCLUDED.rate_by_key);
        IF NOT FOUND THEN
            RETURN false;
        END IF;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = set_rate_limit.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(set_rate_limit.queue);
    END IF;
    RETURN true;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.set_rate_limit(text,integer,interval,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.set_rate_limit(text,integer,interval,boolean) TO taskboard_admin;
