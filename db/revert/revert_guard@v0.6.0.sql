-- Revert taskboard:revert_guard from pg
--
-- The guard of release 0.6.0, first of its changes to be reverted: a revert
-- stops here, before any of them, while taskboard.revert_losses('0.1.0')
-- finds data (how far the revert goes is not known to a script), unless the
-- Sqitch variable drop_data is yes (sqitch revert --set drop_data=yes). The
-- error names each kind of data and its rows, and changes nothing.
-- revert_losses stays as release 0.5.0 has it: this release counts nothing
-- more (a revert settles the dependency checks before it drops them).

\if :{?drop_data}
\else
\set drop_data no
\endif

BEGIN;

\set owner_role :prefix _owner

GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

SET LOCAL taskboard.drop_data TO :'drop_data';

DO $guard$
DECLARE
    v_lost text;
BEGIN
    SELECT pg_catalog.string_agg(pg_catalog.format('%s (%s rows, added in %s)', l.data, l.rows, l.added_in), ', ')
      INTO v_lost
      FROM taskboard.revert_losses('0.1.0') AS l;
    IF v_lost IS NOT NULL AND pg_catalog.current_setting('taskboard.drop_data') <> 'yes' THEN
        RAISE EXCEPTION 'a revert to a release before 0.6.0 may drop data: %', v_lost
            USING ERRCODE = '55000',
                  HINT = 'taskboard migrate --revert --to RELEASE lists what a revert to that release drops; to drop it, revert with sqitch revert --set drop_data=yes';
    END IF;
END
$guard$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
