-- Deploy taskboard:pause to pg
-- requires: pause@v0.4.2
-- requires: queues
-- requires: checks
--
-- The queue is checked by taskboard.check_name, with the messages it always had;
-- the contract, the function's comment, is unchanged.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE OR REPLACE FUNCTION taskboard.pause(queue text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    PERFORM taskboard.check_name('queue', pause.queue);

    INSERT INTO taskboard.queues AS q (queue, paused)
    VALUES (pause.queue, true)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET paused = true,
           updated_at = pg_catalog.clock_timestamp()
     WHERE NOT q.paused;
    RETURN FOUND;
END
$function$;

COMMENT ON FUNCTION taskboard.pause(text) IS
$comment$pause(queue) -> boolean
Pauses `queue`: from the next claim on, claim hands out nothing from it.
Its running jobs carry on, renew, complete and fail as usual; its queued
jobs wait. A queue needs no declaration: pausing one that has no jobs yet
works. True when this call paused it, false when it already was paused.
Raises 22023 when queue is NULL, empty or longer than 200 characters.$comment$;

REVOKE ALL ON FUNCTION taskboard.pause(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.pause(text) TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
