-- complete_held(job_ids, tokens, results, clock) -> bigint
-- Internal: the write of taskboard.complete_many for more than one job.
-- Marks succeeded, with results[i] and finished_at = clock, each job of
-- job_ids[i] that is running under tokens[i], in one update, and answers
-- how many it marked. Its rows are found through the primary key and
-- written in job_id order, the order renew_many locks them in: a row
-- another transaction is writing is waited for and tested again as that
-- transaction left it. results NULL: every result is NULL. Checks nothing:
-- complete_many checked the arguments.
-- Called by complete_many; never granted to an application role.
--
-- plan_cache_mode = force_generic_plan with enable_seqscan = off, as
-- complete_many: one plan per session, walking the primary key. The state
-- test is a function call, which no partial index's predicate matches (a
-- plan kept from an empty table walked the running index). enable_hashjoin
-- and enable_bitmapscan off keep the job_id order: the plan is then a merge
-- join or a nested loop whose outer side is either the input sorted by id
-- or the primary key walked in id order, and each keeps its outer side's
-- order (a bitmap scan reads the rows in the table's order, which a hash
-- join keeps: one worker's renewer and completer then deadlocked).

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.complete_held(job_ids bigint[], tokens uuid[], results jsonb[], clock timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_bitmapscan TO 'off'
AS $function$
DECLARE
    v_done bigint;
BEGIN
    UPDATE taskboard.jobs AS j
       SET state = 'succeeded',
           result = i.result,
           finished_at = complete_held.clock
      FROM (SELECT u.id, u.token, u.result
              FROM unnest(complete_held.job_ids, complete_held.tokens, complete_held.results)
                   AS u(id, token, result)
             ORDER BY u.id) AS i
     WHERE j.id = ANY (complete_held.job_ids)
       AND j.id = i.id
       AND j.lease_token = i.token
       AND pg_catalog.texteq(j.state, 'running');
    GET DIAGNOSTICS v_done = ROW_COUNT;
    RETURN v_done;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.complete_held(bigint[],uuid[],jsonb[],timestamp with time zone) FROM PUBLIC;
