-- check_choice(what, value, choices) -> void
-- Internal: the check of a text argument that names one of `choices`.
-- Returns when value is one of them; raises 22023
-- '<what> must be <a, b or c>, got <value quoted, or NULL>' otherwise.
-- Called by the owner's functions; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_choice(what text, value text, VARIADIC choices text[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF check_choice.value IS NULL OR NOT check_choice.value = ANY (check_choice.choices) THEN
        RAISE EXCEPTION '% must be % or %, got %', check_choice.what,
            pg_catalog.array_to_string(check_choice.choices[:pg_catalog.cardinality(check_choice.choices) - 1], ', '),
            check_choice.choices[pg_catalog.cardinality(check_choice.choices)],
            coalesce(pg_catalog.quote_literal(check_choice.value), 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_choice(text,text,text[]) FROM PUBLIC;
