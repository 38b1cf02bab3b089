-- check_trace_context(value) -> void
-- Internal: the check of a W3C trace context as a job stores it. Returns
-- when `value` is NULL, or a JSON object of strings of at most 8192 bytes as
-- text; raises 22023 'trace_context must be a JSON object of strings, got
-- <value>' or 'trace_context must be at most 8192 bytes as text, got <n>'.
-- Called by enqueue and enqueue_many; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_trace_context(value jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF pg_catalog.jsonb_typeof(check_trace_context.value) <> 'object'
       OR EXISTS (SELECT FROM pg_catalog.jsonb_each(check_trace_context.value) AS e(key, value)
                   WHERE pg_catalog.jsonb_typeof(e.value) <> 'string') THEN
        RAISE EXCEPTION 'trace_context must be a JSON object of strings, got %', check_trace_context.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.octet_length(check_trace_context.value::text) > 8192 THEN
        RAISE EXCEPTION 'trace_context must be at most 8192 bytes as text, got %',
            pg_catalog.octet_length(check_trace_context.value::text)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_trace_context(jsonb) FROM PUBLIC;
