-- check_lease(job_id, token) -> void
-- Internal: the check of the lease a holder's call names. Returns when
-- job_id and token are both given; raises 22023 'job_id must not be NULL'
-- or 'token must not be NULL' otherwise.
-- Called by complete, renew, fail, release and lease_state; never granted
-- to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_lease(job_id bigint, token uuid)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_given('job_id', check_lease.job_id);
    v_checked := taskboard.check_given('token', check_lease.token);
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_lease(bigint,uuid) FROM PUBLIC;
