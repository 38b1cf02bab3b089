-- check_limit(what, value, most, none_means) -> void
-- Internal: the check of a queue's limit. Returns when `value` is NULL (no
-- limit) or 1 to `most` (at least 1 when most is NULL); raises 22023
-- '<what> must be at least 1 or NULL (<none_means>), got <value>; pause the
-- queue to stop it' (or 'between 1 and <most> or NULL ...') otherwise.
-- Called by set_limit and set_rate_limit; never granted to an application
-- role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_limit(what text, value integer, most integer, none_means text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF check_limit.value < 1 OR check_limit.value > check_limit.most THEN
        RAISE EXCEPTION '% must be % or NULL (%), got %; pause the queue to stop it', check_limit.what,
            CASE WHEN check_limit.most IS NULL THEN 'at least 1' ELSE 'between 1 and ' || check_limit.most END,
            check_limit.none_means, check_limit.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_limit(text,integer,integer,text) FROM PUBLIC;
