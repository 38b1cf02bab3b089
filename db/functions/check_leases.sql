-- check_leases(arrays, job_ids, tokens, other_ndims) -> void
-- Internal: the check of the leases a batch call names: job_ids[i] with
-- its token tokens[i]. Returns when both arrays are given, have at most one
-- dimension (and so has the array whose array_ndims is other_ndims, when
-- given), hold no NULL and have as many elements. Raises 22023, in this
-- order: 'job_ids must not be NULL', 'tokens must not be NULL',
-- '<arrays> must be one-dimensional arrays' (`arrays` names them all),
-- 'job_ids must not contain NULL', 'tokens must not contain NULL',
-- 'job_ids has <n> elements but tokens has <m>'.
-- Called by complete_many and renew_many; never granted to an application
-- role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_leases(arrays text, job_ids bigint[], tokens uuid[], other_ndims integer DEFAULT NULL::integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_given('job_ids', check_leases.job_ids);
    v_checked := taskboard.check_given('tokens', check_leases.tokens);
    v_checked := taskboard.check_flat(check_leases.arrays, pg_catalog.array_ndims(check_leases.job_ids),
                                      pg_catalog.array_ndims(check_leases.tokens), check_leases.other_ndims);
    v_checked := taskboard.check_items('job_ids', check_leases.job_ids);
    v_checked := taskboard.check_items('tokens', check_leases.tokens);
    v_checked := taskboard.check_lengths('job_ids', pg_catalog.cardinality(check_leases.job_ids),
                                         'tokens', pg_catalog.cardinality(check_leases.tokens));
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_leases(text,bigint[],uuid[],integer) FROM PUBLIC;
