-- check_flat(what, ndims) -> void
-- Internal: the check that arrays have at most one dimension. `what` names
-- the arrays, `ndims` holds their array_ndims (NULL for a NULL array).
-- Returns when none has more than one; raises 22023
-- '<what> must be a one-dimensional array' (one array) or
-- '<what> must be one-dimensional arrays' (several) otherwise.
-- Called by the owner's functions; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_flat(what text, VARIADIC ndims integer[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.unnest(check_flat.ndims) AS n(dims) WHERE n.dims > 1) THEN
        RAISE EXCEPTION '% must be %', check_flat.what,
            CASE WHEN pg_catalog.cardinality(check_flat.ndims) = 1 THEN 'a one-dimensional array'
                 ELSE 'one-dimensional arrays' END
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_flat(text,integer[]) FROM PUBLIC;
