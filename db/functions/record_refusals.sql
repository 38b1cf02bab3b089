-- record_refusals(kind, job_ids, tokens) -> void
-- Internal: the history lines of refused writes. For each job_ids[i], when
-- tokens[i] is a token the job's history knows (its lease was reclaimed or
-- cancelled: a line 'reclaimed' or 'cancelled' carries its digest), writes
-- one line of `kind` ('refused_complete', 'refused_fail' or
-- 'refused_renew') with that lease's worker, attempt, fence and deadline,
-- once per token and kind (a second refusal writes nothing); a token the
-- history does not know is not recorded. Empty arrays read nothing.
-- The job is held FOR KEY SHARE until the caller's statement ends: an
-- admin's prune of it that commits first takes the line with it, rather
-- than failing the refusal with 23503. A job another transaction holds
-- FOR UPDATE (deleting it: prune, or the accepted completion of a queue
-- that discards) gets no line, and the refusal does not wait for that
-- transaction: the job's history goes with it. Two workers whose leases
-- crossed, each refused on the job the other completes, would otherwise
-- wait for each other.
-- Called by complete_many, renew_many and fail, after the write they
-- refused; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.record_refusals(kind text, job_ids bigint[], tokens uuid[])
 RETURNS void
 LANGUAGE sql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
INSERT INTO taskboard.job_events
       (job_id, kind, worker, attempt, fence, lease_expires_at, token_digest)
SELECT DISTINCT ON (e.job_id, e.token_digest)
       e.job_id, record_refusals.kind, e.worker, e.attempt, e.fence, e.lease_expires_at, e.token_digest
  FROM unnest(record_refusals.job_ids, record_refusals.tokens) AS i(id, token)
  JOIN taskboard.job_events AS e
    ON e.job_id = i.id
   AND e.token_digest = pg_catalog.sha256(pg_catalog.uuid_send(i.token))
   AND e.kind IN ('reclaimed', 'cancelled')
 WHERE EXISTS (SELECT FROM taskboard.jobs AS k WHERE k.id = e.job_id FOR KEY SHARE SKIP LOCKED)
 ORDER BY e.job_id, e.token_digest
ON CONFLICT ON CONSTRAINT job_events_once DO NOTHING
$function$;

REVOKE ALL ON FUNCTION taskboard.record_refusals(text,bigint[],uuid[]) FROM PUBLIC;
