-- Revert taskboard:pause to its v0.4.2 definition

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- pause(queue) -> boolean
-- Pauses `queue`: from the next claim on, claim hands out nothing from it.
-- Its running jobs carry on, renew, complete and fail as usual; its queued
-- jobs wait. A queue needs no declaration: pausing one that has no jobs yet
-- works. True when this call paused it, false when it already was paused.
-- Raises 22023 when queue is NULL, empty or longer than 200 characters.

CREATE OR REPLACE FUNCTION taskboard.pause(queue text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF pause.queue IS NULL OR pause.queue = '' THEN
        RAISE EXCEPTION 'queue must not be NULL or empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(pause.queue) > 200 THEN
        RAISE EXCEPTION 'queue must be at most 200 characters, got %', pg_catalog.char_length(pause.queue)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    INSERT INTO taskboard.queues AS q (queue, paused)
    VALUES (pause.queue, true)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET paused = true,
           updated_at = pg_catalog.clock_timestamp()
     WHERE NOT q.paused;
    RETURN FOUND;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.pause(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.pause(text) TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
