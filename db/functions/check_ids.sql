-- check_ids(what, ids) -> void
-- Internal: the check of an array of job ids that `what` names. Returns when
-- `ids` is a one-dimensional array without NULL (empty included).
-- Raises 22023 '<what> must not be NULL' when ids is NULL, '<what> must be a
-- one-dimensional array' when it has more dimensions, '<what> must not
-- contain NULL' when an element is NULL. Never granted to an application
-- role.

-- Written by `make schema` from a fresh deploy (never by hand): the definition
-- is that of db/deploy/, the header above is the function's COMMENT ON FUNCTION.
CREATE OR REPLACE FUNCTION taskboard.check_ids(what text, ids bigint[])
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF check_ids.ids IS NULL THEN
        RAISE EXCEPTION '% must not be NULL', check_ids.what
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_ndims(check_ids.ids) > 1 THEN
        RAISE EXCEPTION '% must be a one-dimensional array', check_ids.what
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_position(check_ids.ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION '% must not contain NULL', check_ids.what
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_ids(text,bigint[]) FROM PUBLIC;
