-- CANDIDATE (bench/run.py --taskboard-sql), not deployed by Sqitch: REJECTED.
-- Faster on a busy queue (x1.13-1.17 in W1), but a session's generic plan
-- is made at its first call, and a worker usually first claims an empty
-- queue: that plan joined the chosen ids to the table by a sequential scan
-- per claimed job until the next ANALYZE (tests/sql/test_claim_plan.py). claim
-- is deployed with plan_cache_mode = force_custom_plan instead.
-- claim's RETURN QUERY is planned afresh on every call: the plan cache keeps
-- choosing custom plans (its generic plan, not knowing `batch`, costs more),
-- and planning this five-CTE statement takes about as long as running it.
-- A function-level plan_cache_mode keeps one generic plan per session.
ALTER FUNCTION taskboard.claim(text, text, integer, interval)
    SET plan_cache_mode = force_generic_plan;
