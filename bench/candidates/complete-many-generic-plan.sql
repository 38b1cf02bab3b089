-- complete_many keeps one plan per session, as claim does, with sequential
-- scans off while it is planned (measured with bench/claimcost.py): without
-- it, each call was planned again (a custom plan), planning costing several
-- times the statement's run.
ALTER FUNCTION taskboard.complete_many(bigint[], uuid[], jsonb[])
    SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION taskboard.complete_many(bigint[], uuid[], jsonb[])
    SET enable_seqscan = off;
