-- CANDIDATE (bench/run.py --taskboard-sql), not deployed by Sqitch.
-- claim's RETURN QUERY is planned afresh on every call: the plan cache keeps
-- choosing custom plans (its generic plan, not knowing `batch`, costs more),
-- and planning this five-CTE statement takes about as long as running it.
-- A function-level plan_cache_mode keeps one generic plan per session.
ALTER FUNCTION taskboard.claim(text, text, integer, interval)
    SET plan_cache_mode = force_generic_plan;
