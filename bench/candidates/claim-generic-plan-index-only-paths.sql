-- CANDIDATE (bench/run.py --taskboard-sql): ACCEPTED, now claim's own settings
-- (db/functions/claim.sql); applying it to a current schema changes nothing.
-- claim-generic-plan.sql's speed without its trap: one generic plan per
-- session, made with sequential scans disabled, so even a plan made while
-- the table was empty walks indexes (every access claim makes has one).
ALTER FUNCTION taskboard.claim(text, text, integer, interval)
    SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION taskboard.claim(text, text, integer, interval)
    SET enable_seqscan = off;
