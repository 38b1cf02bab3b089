-- The taskboard schema as deployed: written by `make schema` from pg_dump of a fresh
-- deploy (never by hand); `make test` fails when it differs. The changes that build
-- it are db/deploy/ in the order of db/sqitch.plan.

--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET transaction_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: taskboard; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA taskboard;

--
-- Name: SCHEMA taskboard; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON SCHEMA taskboard IS 'Taskboard job queue: who holds a job, until when, and whether a write is still allowed.';

--
-- Name: claimed; Type: TYPE; Schema: taskboard; Owner: -
--

CREATE TYPE taskboard.claimed AS (
	job_id bigint,
	token uuid,
	task text,
	payload jsonb,
	attempt integer,
	lease_expires_at timestamp with time zone,
	idempotency_key uuid,
	fence bigint,
	trace_context jsonb,
	waited interval
);

--
-- Name: job_info; Type: TYPE; Schema: taskboard; Owner: -
--

CREATE TYPE taskboard.job_info AS (
	job_id bigint,
	queue text,
	task text,
	state text,
	attempt integer,
	max_attempts integer,
	priority integer,
	run_at timestamp with time zone,
	created_at timestamp with time zone,
	finished_at timestamp with time zone,
	result jsonb,
	errors jsonb,
	started_at timestamp with time zone,
	payload jsonb,
	fence bigint,
	concurrency_key text,
	waiting_for bigint[]
);

--
-- Name: job_summary; Type: TYPE; Schema: taskboard; Owner: -
--

CREATE TYPE taskboard.job_summary AS (
	job_id bigint,
	queue text,
	task text,
	state text,
	attempt integer,
	max_attempts integer,
	priority integer,
	run_at timestamp with time zone,
	created_at timestamp with time zone,
	started_at timestamp with time zone,
	finished_at timestamp with time zone,
	failures integer,
	last_error text
);

--
-- Name: TYPE job_summary; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON TYPE taskboard.job_summary IS 'One line of a list of jobs (find_jobs_summary): no payload, result, errors or token.';

--
-- Name: bury_spent(text, timestamp with time zone); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.bury_spent(queue text, clock timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    v_buried bigint[];
BEGIN
    IF NOT EXISTS (
        SELECT
          FROM taskboard.jobs AS x
         WHERE x.queue = bury_spent.queue
           AND x.state = 'running'
           AND x.lease_expires_at <= bury_spent.clock
           AND x.attempt >= x.max_attempts) THEN
        RETURN;
    END IF;
    WITH doomed AS MATERIALIZED (
        -- Locked once per call: an IN (subquery ... FOR NO KEY UPDATE) was
        -- planned to rerun per running row.
        SELECT x.id
          FROM taskboard.jobs AS x
         WHERE x.queue = bury_spent.queue
           AND x.state = 'running'
           AND x.lease_expires_at <= bury_spent.clock
           AND x.attempt >= x.max_attempts
           FOR NO KEY UPDATE SKIP LOCKED
    ),
    buried AS (
        -- Found by id among this queue's running jobs: a plan made while
        -- the table was empty walks the running jobs' index, and without
        -- the queue it would walk every queue's.
        UPDATE taskboard.jobs AS j
           SET state = 'dead',
               finished_at = bury_spent.clock,
               errors = j.errors || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                   'error', 'lease expired',
                   'attempt', j.attempt,
                   'worker', j.claimed_by,
                   'at', bury_spent.clock))
         WHERE j.id = ANY (ARRAY(SELECT d.id FROM doomed AS d))
           AND j.queue = bury_spent.queue
           AND j.state = 'running'
        RETURNING j.id
    )
    SELECT ARRAY(SELECT b.id FROM buried AS b) INTO v_buried;
    -- Their dependents, read in a statement of its own with the rows
    -- locked: this snapshot shows every edge committed before the locks.
    v_buried := ARRAY(SELECT b.id FROM pg_catalog.unnest(v_buried) AS b(id)
                       WHERE EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = b.id)
                          OR pg_catalog.current_setting('transaction_isolation') <> 'read committed');
    IF pg_catalog.cardinality(v_buried) > 0 THEN
        PERFORM taskboard.settle_dependents(v_buried);
    END IF;
END
$$;

--
-- Name: FUNCTION bury_spent(queue text, clock timestamp with time zone); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.bury_spent(queue text, clock timestamp with time zone) IS 'bury_spent(queue, clock) -> void
Internal: a picker of taskboard.claim, the one that takes nothing. The
running jobs of `queue` whose lease expired by `clock` with no attempt
left become dead (finished_at = clock, error ''lease expired'' with their
attempt and worker), never handed out; one another transaction holds is
passed over (SKIP LOCKED). The jobs waiting on them are settled in this
transaction (taskboard.settle_dependents), found from the buried rows
themselves (a dependent enqueued while the claim ran is among them).
Reads only this queue''s running jobs, and writes no lease.
Called by claim; never granted to an application role.';

--
-- Name: cancel(bigint); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.cancel(job_id bigint) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
BEGIN
    v_checked := taskboard.check_given('job_id', cancel.job_id);

    -- The history line, from the row as it is before the cancel (locked
    -- here, so the UPDATE below changes the row this line describes).
    INSERT INTO taskboard.job_events
           (job_id, kind, actor, worker, attempt, fence, lease_expires_at, token_digest)
    SELECT j.id, 'cancelled',
           -- The role in force: the one SET ROLE chose, else the login.
           CASE pg_catalog.current_setting('role')
               WHEN 'none' THEN pg_catalog.session_user()::text
               ELSE pg_catalog.current_setting('role')
           END,
           CASE WHEN j.state = 'running' THEN j.claimed_by END,
           CASE WHEN j.state = 'running' THEN j.attempt END,
           CASE WHEN j.state = 'running' THEN j.fence END,
           CASE WHEN j.state = 'running' THEN j.lease_expires_at END,
           CASE WHEN j.state = 'running' THEN pg_catalog.sha256(pg_catalog.uuid_send(j.lease_token)) END
      FROM taskboard.jobs AS j
     WHERE j.id = cancel.job_id
       AND j.state IN ('waiting', 'queued', 'running')
       -- The lock the UPDATE below takes anyway: a FOR KEY SHARE held by
       -- an open enqueue that depends on the job does not hold it up.
       FOR NO KEY UPDATE;

    UPDATE taskboard.jobs AS j
       SET state = 'cancelled',
           finished_at = v_now,
           -- The holder of a live lease may act until its deadline.
           held_until = CASE WHEN j.state = 'running' AND j.lease_expires_at > v_now
                             THEN j.lease_expires_at
                             ELSE j.held_until
                        END
     WHERE j.id = cancel.job_id
       AND j.state IN ('waiting', 'queued', 'running');
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- Its dependents, read in a statement of their own with the row locked:
    -- this snapshot shows every edge committed before the lock (the
    -- UPDATE's may predate a wait for it).
    IF EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = cancel.job_id)
       OR pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM taskboard.settle_dependents(ARRAY[cancel.job_id]);
    END IF;
    RETURN true;
END
$$;

--
-- Name: FUNCTION cancel(job_id bigint); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.cancel(job_id bigint) IS 'cancel(job_id) -> boolean
An administrator stops a job: waiting, queued or running becomes
cancelled with finished_at. The jobs waiting on it are cancelled after it
(with the error ''dependency N ended cancelled''), but for those enqueued
with on_dependency_failure ''run'', which count it as ended and are due no
sooner than its held_until (below); a job with very many dependents has
1000 of them settled in this call and the rest soon after, by later
claims. A holder''s token stops being current, so its later renew,
complete, fail and release answer NULL/false. A running job whose lease
has not ended keeps, until that lease''s deadline (held_until), its place
under its queue''s limit and its dedupe key: the holder may believe it
holds the job until then, so no other job takes its place, a job enqueued
with its key meanwhile is due no sooner, and a retry of it neither.
The cancel is a line of the job''s history (taskboard.job_history), naming
the holder of a running job, and as its actor the role in force (the one
SET ROLE chose, else the login).
true:  cancelled now.
false: the job is already finished (succeeded, dead, cancelled) or unknown.
Raises 22023 when job_id is NULL.';

--
-- Name: check_arg(boolean, text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_arg(ok boolean, message text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF check_arg.ok IS NOT TRUE THEN
        RAISE EXCEPTION USING MESSAGE = check_arg.message, ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_arg(ok boolean, message text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_arg(ok boolean, message text) IS 'check_arg(ok, message) -> void
Internal: the check of an argument by a rule its caller states once, in
the call. Returns when `ok` is true; raises 22023 with `message` when it
is false or NULL. The rules shared by several functions have checks of
their own (check_name, check_key, check_given, check_between, ...).
Called by the owner''s functions; never granted to an application role.';

--
-- Name: check_between(text, bigint, bigint, bigint); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_between(what text, value bigint, low bigint, high bigint DEFAULT NULL::bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF check_between.value IS NULL OR check_between.value < check_between.low
       OR check_between.value > check_between.high THEN
        RAISE EXCEPTION '% must be %, got %', check_between.what,
            CASE WHEN check_between.high IS NULL THEN 'at least ' || check_between.low
                 ELSE 'between ' || check_between.low || ' and ' || check_between.high END,
            coalesce(check_between.value::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_between(what text, value bigint, low bigint, high bigint); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_between(what text, value bigint, low bigint, high bigint) IS 'check_between(what, value, low, high) -> void
Internal: the check of a count. Returns when `value` is not NULL and
within low..high (at least low when high is NULL); raises 22023
''<what> must be between <low> and <high>, got <value>'' or
''<what> must be at least <low>, got <value>'' otherwise (NULL as NULL).
Called by the owner''s functions; never granted to an application role.';

--
-- Name: check_choice(text, text, text[]); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_choice(what text, value text, VARIADIC choices text[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF check_choice.value IS NULL OR NOT check_choice.value = ANY (check_choice.choices) THEN
        RAISE EXCEPTION '% must be % or %, got %', check_choice.what,
            pg_catalog.array_to_string(check_choice.choices[:pg_catalog.cardinality(check_choice.choices) - 1], ', '),
            check_choice.choices[pg_catalog.cardinality(check_choice.choices)],
            coalesce(pg_catalog.quote_literal(check_choice.value), 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_choice(what text, value text, VARIADIC choices text[]); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_choice(what text, value text, VARIADIC choices text[]) IS 'check_choice(what, value, choices) -> void
Internal: the check of a text argument that names one of `choices`.
Returns when value is one of them; raises 22023
''<what> must be <a, b or c>, got <value quoted, or NULL>'' otherwise.
Called by the owner''s functions; never granted to an application role.';

--
-- Name: check_delay(text, interval, text, boolean); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_delay(what text, value interval, most text, back boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_clock timestamptz := pg_catalog.clock_timestamp();
    v_far   boolean;
    v_end   timestamptz;
BEGIN
    v_far := check_delay.value IS NOT NULL
             AND (pg_catalog.abs(EXTRACT(year FROM check_delay.value)) > 2000
             OR pg_catalog.abs(EXTRACT(day FROM check_delay.value)) > 730000
             OR pg_catalog.abs(EXTRACT(hour FROM check_delay.value)) > 17520000);
    IF NOT v_far THEN
        v_end := CASE WHEN check_delay.back THEN v_clock - check_delay.value ELSE v_clock + check_delay.value END;
    END IF;
    IF check_delay.value IS NULL
       OR (v_far AND check_delay.value < interval '0')
       OR (NOT v_far AND (CASE WHEN check_delay.back THEN v_end > v_clock ELSE v_end < v_clock END)) THEN
        RAISE EXCEPTION '% must not be NULL or negative, got %', check_delay.what, check_delay.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_far OR (CASE WHEN check_delay.back THEN v_end < v_clock - check_delay.most::interval
                      ELSE v_end > v_clock + check_delay.most::interval END) THEN
        RAISE EXCEPTION '% must be at most %, got %', check_delay.what, check_delay.most, check_delay.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_delay(what text, value interval, most text, back boolean); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_delay(what text, value interval, most text, back boolean) IS 'check_delay(what, value, most, back) -> void
Internal: the check of a span of time that may be zero: a delay from now
(back false) or an age before now (back true). Returns when `value` is
not NULL and clock <= clock + value <= clock + most (clock - value for an
age), months and days counted as the calendar makes them; `most` is the
bound as its message names it (''12 hours''). Raises 22023
''<what> must not be NULL or negative, got <value>'' or
''<what> must be at most <most>, got <value>'' otherwise. A part (months,
days, time) beyond 2000 years could carry the clock out of the timestamp
range: such a value is judged by its sign alone, and is never within most.
Called by release and prune; never granted to an application role.';

--
-- Name: check_flat(text, integer[]); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_flat(what text, VARIADIC ndims integer[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.unnest(check_flat.ndims) AS n(dims) WHERE n.dims > 1) THEN
        RAISE EXCEPTION '% must be %', check_flat.what,
            CASE WHEN pg_catalog.cardinality(check_flat.ndims) = 1 THEN 'a one-dimensional array'
                 ELSE 'one-dimensional arrays' END
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_flat(what text, VARIADIC ndims integer[]); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_flat(what text, VARIADIC ndims integer[]) IS 'check_flat(what, ndims) -> void
Internal: the check that arrays have at most one dimension. `what` names
the arrays, `ndims` holds their array_ndims (NULL for a NULL array).
Returns when none has more than one; raises 22023
''<what> must be a one-dimensional array'' (one array) or
''<what> must be one-dimensional arrays'' (several) otherwise.
Called by the owner''s functions; never granted to an application role.';

--
-- Name: check_given(text, anyelement, text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_given(what text, value anyelement, hint text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF check_given.value IS NULL THEN
        RAISE EXCEPTION '% must not be NULL%', check_given.what, coalesce(' (' || check_given.hint || ')', '')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_given(what text, value anyelement, hint text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_given(what text, value anyelement, hint text) IS 'check_given(what, value, hint) -> void
Internal: the check of an argument that must be given. Returns when
`value` is not NULL; raises 22023 ''<what> must not be NULL'' otherwise,
followed by '' (<hint>)'' when a hint is given.
Called by the owner''s functions; never granted to an application role.';

--
-- Name: check_interval(text, interval, interval); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_interval(what text, value interval, most interval) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_clock timestamptz := pg_catalog.clock_timestamp();
    v_far boolean;
    v_epoch numeric;
    v_seconds bigint;
    v_unit text;
    v_count bigint;
    v_most text;
BEGIN
    -- A part (months, days, time) beyond 2000 years could carry clock + value
    -- out of the timestamp range: such a value is judged by its sign alone,
    -- never added to the clock, and refused either way.
    v_far := check_interval.value IS NOT NULL
             AND (pg_catalog.abs(EXTRACT(year FROM check_interval.value)) > 2000
                  OR pg_catalog.abs(EXTRACT(day FROM check_interval.value)) > 730000
                  OR pg_catalog.abs(EXTRACT(hour FROM check_interval.value)) > 17520000);
    IF check_interval.value IS NULL
       OR (v_far AND check_interval.value <= interval '0')
       OR (NOT v_far AND v_clock + check_interval.value <= v_clock) THEN
        RAISE EXCEPTION '% must be positive, got %', check_interval.what, check_interval.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_far OR v_clock + check_interval.value > v_clock + check_interval.most THEN
        -- The bound in the largest whole unit (12 hours, not 12:00:00); a
        -- bound that is no whole number of seconds as its interval text.
        v_epoch := EXTRACT(epoch FROM check_interval.most);
        IF v_epoch <> pg_catalog.trunc(v_epoch) THEN
            v_most := check_interval.most::text;
        ELSE
            v_seconds := v_epoch::bigint;
            SELECT u.unit, v_seconds / u.seconds
              INTO v_unit, v_count
              FROM (VALUES (1, 'day', 86400), (2, 'hour', 3600), (3, 'minute', 60), (4, 'second', 1))
                   AS u(ord, unit, seconds)
             WHERE v_seconds % u.seconds = 0
             ORDER BY u.ord
             LIMIT 1;
            v_most := v_count || ' ' || v_unit || CASE WHEN v_count = 1 THEN '' ELSE 's' END;
        END IF;
        RAISE EXCEPTION '% must be at most %, got %', check_interval.what, v_most, check_interval.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_interval(what text, value interval, most interval); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_interval(what text, value interval, most interval) IS 'check_interval(what, value, most) -> void
Internal: the check of a duration (a lease, a retry delay) that `what`
names, by the deadline it gives: returns when clock + value is later than
clock and no later than clock + most, clock being clock_timestamp() (so a
month and a day count as the calendar makes them, not as 30 days and 24
hours).
Raises 22023 ''<what> must be positive, got <value>'' when value is NULL or
clock + value is not later than clock, ''<what> must be at most <most>, got
<value>'' when clock + value is later than clock + most (''infinity''
included), most written in its largest whole unit (12 hours), or as its
interval text when it is no whole number of seconds (00:00:00.5). A value
with a part (years, days or hours) beyond 2000 years is refused by its
sign, positive or at most, without being added to the clock. Never granted
to an application role.';

--
-- Name: check_items(text, anyarray); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_items(what text, value anyarray) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF pg_catalog.array_position(check_items.value, NULL) IS NOT NULL THEN
        RAISE EXCEPTION '% must not contain NULL', check_items.what
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_items(what text, value anyarray); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_items(what text, value anyarray) IS 'check_items(what, value) -> void
Internal: the check of an array''s elements. Returns when no element of
`value` is NULL (a NULL array has none); raises 22023
''<what> must not contain NULL'' otherwise.
Called by the owner''s functions; never granted to an application role.';

--
-- Name: check_key(text, text, integer, text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_key(what text, value text, max_chars integer, null_means text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF check_key.value = '' THEN
        RAISE EXCEPTION '% must not be empty (%)', check_key.what, check_key.null_means
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(check_key.value) > check_key.max_chars THEN
        RAISE EXCEPTION '% must be at most % characters, got %',
            check_key.what, check_key.max_chars, pg_catalog.char_length(check_key.value)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_key(what text, value text, max_chars integer, null_means text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_key(what text, value text, max_chars integer, null_means text) IS 'check_key(what, value, max_chars, null_means) -> void
Internal: the check of a text argument that may be left out (a key, a
filter). Returns when `value` is NULL, or 1 to max_chars characters long
(any length when max_chars is NULL). Raises 22023
''<what> must not be empty (<null_means>)'' when value is empty,
''<what> must be at most <max_chars> characters, got <length>'' when longer.
Called by the owner''s functions; never granted to an application role.';

--
-- Name: check_lease(bigint, uuid); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_lease(job_id bigint, token uuid) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_given('job_id', check_lease.job_id);
    v_checked := taskboard.check_given('token', check_lease.token);
END
$$;

--
-- Name: FUNCTION check_lease(job_id bigint, token uuid); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_lease(job_id bigint, token uuid) IS 'check_lease(job_id, token) -> void
Internal: the check of the lease a holder''s call names. Returns when
job_id and token are both given; raises 22023 ''job_id must not be NULL''
or ''token must not be NULL'' otherwise.
Called by complete, renew, fail, release and lease_state; never granted
to an application role.';

--
-- Name: check_leases(text, bigint[], uuid[], integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_leases(arrays text, job_ids bigint[], tokens uuid[], other_ndims integer DEFAULT NULL::integer) RETURNS void
    LANGUAGE plpgsql
    AS $$
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
$$;

--
-- Name: FUNCTION check_leases(arrays text, job_ids bigint[], tokens uuid[], other_ndims integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_leases(arrays text, job_ids bigint[], tokens uuid[], other_ndims integer) IS 'check_leases(arrays, job_ids, tokens, other_ndims) -> void
Internal: the check of the leases a batch call names: job_ids[i] with
its token tokens[i]. Returns when both arrays are given, have at most one
dimension (and so has the array whose array_ndims is other_ndims, when
given), hold no NULL and have as many elements. Raises 22023, in this
order: ''job_ids must not be NULL'', ''tokens must not be NULL'',
''<arrays> must be one-dimensional arrays'' (`arrays` names them all),
''job_ids must not contain NULL'', ''tokens must not contain NULL'',
''job_ids has <n> elements but tokens has <m>''.
Called by complete_many and renew_many; never granted to an application
role.';

--
-- Name: check_lengths(text, integer, text, integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_lengths(what text, n integer, other text, m integer) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF check_lengths.n <> check_lengths.m THEN
        RAISE EXCEPTION '% has % elements but % has %',
            check_lengths.what, check_lengths.n, check_lengths.other, check_lengths.m
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_lengths(what text, n integer, other text, m integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_lengths(what text, n integer, other text, m integer) IS 'check_lengths(what, n, other, m) -> void
Internal: the check that two arrays pair up: `what` has n elements and
`other` m. Returns when n = m or either is NULL; raises 22023
''<what> has <n> elements but <other> has <m>'' otherwise.
Called by the owner''s functions; never granted to an application role.';

--
-- Name: check_limit(text, integer, integer, text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_limit(what text, value integer, most integer, none_means text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF check_limit.value < 1 OR check_limit.value > check_limit.most THEN
        RAISE EXCEPTION '% must be % or NULL (%), got %; pause the queue to stop it', check_limit.what,
            CASE WHEN check_limit.most IS NULL THEN 'at least 1' ELSE 'between 1 and ' || check_limit.most END,
            check_limit.none_means, check_limit.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_limit(what text, value integer, most integer, none_means text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_limit(what text, value integer, most integer, none_means text) IS 'check_limit(what, value, most, none_means) -> void
Internal: the check of a queue''s limit. Returns when `value` is NULL (no
limit) or 1 to `most` (at least 1 when most is NULL); raises 22023
''<what> must be at least 1 or NULL (<none_means>), got <value>; pause the
queue to stop it'' (or ''between 1 and <most> or NULL ...'') otherwise.
Called by set_limit and set_rate_limit; never granted to an application
role.';

--
-- Name: check_name(text, text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_name(what text, value text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF check_name.value IS NULL OR check_name.value = '' THEN
        RAISE EXCEPTION '% must not be NULL or empty', check_name.what
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(check_name.value) > 200 THEN
        RAISE EXCEPTION '% must be at most 200 characters, got %', check_name.what, pg_catalog.char_length(check_name.value)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_name(what text, value text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_name(what text, value text) IS 'check_name(what, value) -> void
Internal: the check of a name (a queue, task, worker or schedule) that
`what` names. Returns when `value` is 1 to 200 characters long.
Raises 22023 ''<what> must not be NULL or empty'' when value is NULL or
empty, ''<what> must be at most 200 characters, got <length>'' when longer.
Called by the functions that take a name; never granted to an application
role.';

--
-- Name: check_recent(interval); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_recent(recent interval) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_clock timestamptz := pg_catalog.clock_timestamp();
BEGIN
    IF check_recent.recent IS NULL
       OR pg_catalog.abs(EXTRACT(year FROM check_recent.recent)) > 2000
       OR pg_catalog.abs(EXTRACT(day FROM check_recent.recent)) > 730000
       OR pg_catalog.abs(EXTRACT(hour FROM check_recent.recent)) > 17520000
       OR v_clock - check_recent.recent >= v_clock
       OR v_clock - check_recent.recent < v_clock - interval '31 days' THEN
        RAISE EXCEPTION 'recent must be positive and at most 31 days, got %',
            coalesce(check_recent.recent::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_recent(recent interval); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_recent(recent interval) IS 'check_recent(recent) -> void
Internal: the check of the window a report of recent activity covers.
Returns when `recent` is positive and at most 31 days, by the time it
gives: clock - 31 days <= clock - recent < clock, months and days counted
as the calendar makes them. Raises 22023 ''recent must be positive and at
most 31 days, got <recent>'' (NULL as NULL) otherwise; a part (months,
days, time) beyond 2000 years is refused without being added to the clock.
Called by queue_overview and job_activity; never granted to an
application role.';

--
-- Name: check_time(text, timestamp with time zone); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_time(what text, value timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF check_time.value IS NULL
       OR NOT (check_time.value >= timestamptz '0001-01-01 00:00:00+00'
               AND check_time.value < timestamptz '10000-01-01 00:00:00+00') THEN
        RAISE EXCEPTION '% must be between 0001-01-01 and 9999-12-31, got %', check_time.what, check_time.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

--
-- Name: FUNCTION check_time(what text, value timestamp with time zone); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_time(what text, value timestamp with time zone) IS 'check_time(what, value) -> void
Internal: the check of a time that `what` names (a run_at, a slot).
Returns when `value` is inside the years 1 to 9999 (UTC): from
0001-01-01 00:00:00+00, before 10000-01-01 00:00:00+00.
Raises 22023 ''<what> must be between 0001-01-01 and 9999-12-31, got
<value>'' otherwise (NULL, ''infinity'' and ''-infinity'' included). Called by
the functions that take a time; never granted to an application role.';

--
-- Name: check_trace_context(jsonb); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.check_trace_context(value jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
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
$$;

--
-- Name: FUNCTION check_trace_context(value jsonb); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.check_trace_context(value jsonb) IS 'check_trace_context(value) -> void
Internal: the check of a W3C trace context as a job stores it. Returns
when `value` is NULL, or a JSON object of strings of at most 8192 bytes as
text; raises 22023 ''trace_context must be a JSON object of strings, got
<value>'' or ''trace_context must be at most 8192 bytes as text, got <n>''.
Called by enqueue and enqueue_many; never granted to an application role.';

--
-- Name: claim(text, text, integer, interval); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.claim(queue text, worker text, batch integer DEFAULT 1, lease interval DEFAULT '00:01:00'::interval) RETURNS SETOF taskboard.claimed
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
    v_paused boolean;
    v_limit integer;
    -- How many queued jobs a round may start (v_room) and how many starts
    -- it may make, reclaims included (v_cap): what is left of the batch,
    -- or less under a limit.
    v_room integer;
    v_cap integer;
    -- The queue's limit per concurrency key, and the keys a round leaves
    -- out: those at it, and those whose rate window is full.
    v_key_limit integer;
    v_full_keys text[];
    -- The queue's rate limit: at most v_rate_starts starts per v_rate_per,
    -- of the queue or (v_rate_by_key) of each key, and the keys whose
    -- window is full (found once, kept for the rounds after).
    v_rate_starts integer;
    v_rate_per interval;
    v_rate_by_key boolean := false;
    v_rate_full_keys text[] := '{}';
    -- Under a key limit or a rate per key (v_keyed) a claim goes round
    -- again while it is short of its batch and its last round started
    -- something: rows handed out so far, how many the next round may hand
    -- out, and the last round's rows. The first round goes round again too
    -- when a spent lease of a key is left to bury (v_frees).
    v_keyed boolean;
    v_taken integer := 0;
    v_want integer := claim.batch;
    v_rows integer;
    v_frees boolean := false;
    -- A round's candidates: its reclaims, then the queued jobs it picked.
    v_reclaims bigint[];
    v_ids bigint[];
BEGIN
    v_checked := taskboard.check_name('queue', claim.queue);
    v_checked := taskboard.check_name('worker', claim.worker);
    v_checked := taskboard.check_between('batch', claim.batch, 1, 1000);
    v_checked := taskboard.check_interval('lease', claim.lease, interval '12 hours');

    -- Dependency edges written while a dependency could end, and ends with
    -- dependents left to settle, once their transactions have committed: a
    -- few of them per claim, whatever its queue (most claims find none).
    IF EXISTS (SELECT FROM taskboard.dependency_checks) THEN
        PERFORM taskboard.recheck_dependencies();
    END IF;

    -- A claim in flight is one a first limit must count: it holds its
    -- queue's advisory lock, shared with every other claim, until its
    -- transaction ends; set_limit takes it exclusively before it writes a
    -- limit. Taken at once unless a limit is being set; then this claim
    -- waits for it, and reads it below (a new snapshot in READ COMMITTED;
    -- an older one cannot see it: 40001).
    IF NOT pg_catalog.pg_try_advisory_xact_lock_shared(1952605797, pg_catalog.hashtext(claim.queue)) THEN
        PERFORM pg_catalog.pg_advisory_xact_lock_shared(1952605797, pg_catalog.hashtext(claim.queue));
        IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
            RAISE EXCEPTION 'queue % was given a limit while this transaction waited; retry the transaction', claim.queue
                USING ERRCODE = 'serialization_failure';
        END IF;
    END IF;

    -- Queue control. A queue without a row in taskboard.queues is unpaused
    -- and unlimited: one primary-key probe, no lock.
    SELECT q.paused, q.max_running, q.max_running_per_key, q.rate_starts
      INTO v_paused, v_limit, v_key_limit, v_rate_starts
      FROM taskboard.queues AS q
     WHERE q.queue = claim.queue;
    IF v_limit IS NULL AND v_key_limit IS NULL AND v_rate_starts IS NULL
       AND pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        -- A snapshot taken before a first limit committed does not see it,
        -- and this claim did not wait for it. Writing the queue's row (an
        -- unpaused, unlimited one when there is none) makes PostgreSQL
        -- raise 40001 when the row was written since the snapshot.
        INSERT INTO taskboard.queues AS q (queue) VALUES (claim.queue)
        ON CONFLICT ON CONSTRAINT queues_pkey DO NOTHING;
    END IF;
    IF v_limit IS NOT NULL OR v_key_limit IS NOT NULL OR v_rate_starts IS NOT NULL THEN
        -- Claimers of a limited queue take turns on its row, held until the
        -- caller's transaction ends: the counts below see every claim made
        -- before, so together they never pass the limit. Each writes the
        -- row (the same values) rather than only locking it: in REPEATABLE
        -- READ or SERIALIZABLE the snapshot was taken before the wait and
        -- would miss the claim it waited for, and a row updated since the
        -- snapshot makes PostgreSQL raise 40001 instead.
        UPDATE taskboard.queues AS q
           SET paused = q.paused
         WHERE q.queue = claim.queue
        RETURNING q.paused, q.max_running, q.max_running_per_key, q.rate_starts, q.rate_per, q.rate_by_key
             INTO v_paused, v_limit, v_key_limit, v_rate_starts, v_rate_per, v_rate_by_key;
        -- The clock is read again after the turn: the starts of the claims
        -- that came before are then all earlier than it, so a window ending
        -- at it counts them (a clock read before the wait would not).
        v_now := pg_catalog.clock_timestamp();
    END IF;
    IF v_paused THEN
        RETURN;
    END IF;

    -- The common path: no limit, and no lease of the queue expired by v_now
    -- (nothing to bury or reclaim). Only queued jobs can be taken, and
    -- nothing is recorded in the history: two steps, the jobs picked and
    -- locked (pick_next), and the grant.
    IF v_limit IS NULL AND v_key_limit IS NULL AND v_rate_starts IS NULL THEN
        v_ids := taskboard.pick_next(claim.queue, v_now, claim.batch);
        IF v_ids IS NOT NULL THEN
            RETURN QUERY SELECT * FROM taskboard.grant_leases(v_ids, claim.batch, claim.worker, claim.lease, v_now);
            RETURN;
        END IF;
    END IF;

    IF v_rate_starts IS NOT NULL THEN
        -- Starts older than the window count no more.
        DELETE FROM taskboard.queue_starts AS s
         WHERE s.queue = claim.queue
           AND s.started_at <= v_now - v_rate_per;
    END IF;
    PERFORM taskboard.bury_spent(claim.queue, v_now);

    -- Per key (a key limit, a rate per key), the keys of the jobs a round
    -- starts may fill: a claim short of its batch goes round again, those
    -- keys left out, so that fewer rows than the batch still means nothing
    -- else may start now. Each round but the last starts at least one job,
    -- or is the first and finds a spent lease of a key left (one another
    -- transaction held): the first job or expired lease of each key left
    -- in is within its room. The rounds after the first find no expired
    -- lease left to reclaim but those of keys whose window filled (the
    -- first reclaimed the others, or filled the batch).
    v_keyed := v_key_limit IS NOT NULL OR v_rate_by_key;
    IF v_keyed THEN
        v_frees := EXISTS (
            SELECT
              FROM taskboard.jobs AS x
             WHERE x.queue = claim.queue
               AND x.state = 'running'
               AND x.lease_expires_at <= v_now
               AND x.attempt >= x.max_attempts
               AND x.concurrency_key IS NOT NULL);
    END IF;
    LOOP
        v_room := v_want;
        v_cap := v_want;
        IF v_limit IS NOT NULL THEN
            v_room := LEAST(taskboard.queue_room(claim.queue, v_limit, v_now), v_want);
        END IF;
        IF v_rate_starts IS NOT NULL AND NOT v_rate_by_key THEN
            -- The window's room bounds the round's starts, reclaims
            -- included, and with them the queued jobs it may start.
            v_cap := LEAST(taskboard.window_room(claim.queue, v_rate_starts, v_rate_per, v_now), v_want);
            v_room := LEAST(v_room, v_cap);
        END IF;
        v_full_keys := '{}';
        IF v_key_limit IS NOT NULL THEN
            v_full_keys := taskboard.full_keys(claim.queue, v_key_limit, v_now);
        END IF;
        IF v_rate_by_key THEN
            v_rate_full_keys := taskboard.rate_full_keys(claim.queue, v_now, v_room, v_full_keys, v_rate_full_keys,
                                                         v_rate_starts, v_rate_per);
            v_full_keys := pg_catalog.array_cat(v_full_keys, v_rate_full_keys);
        END IF;

        v_reclaims := taskboard.pick_expired(claim.queue, v_now, v_cap, v_rate_full_keys,
                                             v_rate_starts, v_rate_per, v_rate_by_key);
        IF v_keyed THEN
            v_ids := v_reclaims || taskboard.pick_keyed(claim.queue, v_now, v_room, v_full_keys, v_key_limit,
                                                        v_rate_starts, v_rate_per, v_rate_by_key, v_reclaims);
        ELSE
            v_ids := v_reclaims || taskboard.pick_queued(claim.queue, v_now, v_room);
        END IF;
        RETURN QUERY
        WITH granted AS MATERIALIZED (
            SELECT * FROM taskboard.grant_leases(v_ids, v_cap, claim.worker, claim.lease, v_now)
        ),
        logged AS (
            -- Under a rate limit, each start it counts in the queue's log
            -- (per key, those of jobs with a key).
            INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
            SELECT claim.queue, j.concurrency_key, v_now
              FROM taskboard.jobs AS j
             WHERE v_rate_starts IS NOT NULL
               AND j.id = ANY (ARRAY(SELECT g.job_id FROM granted AS g))
               AND (NOT v_rate_by_key OR j.concurrency_key IS NOT NULL)
        )
        SELECT * FROM granted;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
        v_want := claim.batch - v_taken;
        EXIT WHEN NOT v_keyed OR v_want = 0 OR (v_rows = 0 AND NOT v_frees);
        v_frees := false;
    END LOOP;
END
$$;

--
-- Name: FUNCTION claim(queue text, worker text, batch integer, lease interval); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.claim(queue text, worker text, batch integer, lease interval) IS 'claim(queue, worker, batch, lease) -> setof taskboard.claimed
Takes up to `batch` runnable jobs of `queue`: queued with run_at due, or
running with an expired lease, in order of priority (higher first), run_at,
then id. Each claimed job gets a fresh lease token, lease_expires_at =
clock + lease, attempt + 1, fence + 1, started_at = clock and
claimed_by = worker; the token is returned here and nowhere else, with
the fence (strictly increasing with every claim of the job, releases and
reclaims included), with the job''s trace_context (the W3C trace
context its enqueuer stored, NULL when none), and, last, waited: how long
the job had been runnable (clock minus its run_at, or minus the expired
lease''s deadline for a reclaim). A reclaim records the lease it took
over (holder, attempt, fence, deadline) in the job''s history
(taskboard.job_history), its actor the role in force (the one SET ROLE
chose, else the login) and worker beside it. Concurrent claimers
never receive the same job (FOR NO KEY UPDATE SKIP LOCKED, the lock its
update takes: a job on which another transaction holds FOR KEY SHARE, as
a foreign key''s check does, is claimed without waiting for it, and then
renewed and completed as any other). An expired job that has used up its attempts
becomes dead (error ''lease expired'') in the same call, is not returned and
does not count against `batch`; the jobs waiting on it are settled as
fail settles them. Fewer rows than `batch` means nothing else
is runnable for this caller now. Up to `batch` rows it looked at but did
not take stay locked, and
skipped by other claimers, until the caller''s transaction ends: claim in
a transaction of its own.
A paused queue (taskboard.pause) hands out nothing. A limited one
(taskboard.set_queue_limit) starts queued jobs only while fewer than
max_running of its jobs are running or held by a cancelled lease not yet
ended (taskboard.cancel), however many workers claim at once;
in REPEATABLE READ or SERIALIZABLE a claim of a limited queue that raced
another one raises 40001 (serialization_failure) rather than count without it.
A first limit counts the claims still in flight: a claim waits while one
is being set for its queue (and then, in REPEATABLE READ or SERIALIZABLE,
raises 40001), and set_queue_limit waits for the claim transactions of
the queue still open; in those levels a claim whose snapshot predates a
first limit raises 40001 too (it writes the queue''s row to find out: an
unpaused, unlimited row when there was none).
A queue with a key limit (taskboard.set_key_limit) starts no job whose
concurrency key already has max_running_per_key jobs holding a lease
(running, an expired lease until its job is reclaimed or finished, a
cancelled job until its lease ends), however many workers claim at once,
and still takes the jobs of other keys, and those without a key, behind a
full key: a round reads the queued jobs of keys with room, sixteen times
its room of them in order, and starts each key''s first ones up to the
key''s room; a claim still short of its batch goes round again while its
last round started a job. Its claimers take turns as under a queue limit,
and a first key limit waits for the claims in flight the same way.
A queue with a rate limit (taskboard.set_rate_limit) starts at most
rate_starts jobs, reclaims included, in any window of rate_per: its
claimers take turns as under a queue limit, each reads the clock (the
clock of its leases and of the window) after its turn, counts the starts
logged within the window before it (taskboard.queue_starts, whose older
rows it deletes) and logs those it makes. With rate_by_key, each key''s
starts are counted apart (and only those are logged), jobs without a key
are not limited, a key whose window is full is left out as a full key is
under a key limit (its expired leases too), found among the keys a round
reaches, and a key''s reclaims take its room before its queued jobs. A
round finds the full keys ahead of the jobs it takes by reading the
queued jobs in claim order, those of keys found full left out, and
counting each key''s window once; it reads twice as far again while
fewer than sixteen times its room of the jobs read are of keys with room.
Its work is linear in the full keys ahead: fewer than eight reads of
their queued jobs and one count of each one''s window.
Raises 22023 when queue or worker is NULL, empty or longer than 200
characters, batch is outside 1..1000, or lease is NULL, not positive or
longer than 12 hours (''infinity'' included), by the deadline it gives:
unless clock < clock + lease <= clock + 12 hours, months and days
counted as the calendar makes them.

claim dispatches: its pickers (pick_next, pick_queued, pick_expired, pick_keyed,
bury_spent, and the bounds queue_room, window_room, full_keys,
rate_full_keys) choose the jobs and write no lease; grant_leases grants
every lease. plan_cache_mode = force_generic_plan with enable_seqscan =
off, which the functions it calls run with too: one plan per statement
and session, made at the first call and kept until PostgreSQL
invalidates it (a change to the table, its indexes or its statistics, a
VACUUM); planning on every call cost about as much as running. A worker
usually first claims an empty queue, and the plans are then made for an
empty table, so each step is written to be bounded whatever the table
held: the running jobs of this queue (its partial index), the head of
its queued index, and primary-key probes by id; with sequential scans
off, no step scans the table (tests/sql/test_claim_plan.py).
A queue with no limit and no lease expired by the claim''s clock takes the
common path: two steps (pick_next: a check of its running jobs and the
head of its queued index, locked; grant_leases: the update); the steps
of expired leases, limits and the history run only when there is one.
A session with taskboard.claim_cursor = on, as the driver''s control
connections are, takes the jobs after its last ones and checks for
expired leases at most every 200 ms on that path (pick_next): a job
queued ahead of them, and an expired lease, may wait that long (longer
while the walks are slow) unless the claim finds fewer jobs than its
batch.
Every claim holds a shared transaction-level advisory lock on its queue,
keys (1952605797, hashtext(queue)), until its transaction ends; an
application''s own advisory locks should not use 1952605797 as first key.
Before it claims, a claim in READ COMMITTED works through the rows of
taskboard.dependency_checks when there are any (recheck_dependencies):
the dependency edges of committed transactions that a dependency''s end
may not have seen, and ends with dependents left to settle.';

--
-- Name: complete(bigint, uuid, jsonb); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.complete(job_id bigint, token uuid, result jsonb DEFAULT NULL::jsonb) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_lease(complete.job_id, complete.token);
    RETURN (SELECT c.completed
              FROM taskboard.complete_many(ARRAY[complete.job_id], ARRAY[complete.token],
                                           ARRAY[complete.result]) AS c);
END
$$;

--
-- Name: FUNCTION complete(job_id bigint, token uuid, result jsonb); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.complete(job_id bigint, token uuid, result jsonb) IS 'complete(job_id, token, result) -> boolean
Marks the job succeeded with `result` and finished_at when `token` is the
current lease token, even if its lease expired, as long as nobody
reclaimed the job.
true:  the job is succeeded by this token; repeating the call with the
       same token after that success returns true again and changes nothing.
false: the token is not current (reclaimed, failed, released, cancelled,
       or never issued); the job does not change. Writes the caller made in the
       same transaction must then be rolled back by the caller.
A refused write by a holder whose lease was reclaimed or cancelled is a
line of the job''s history (taskboard.job_history), once per token and
kind; a token the history does not know is not recorded. The line is
written in the caller''s transaction: a caller that rolls back keeps none.
An accepted completion settles, in the same transaction, the jobs waiting
on this one (taskboard.enqueue''s depends_on): the last dependency of one
done makes it queued. A refused completion settles nothing.
Raises 22023 when job_id or token is NULL.

complete_many of one job: the same update, answer and history line.';

--
-- Name: complete_held(bigint[], uuid[], jsonb[], timestamp with time zone); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.complete_held(job_ids bigint[], tokens uuid[], results jsonb[], clock timestamp with time zone) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    SET enable_hashjoin TO 'off'
    SET enable_bitmapscan TO 'off'
    AS $$
DECLARE
    v_done bigint;
BEGIN
    UPDATE taskboard.jobs AS j
       SET state = 'succeeded',
           result = i.result,
           finished_at = complete_held.clock
      FROM (SELECT u.id, u.token, u.result
              FROM unnest(complete_held.job_ids, complete_held.tokens, complete_held.results)
                   AS u(id, token, result)
             ORDER BY u.id) AS i
     WHERE j.id = ANY (complete_held.job_ids)
       AND j.id = i.id
       AND j.lease_token = i.token
       AND pg_catalog.texteq(j.state, 'running');
    GET DIAGNOSTICS v_done = ROW_COUNT;
    RETURN v_done;
END
$$;

--
-- Name: FUNCTION complete_held(job_ids bigint[], tokens uuid[], results jsonb[], clock timestamp with time zone); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.complete_held(job_ids bigint[], tokens uuid[], results jsonb[], clock timestamp with time zone) IS 'complete_held(job_ids, tokens, results, clock) -> bigint
Internal: the write of taskboard.complete_many for more than one job.
Marks succeeded, with results[i] and finished_at = clock, each job of
job_ids[i] that is running under tokens[i], in one update, and answers
how many it marked. Its rows are found through the primary key and
written in job_id order, the order renew_many locks them in: a row
another transaction is writing is waited for and tested again as that
transaction left it. results NULL: every result is NULL. Checks nothing:
complete_many checked the arguments.
Called by complete_many; never granted to an application role.

plan_cache_mode = force_generic_plan with enable_seqscan = off, as
complete_many: one plan per session, walking the primary key. The state
test is a function call, which no partial index''s predicate matches (a
plan kept from an empty table walked the running index). enable_hashjoin
and enable_bitmapscan off keep the job_id order: the plan is then a merge
join or a nested loop whose outer side is either the input sorted by id
or the primary key walked in id order, and each keeps its outer side''s
order (a bitmap scan reads the rows in the table''s order, which a hash
join keeps: one worker''s renewer and completer then deadlocked).';

--
-- Name: complete_many(bigint[], uuid[], jsonb[]); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.complete_many(job_ids bigint[], tokens uuid[], results jsonb[] DEFAULT NULL::jsonb[]) RETURNS TABLE(job_id bigint, completed boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
    -- How many jobs the update completed.
    v_done bigint;
    -- The answer, one element per input element in input order.
    v_ids       bigint[];
    v_completed boolean[];
    -- The jobs this call deleted in a queue that discards, and their tokens.
    v_gone_ids    bigint[] := '{}';
    v_gone_tokens uuid[] := '{}';
BEGIN
    v_checked := taskboard.check_leases('job_ids, tokens and results', complete_many.job_ids, complete_many.tokens,
                                        pg_catalog.array_ndims(complete_many.results));
    v_checked := taskboard.check_lengths('results', pg_catalog.cardinality(complete_many.results),
                                         'job_ids', pg_catalog.cardinality(complete_many.job_ids));

    -- A queue that discards: its jobs held by their tokens are deleted
    -- (discard_held), those of the others updated below. Only in READ
    -- COMMITTED, where a statement sees every edge committed before it.
    IF EXISTS (SELECT FROM taskboard.queues AS q WHERE q.discard_succeeded)
       AND pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        SELECT coalesce(pg_catalog.array_agg(g.job_id), '{}'), coalesce(pg_catalog.array_agg(g.token), '{}')
          INTO v_gone_ids, v_gone_tokens
          FROM taskboard.discard_held(complete_many.job_ids, complete_many.tokens) AS g;
    END IF;

    -- The write: every job held by its given token, in one update
    -- (complete_held: in job_id order, the order renew_many locks them in).
    -- One job: one row, one lock, no order to keep; found by its id (the
    -- state test is a function call, which no partial index's predicate
    -- matches: a plan kept from an empty table walked the running index).
    IF pg_catalog.cardinality(complete_many.job_ids) = 1 THEN
        UPDATE taskboard.jobs AS j
           SET state = 'succeeded',
               result = complete_many.results[pg_catalog.array_lower(complete_many.results, 1)],
               finished_at = v_now
         WHERE j.id = complete_many.job_ids[pg_catalog.array_lower(complete_many.job_ids, 1)]
           AND j.lease_token = complete_many.tokens[pg_catalog.array_lower(complete_many.tokens, 1)]
           AND pg_catalog.texteq(j.state, 'running');
        GET DIAGNOSTICS v_done = ROW_COUNT;
    ELSE
        v_done := taskboard.complete_held(complete_many.job_ids, complete_many.tokens,
                                          complete_many.results, v_now);
    END IF;
    v_done := v_done + pg_catalog.cardinality(v_gone_ids);
    IF v_done = pg_catalog.cardinality(complete_many.job_ids) THEN
        -- The common case: every job completed, nothing else to read.
        RETURN QUERY SELECT u.id, true FROM unnest(complete_many.job_ids) AS u(id);
        IF EXISTS (SELECT FROM taskboard.job_dependencies AS d
                    WHERE d.depends_on = ANY (complete_many.job_ids))
           OR pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
            PERFORM taskboard.settle_dependents(complete_many.job_ids);
        END IF;
        RETURN;
    END IF;

    -- Each row answered from the job as it is now, this update's writes
    -- included: succeeded by its token (by this call, or by an earlier one
    -- of the same holder, one that committed while the update waited for
    -- the row included), deleted by this call in a queue that discards, or
    -- refused. A refused row is only read.
    SELECT pg_catalog.array_agg(i.id ORDER BY i.ord),
           pg_catalog.array_agg(
           EXISTS (SELECT
                     FROM taskboard.jobs AS j
                    WHERE j.id = i.id
                      AND j.lease_token = i.token
                      AND j.state = 'succeeded')
           OR EXISTS (SELECT
                        FROM unnest(v_gone_ids, v_gone_tokens) AS g(id, token)
                       WHERE g.id = i.id
                         AND g.token = i.token)
           ORDER BY i.ord)
      INTO v_ids, v_completed
      FROM unnest(complete_many.job_ids, complete_many.tokens) WITH ORDINALITY AS i(id, token, ord);

    -- The refused rows, lines of their jobs' history when their lease was
    -- reclaimed or cancelled; when every row is accepted, nothing is read.
    IF false = ANY (v_completed) THEN
        PERFORM taskboard.record_refusals('refused_complete',
            ARRAY(SELECT u.id FROM unnest(v_ids, v_completed) AS u(id, done)
                   WHERE NOT u.done),
            ARRAY(SELECT u.token FROM unnest(complete_many.tokens, v_completed) AS u(token, done)
                   WHERE NOT u.done));
    END IF;

    RETURN QUERY SELECT u.id, u.done FROM unnest(v_ids, v_completed) AS u(id, done);

    -- The dependents of the jobs this call completed (finished now by it),
    -- found through the edges: none, for most batches.
    IF EXISTS (SELECT FROM taskboard.job_dependencies AS d
                WHERE d.depends_on = ANY (complete_many.job_ids))
       OR pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM taskboard.settle_dependents(ARRAY(
            SELECT j.id
              FROM taskboard.jobs AS j
             WHERE j.id = ANY (complete_many.job_ids)
               AND j.state = 'succeeded'
               AND j.finished_at = v_now));
    END IF;
END
$$;

--
-- Name: FUNCTION complete_many(job_ids bigint[], tokens uuid[], results jsonb[]); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.complete_many(job_ids bigint[], tokens uuid[], results jsonb[]) IS 'complete_many(job_ids, tokens, results) -> setof (job_id, completed)
complete for many jobs in one statement: job_ids[i] is completed with
tokens[i] and results[i] (results NULL: every result is NULL). Each row is
fenced on its own token and answered on its own, in input order:
completed is true when that job is succeeded by that token (now or by an
earlier call), false when the token is not current; a refused job changes
nothing. The jobs it completes are written in job_id order, the order
renew_many locks them in; a refused job is only read.
Each accepted completion settles the jobs waiting on its job in the same
transaction, as complete does. In a queue that discards
(taskboard.set_queue_discard) an accepted completion deletes the job
instead (discard_held), in READ COMMITTED; a completion repeated after
that finds no job and answers false.
A refused write by a holder whose lease was reclaimed or cancelled is a
line of the job''s history (taskboard.job_history), once per token and
kind; a token the history does not know is not recorded. The line is
written in the caller''s transaction: a caller that rolls back keeps none.
Raises 22023 when job_ids or tokens is NULL or holds a NULL, an array is
multidimensional, or the lengths of job_ids, tokens and (when given)
results differ. A NULL element of results means no result for that job.

plan_cache_mode = force_generic_plan with enable_seqscan = off: one plan
per session, made at the first call and kept until PostgreSQL invalidates
it; planned on every call, planning cost about three times running the
statement for one job. Every step finds its rows by primary key, whatever
the table held when the plan was made.';

--
-- Name: discard_held(bigint[], uuid[]); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.discard_held(job_ids bigint[], tokens uuid[]) RETURNS TABLE(job_id bigint, token uuid)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    v_locked bigint[];
BEGIN
    IF NOT EXISTS (SELECT
                     FROM unnest(discard_held.job_ids, discard_held.tokens) AS u(id, token)
                     JOIN taskboard.jobs AS j ON j.id = u.id
                    WHERE j.lease_token = u.token
                      AND j.state = 'running'
                      AND j.queue IN (SELECT q.queue FROM taskboard.queues AS q WHERE q.discard_succeeded)) THEN
        RETURN;
    END IF;
    IF pg_catalog.cardinality(discard_held.job_ids) > 1 THEN
        PERFORM
           FROM taskboard.jobs AS j
           JOIN unnest(discard_held.job_ids, discard_held.tokens) AS u(id, token) ON j.id = u.id
          WHERE j.id = ANY (discard_held.job_ids)
            AND j.lease_token = u.token
            AND j.state = 'running'
          ORDER BY j.id
            FOR NO KEY UPDATE OF j;
    END IF;
    v_locked := ARRAY(SELECT j.id
                        FROM taskboard.jobs AS j
                        JOIN unnest(discard_held.job_ids, discard_held.tokens) AS u(id, token) ON j.id = u.id
                       WHERE j.id = ANY (discard_held.job_ids)
                         AND j.lease_token = u.token
                         AND j.state = 'running'
                         AND j.queue IN (SELECT q.queue FROM taskboard.queues AS q WHERE q.discard_succeeded)
                       ORDER BY j.id
                         FOR UPDATE OF j SKIP LOCKED);
    RETURN QUERY
    WITH gone AS (
        DELETE FROM taskboard.jobs AS j
         WHERE j.id = ANY (v_locked)
           AND NOT EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = j.id)
        RETURNING j.id, j.lease_token
    )
    SELECT gone.id, gone.lease_token FROM gone;
END
$$;

--
-- Name: FUNCTION discard_held(job_ids bigint[], tokens uuid[]); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.discard_held(job_ids bigint[], tokens uuid[]) IS 'discard_held(job_ids, tokens) -> table of (job_id, token)
Internal: the delete of taskboard.complete_many for the jobs of discarding
queues (taskboard.set_queue_discard). Deletes each job of job_ids[i] that
is running under tokens[i] in a queue that discards, unless a job waits
on it or another transaction holds a lock on it, and answers each job it
deleted with the token that held it. When the call holds such a job and
more than one job, every job it holds is first locked in job_id order
with the lock the completion''s update takes (FOR NO KEY UPDATE), the
order renew_many locks them in; the delete''s own lock (FOR UPDATE) is then
taken only where nobody else holds one (SKIP LOCKED), so it waits for
nothing. An enqueue naming the job in depends_on holds it FOR KEY SHARE:
held before, the job is skipped and kept; asked for after, it waits for
this transaction and then finds no job. The edges are read in a
statement after those locks, so every edge committed before is seen.
Checks nothing: complete_many checked the arguments, and calls it only in
READ COMMITTED, when a queue discards. Never granted to an application role.';

--
-- Name: enqueue(text, jsonb, text, timestamp with time zone, integer, integer, text, jsonb, text, bigint[], text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.enqueue(task text, payload jsonb DEFAULT '{}'::jsonb, queue text DEFAULT 'default'::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, dedupe_key text DEFAULT NULL::text, trace_context jsonb DEFAULT NULL::jsonb, concurrency_key text DEFAULT NULL::text, depends_on bigint[] DEFAULT NULL::bigint[], on_dependency_failure text DEFAULT 'cancel'::text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now    timestamptz := pg_catalog.clock_timestamp();
    v_run_at timestamptz := coalesce(enqueue.run_at, v_now);
    v_id     bigint;
    v_hash   bytea;
    v_held   text;
    v_held_until timestamptz;
BEGIN
    v_checked := taskboard.check_arg(pg_catalog.isfinite(v_run_at), 'run_at must be a finite time, got ' || enqueue.run_at);
    v_checked := taskboard.check_time('run_at', v_run_at);
    v_checked := taskboard.check_name('task', enqueue.task);
    v_checked := taskboard.check_name('queue', enqueue.queue);
    v_checked := taskboard.check_given('payload', enqueue.payload);
    v_checked := taskboard.check_given('priority', enqueue.priority);
    v_checked := taskboard.check_between('max_attempts', enqueue.max_attempts, 1);
    v_checked := taskboard.check_key('dedupe_key', enqueue.dedupe_key, 400, 'NULL means no key');
    v_checked := taskboard.check_key('concurrency_key', enqueue.concurrency_key, 200, 'NULL means no key');
    v_checked := taskboard.check_trace_context(enqueue.trace_context);
    v_checked := taskboard.check_choice('on_dependency_failure', enqueue.on_dependency_failure, 'cancel', 'run');
    v_checked := taskboard.check_arg(enqueue.on_dependency_failure = 'cancel' OR enqueue.depends_on IS NOT NULL,
                     'on_dependency_failure ''run'' needs depends_on: a job without dependencies has none to fail'
                     ' (pass depends_on, or leave on_dependency_failure out)');

    -- An empty depends_on names no dependency: the job is enqueued as
    -- without one (a dedupe_key allowed).
    IF pg_catalog.cardinality(enqueue.depends_on) > 0 THEN
        RETURN taskboard.enqueue_waiting(enqueue.task, enqueue.payload, enqueue.queue, v_run_at,
                                         enqueue.priority, enqueue.max_attempts, enqueue.dedupe_key,
                                         enqueue.trace_context, enqueue.concurrency_key,
                                         enqueue.depends_on, enqueue.on_dependency_failure);
    END IF;

    -- The index holds the key's SHA-256, not the key (queue, task and key
    -- at their limits are too long for one btree entry): ON CONFLICT names
    -- the index's own expression, and the look-up uses it too, so that it
    -- finds the holder through the index. See deploy/dedupe_scope.sql.
    v_hash := pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(enqueue.dedupe_key, E'\\', E'\\\\'), 'escape'));

    LOOP
        INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts, dedupe_key,
                                         trace_context, concurrency_key)
        VALUES (enqueue.queue, enqueue.task, enqueue.payload, enqueue.priority, v_run_at,
                enqueue.max_attempts, enqueue.dedupe_key, enqueue.trace_context, enqueue.concurrency_key)
        ON CONFLICT (queue, task,
                     pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(dedupe_key, E'\\', E'\\\\'), 'escape')))
           WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running')
           DO NOTHING
        RETURNING j.id INTO v_id;
        EXIT WHEN v_id IS NOT NULL;

        -- An unfinished job of the queue and task holds the key's hash. When
        -- it holds the same key, its id is the answer. A different key with
        -- the same SHA-256 is one key to the unique index, which keeps out
        -- a second unfinished job as long as the first is unfinished: say so
        -- rather than answer with the other key's job. Should the job finish
        -- before this statement sees it, the key is free: insert again.
        SELECT j.id, j.dedupe_key
          INTO v_id, v_held
          FROM taskboard.jobs AS j
         WHERE j.queue = enqueue.queue
           AND j.task = enqueue.task
           AND pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(j.dedupe_key, E'\\', E'\\\\'), 'escape')) = v_hash
           AND j.dedupe_key IS NOT NULL
           AND j.state IN ('queued', 'running');
        IF FOUND THEN
            IF v_held <> enqueue.dedupe_key THEN
                RAISE EXCEPTION 'dedupe_key has the same SHA-256 as the different key of unfinished job % of this queue and task', v_id
                    USING ERRCODE = 'unique_violation';
            END IF;
            RETURN v_id;
        END IF;
    END LOOP;

    IF enqueue.dedupe_key IS NOT NULL THEN
        -- The key is still held by a job cancelled under a live lease.
        SELECT pg_catalog.max(c.held_until)
          INTO v_held_until
          FROM taskboard.jobs AS c
         WHERE c.queue = enqueue.queue
           AND c.held_until > v_run_at
           AND c.state = 'cancelled'
           AND c.task = enqueue.task
           AND c.dedupe_key = enqueue.dedupe_key;
        IF v_held_until IS NOT NULL THEN
            UPDATE taskboard.jobs AS j
               SET run_at = v_held_until
             WHERE j.id = v_id;
            v_run_at := v_held_until;
        END IF;
    END IF;

    IF v_run_at <= v_now THEN
        PERFORM taskboard.notify_runnable(enqueue.queue);
    END IF;
    RETURN v_id;
END
$$;

--
-- Name: FUNCTION enqueue(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.enqueue(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text) IS 'enqueue(task, payload, queue, run_at, priority, max_attempts, dedupe_key, trace_context, concurrency_key, depends_on, on_dependency_failure) -> bigint
Inserts a queued job, runnable from run_at (NULL = now), and returns its id.
With concurrency_key, the job counts toward that key''s limit in its queue
(taskboard.set_key_limit); NULL: no key.
trace_context (the caller''s W3C trace context, e.g. {"traceparent": ...})
is stored with the job and handed to its holder by claim; NULL: none.
With depends_on (job ids of any queue), the job is `waiting` until each of
them has ended: claim never takes it. When the last ends succeeded, the
call that completed it makes the job queued in its own transaction (a
refused completion releases nothing), runnable from run_at or then,
whichever is later. When one ends dead or cancelled, the job is cancelled
with the error ''dependency N ended dead'' (or cancelled), and the jobs
waiting on it after it; with on_dependency_failure ''run'' that dependency
counts as ended and the job still runs. Dependencies that succeeded
already count as ended; one already dead or cancelled cancels the job at
once (or, with ''run'', counts as ended). A job cannot depend on a later
one, so dependencies never form a cycle. An empty depends_on names no
dependency: the job is enqueued as without it, and may have a dedupe_key.
With dedupe_key: when an unfinished (queued or running) job of the same
queue and the same task holds that key, returns that job''s id and inserts
nothing. A key is scoped to (queue, task, key): an unfinished job of
another task with the same key is not the same job, and a new one is
inserted. The unique index jobs_unfinished_task_dedupe_key makes this hold
under concurrent callers; in REPEATABLE READ or SERIALIZABLE a race may
raise 40001. A key held by a job cancelled under a live lease (its
held_until, see taskboard.cancel) is no unfinished job''s: a new job is
inserted, runnable no sooner than that lease''s end.
Sends NOTIFY taskboard, ''<queue>'' when the new job is runnable now.
Joins the caller''s transaction: a rollback takes the job with it.
Raises 22023 when task or queue is NULL, empty or longer than 200
characters, payload, priority or max_attempts is NULL, max_attempts < 1,
dedupe_key is empty or longer than 400 characters, or run_at is
''infinity'' or ''-infinity'' or outside the years 1 to 9999 (before
0001-01-01 or from 10000-01-01 on, UTC), or trace_context is not a JSON object of
strings or is longer than 8192 bytes as text, or concurrency_key is empty
or longer than 200 characters, or on_dependency_failure is not cancel or
run, or is ''run'' without depends_on (NULL), or depends_on is not
one-dimensional, holds NULL, names more than 100000 jobs or a job that
does not exist, or names a job and comes with a dedupe_key.
Raises 23505 when an unfinished job of the queue and task holds a
different key with the same SHA-256 as dedupe_key (no such pair is known):
the index cannot tell the two apart, and the other job is not the answer.
Calls of the seven-, eight- and nine-argument forms of earlier releases
resolve to this one: the arguments it gained come last, with defaults.';

--
-- Name: enqueue_many(text, jsonb[], text, timestamp with time zone, integer, integer, text[], jsonb, text[]); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.enqueue_many(task text, payloads jsonb[], queue text DEFAULT 'default'::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, dedupe_keys text[] DEFAULT NULL::text[], trace_context jsonb DEFAULT NULL::jsonb, concurrency_keys text[] DEFAULT NULL::text[]) RETURNS SETOF bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now      timestamptz := pg_catalog.clock_timestamp();
    v_run_at   timestamptz := coalesce(enqueue_many.run_at, v_now);
    v_ids      bigint[];
    v_inserted bigint;
    v_id       bigint;
    v_first    integer;
    v_ord      integer;
    v_hash     bytea;
    v_held     text;
BEGIN
    v_checked := taskboard.check_arg(pg_catalog.isfinite(v_run_at), 'run_at must be a finite time, got ' || enqueue_many.run_at);
    v_checked := taskboard.check_time('run_at', v_run_at);
    v_checked := taskboard.check_name('task', enqueue_many.task);
    v_checked := taskboard.check_name('queue', enqueue_many.queue);
    v_checked := taskboard.check_given('payloads', enqueue_many.payloads);
    v_checked := taskboard.check_flat('payloads and dedupe_keys', pg_catalog.array_ndims(enqueue_many.payloads),
                                      pg_catalog.array_ndims(enqueue_many.dedupe_keys));
    v_checked := taskboard.check_items('payloads', enqueue_many.payloads);
    v_checked := taskboard.check_lengths('dedupe_keys', pg_catalog.cardinality(enqueue_many.dedupe_keys),
                                         'payloads', pg_catalog.cardinality(enqueue_many.payloads));
    v_checked := taskboard.check_arg(pg_catalog.array_position(enqueue_many.dedupe_keys, '') IS NULL,
                     'dedupe_keys must not contain an empty string (NULL means no key)');
    v_checked := taskboard.check_arg(NOT EXISTS (SELECT FROM pg_catalog.unnest(enqueue_many.dedupe_keys) AS k(key)
                                                  WHERE pg_catalog.char_length(k.key) > 400),
                     'dedupe_keys must hold keys of at most 400 characters');
    v_checked := taskboard.check_given('priority', enqueue_many.priority);
    v_checked := taskboard.check_between('max_attempts', enqueue_many.max_attempts, 1);
    v_checked := taskboard.check_flat('concurrency_keys', pg_catalog.array_ndims(enqueue_many.concurrency_keys));
    v_checked := taskboard.check_lengths('concurrency_keys', pg_catalog.cardinality(enqueue_many.concurrency_keys),
                                         'payloads', pg_catalog.cardinality(enqueue_many.payloads));
    v_checked := taskboard.check_arg(NOT EXISTS (SELECT FROM pg_catalog.unnest(enqueue_many.concurrency_keys) AS k(key)
                                                  WHERE k.key = '' OR pg_catalog.char_length(k.key) > 200),
                     'concurrency_keys must hold keys of 1 to 200 characters (NULL means no key)');
    v_checked := taskboard.check_trace_context(enqueue_many.trace_context);

    IF pg_catalog.cardinality(enqueue_many.payloads) = 0 THEN
        RETURN;
    END IF;
    -- Elements are addressed by position below: count positions from 1.
    IF pg_catalog.array_lower(enqueue_many.payloads, 1) <> 1 THEN
        enqueue_many.payloads := ARRAY(SELECT pg_catalog.unnest(enqueue_many.payloads));
    END IF;
    IF pg_catalog.array_lower(enqueue_many.dedupe_keys, 1) <> 1 THEN
        enqueue_many.dedupe_keys := ARRAY(SELECT pg_catalog.unnest(enqueue_many.dedupe_keys));
    END IF;
    IF pg_catalog.array_lower(enqueue_many.concurrency_keys, 1) <> 1 THEN
        enqueue_many.concurrency_keys := ARRAY(SELECT pg_catalog.unnest(enqueue_many.concurrency_keys));
    END IF;

    IF enqueue_many.dedupe_keys IS NULL THEN
        -- No keys: every element is a new job. Ids are drawn first and
        -- matched to elements by position.
        v_ids := ARRAY(SELECT pg_catalog.nextval('taskboard.jobs_id_seq')
                         FROM pg_catalog.generate_series(1, pg_catalog.cardinality(enqueue_many.payloads)));
        INSERT INTO taskboard.jobs (id, queue, task, payload, priority, run_at, max_attempts, trace_context,
                                    concurrency_key)
        SELECT v_ids[u.ord], enqueue_many.queue, enqueue_many.task, u.payload, enqueue_many.priority,
               v_run_at, enqueue_many.max_attempts, enqueue_many.trace_context,
               enqueue_many.concurrency_keys[u.ord]
          FROM unnest(enqueue_many.payloads) WITH ORDINALITY AS u(payload, ord);
        v_inserted := pg_catalog.cardinality(v_ids);
    ELSE
        -- One statement inserts every job without a key and the first job of
        -- each key. Ids are drawn before the insert so that each element knows
        -- its own; an element whose key an unfinished job already holds keeps
        -- a NULL id here.
        WITH input AS (
            SELECT u.ord, u.payload, u.dedupe_key,
                   u.dedupe_key IS NULL
                   OR pg_catalog.row_number() OVER (PARTITION BY u.dedupe_key ORDER BY u.ord) = 1 AS first_of_key
              FROM unnest(enqueue_many.payloads, enqueue_many.dedupe_keys)
                   WITH ORDINALITY AS u(payload, dedupe_key, ord)
        ),
        numbered AS MATERIALIZED (
            SELECT i.ord, i.payload, i.dedupe_key, i.first_of_key,
                   CASE WHEN i.first_of_key THEN pg_catalog.nextval('taskboard.jobs_id_seq') END AS new_id
              FROM input AS i
        ),
        inserted AS (
            INSERT INTO taskboard.jobs AS j (id, queue, task, payload, priority, run_at, max_attempts, dedupe_key,
                                             trace_context, concurrency_key)
            SELECT n.new_id, enqueue_many.queue, enqueue_many.task, n.payload, enqueue_many.priority,
                   v_run_at, enqueue_many.max_attempts, n.dedupe_key, enqueue_many.trace_context,
                   enqueue_many.concurrency_keys[n.ord]
              FROM numbered AS n
             WHERE n.first_of_key
             ORDER BY n.dedupe_key NULLS FIRST, n.ord
            ON CONFLICT (queue, task,
                         pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(dedupe_key, E'\\', E'\\\\'), 'escape')))
               WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running')
               DO NOTHING
            RETURNING j.id
        )
        SELECT pg_catalog.array_agg(ins.id ORDER BY n.ord),
               pg_catalog.count(ins.id)
          INTO v_ids, v_inserted
          FROM numbered AS n
          LEFT JOIN inserted AS ins ON ins.id = n.new_id;

        -- Elements left without an id carry a key: a later occurrence takes its
        -- first occurrence's id; a first occurrence takes the id of the job that
        -- holds the key, or inserts again if that job finished meanwhile.
        -- In key order, as the insert above: no two calls wait on each other in a cycle.
        -- The holder is found as in enqueue, through the index's expression;
        -- a different key with the same SHA-256 (one key to the index) raises.
        FOR v_ord IN
            SELECT u.ord
              FROM unnest(enqueue_many.dedupe_keys) WITH ORDINALITY AS u(dedupe_key, ord)
             WHERE v_ids[u.ord] IS NULL
             ORDER BY u.dedupe_key, u.ord
        LOOP
            v_first := pg_catalog.array_position(enqueue_many.dedupe_keys, enqueue_many.dedupe_keys[v_ord]);
            IF v_first < v_ord THEN
                v_ids[v_ord] := v_ids[v_first];
                CONTINUE;
            END IF;
            v_hash := pg_catalog.sha256(pg_catalog.decode(
                          pg_catalog.replace(enqueue_many.dedupe_keys[v_ord], E'\\', E'\\\\'), 'escape'));
            LOOP
                SELECT j.id, j.dedupe_key
                  INTO v_id, v_held
                  FROM taskboard.jobs AS j
                 WHERE j.queue = enqueue_many.queue
                   AND j.task = enqueue_many.task
                   AND pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(j.dedupe_key, E'\\', E'\\\\'), 'escape')) = v_hash
                   AND j.dedupe_key IS NOT NULL
                   AND j.state IN ('queued', 'running');
                IF FOUND THEN
                    IF v_held <> enqueue_many.dedupe_keys[v_ord] THEN
                        RAISE EXCEPTION 'dedupe_keys element % (counting from 1) has the same SHA-256 as the different key of unfinished job % of this queue and task',
                            v_ord, v_id
                            USING ERRCODE = 'unique_violation';
                    END IF;
                    EXIT;
                END IF;
                INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts, dedupe_key,
                                                 trace_context, concurrency_key)
                VALUES (enqueue_many.queue, enqueue_many.task, enqueue_many.payloads[v_ord], enqueue_many.priority,
                        v_run_at, enqueue_many.max_attempts, enqueue_many.dedupe_keys[v_ord],
                        enqueue_many.trace_context, enqueue_many.concurrency_keys[v_ord])
                ON CONFLICT (queue, task,
                             pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(dedupe_key, E'\\', E'\\\\'), 'escape')))
                   WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running')
                   DO NOTHING
                RETURNING j.id INTO v_id;
                IF v_id IS NOT NULL THEN
                    v_inserted := v_inserted + 1;
                    EXIT;
                END IF;
            END LOOP;
            v_ids[v_ord] := v_id;
        END LOOP;
    END IF;

    IF enqueue_many.dedupe_keys IS NOT NULL AND v_inserted > 0 THEN
        -- Keys still held by jobs cancelled under a live lease.
        UPDATE taskboard.jobs AS j
           SET run_at = h.held_until
          FROM (SELECT c.dedupe_key, pg_catalog.max(c.held_until) AS held_until
                  FROM taskboard.jobs AS c
                 WHERE c.queue = enqueue_many.queue
                   AND c.held_until > v_run_at
                   AND c.state = 'cancelled'
                   AND c.task = enqueue_many.task
                   AND c.dedupe_key IS NOT NULL
                 GROUP BY c.dedupe_key) AS h
         WHERE j.id = ANY (v_ids)
           AND j.dedupe_key = h.dedupe_key
           AND j.state = 'queued'
           AND j.run_at < h.held_until;
    END IF;

    IF v_inserted > 0 AND v_run_at <= v_now THEN
        PERFORM taskboard.notify_runnable(enqueue_many.queue);
    END IF;

    RETURN QUERY
    SELECT u.id
      FROM pg_catalog.unnest(v_ids) WITH ORDINALITY AS u(id, ord)
     ORDER BY u.ord;
END
$$;

--
-- Name: FUNCTION enqueue_many(task text, payloads jsonb[], queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_keys text[], trace_context jsonb, concurrency_keys text[]); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.enqueue_many(task text, payloads jsonb[], queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_keys text[], trace_context jsonb, concurrency_keys text[]) IS 'enqueue_many(task, payloads, queue, run_at, priority, max_attempts, dedupe_keys, trace_context, concurrency_keys) -> setof bigint
concurrency_keys pairs with payloads element by element: each job counts
toward its key''s limit in the queue (taskboard.set_key_limit); a NULL
element or a NULL array: no key.
Enqueues one job of `task` per element of `payloads` in one round trip and
returns their ids in payload order. dedupe_keys pairs with payloads element
by element (a NULL element means no key) and behaves as in enqueue, scoped
to (queue, task, key): a key held by an unfinished job of the queue and
this task yields that job''s id (a job of another task holding it does not
count), and a key repeated inside the array yields the id of its first
occurrence''s job. Keys are inserted in key order, so concurrent calls with
overlapping keys wait for each other instead of deadlocking. A key held
by a job cancelled under a live lease (its held_until, see
taskboard.cancel) is no unfinished job''s: a new job is inserted, runnable
no sooner than that lease''s end.
trace_context (the caller''s W3C trace context) is stored with every job
the call inserts, as in enqueue: one call is made in one context.
An empty array returns no rows. At most one NOTIFY per call, and only when
a new job is runnable now. Joins the caller''s transaction.
Raises 22023 when task or queue is NULL, empty or longer than 200
characters, payloads is NULL, multidimensional or holds a NULL, dedupe_keys
has a different length or holds an empty string or a key longer than 400
characters, priority or max_attempts is NULL, max_attempts < 1, or run_at
is ''infinity'' or ''-infinity'' or outside the years 1 to 9999 (before
0001-01-01 or from 10000-01-01 on, UTC), or trace_context is not a JSON object of
strings or is longer than 8192 bytes as text, or concurrency_keys is
multidimensional, of another length than payloads, or holds an empty key
or one longer than 200 characters.
Raises 23505, writing nothing, when a key of dedupe_keys has the same
SHA-256 as a different key held by an unfinished job of the queue and task,
or as a different key of the same call (no such pair is known): the index
cannot tell the two apart, and the other job is not the answer.
Calls of the seven-argument form of 0.1.0 to 0.3.0 resolve to this one:
the argument it gained comes last, with a default.';

--
-- Name: enqueue_periodic(text, timestamp with time zone, text, jsonb, text, integer, integer, text[]); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.enqueue_periodic(schedule text, slot timestamp with time zone, task text, payload jsonb DEFAULT '{}'::jsonb, queue text DEFAULT 'default'::text, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, previous_names text[] DEFAULT '{}'::text[]) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now      timestamptz := pg_catalog.clock_timestamp();
    v_id       bigint;
    v_previous text[] := '{}';
    v_name     text;
    v_fresh    boolean := false;
    v_last     timestamptz;
    v_task     text;
    v_queue    text;
    v_old_last timestamptz;
BEGIN
    v_checked := taskboard.check_name('schedule', enqueue_periodic.schedule);
    v_checked := taskboard.check_given('slot', enqueue_periodic.slot);
    v_checked := taskboard.check_arg(pg_catalog.isfinite(enqueue_periodic.slot),
                     'slot must be a finite time, got ' || enqueue_periodic.slot);
    v_checked := taskboard.check_time('slot', enqueue_periodic.slot);
    v_checked := taskboard.check_arg(enqueue_periodic.slot <= v_now,
                     pg_catalog.format('slot must not be later than the database clock (%s), got %s', v_now, enqueue_periodic.slot));
    -- The same checks as enqueue's, made before the slot is looked at: bad
    -- input is refused whether or not the slot is still free.
    v_checked := taskboard.check_name('task', enqueue_periodic.task);
    v_checked := taskboard.check_name('queue', enqueue_periodic.queue);
    v_checked := taskboard.check_given('payload', enqueue_periodic.payload);
    v_checked := taskboard.check_given('priority', enqueue_periodic.priority);
    v_checked := taskboard.check_between('max_attempts', enqueue_periodic.max_attempts, 1);
    FOREACH v_name IN ARRAY COALESCE(enqueue_periodic.previous_names, '{}') LOOP
        v_checked := taskboard.check_name('previous_names', v_name);
        IF v_name <> enqueue_periodic.schedule THEN
            v_previous := v_previous || v_name;
        END IF;
    END LOOP;

    -- The schedule's row, locked: a concurrent caller of the same schedule
    -- waits here for this transaction, then sees the slot taken (or, after
    -- a rollback, free).
    SELECT s.last_slot, s.task, s.queue
      INTO v_last, v_task, v_queue
      FROM taskboard.schedule_slots AS s
     WHERE s.schedule = enqueue_periodic.schedule
       FOR UPDATE;
    IF NOT FOUND THEN
        -- The first call under this name. A renamed schedule's row starts
        -- as the latest of its previous names' rows, so that no slot they
        -- had is enqueued again. It takes this declaration's task and
        -- queue: a rename may change them too, and its first slot is then
        -- no conflict.
        INSERT INTO taskboard.schedule_slots AS s (schedule, last_slot, last_job_id, task, queue, updated_at)
        SELECT enqueue_periodic.schedule, p.last_slot, p.last_job_id,
               enqueue_periodic.task, enqueue_periodic.queue, v_now
          FROM taskboard.schedule_slots AS p
         WHERE p.schedule = ANY (v_previous)
         ORDER BY p.last_slot DESC
         LIMIT 1
        ON CONFLICT ON CONSTRAINT schedule_slots_pkey DO NOTHING;
        -- Otherwise the row starts with this slot, taken.
        INSERT INTO taskboard.schedule_slots AS s (schedule, last_slot, last_job_id, task, queue, updated_at)
        VALUES (enqueue_periodic.schedule, enqueue_periodic.slot, NULL,
                enqueue_periodic.task, enqueue_periodic.queue, v_now)
        ON CONFLICT ON CONSTRAINT schedule_slots_pkey DO NOTHING;
        v_fresh := FOUND;
        IF NOT v_fresh THEN
            SELECT s.last_slot, s.task, s.queue
              INTO v_last, v_task, v_queue
              FROM taskboard.schedule_slots AS s
             WHERE s.schedule = enqueue_periodic.schedule
               FOR UPDATE;
        END IF;
    END IF;

    IF NOT v_fresh THEN
        IF v_last >= enqueue_periodic.slot THEN
            -- Taken. By this task on this queue: the schedule's job; by
            -- another: a conflict, never passed off as the schedule's job.
            -- NULL task: a row from before 0.4.5 whose job was pruned.
            IF v_task IS NOT NULL
               AND (v_task, v_queue) IS DISTINCT FROM (enqueue_periodic.task, enqueue_periodic.queue) THEN
                RAISE EXCEPTION 'schedule % has its slot % (or a later one, %) taken by task % on queue %, not task % on queue %',
                        enqueue_periodic.schedule, enqueue_periodic.slot, v_last, v_task, v_queue,
                        enqueue_periodic.task, enqueue_periodic.queue
                    USING ERRCODE = 'unique_violation',
                          HINT = 'two declarations share this schedule name; rename one, or remove the row with taskboard.remove_schedule';
            END IF;
            RETURN NULL;
        END IF;
    END IF;

    -- A worker still declaring an old name may have taken this slot under
    -- it since: its rows are locked (in name order) and compared too, so
    -- the new name enqueues no slot an old one holds, whichever came first.
    IF pg_catalog.cardinality(v_previous) > 0 THEN
        PERFORM
           FROM taskboard.schedule_slots AS p
          WHERE p.schedule = ANY (v_previous)
          ORDER BY p.schedule
            FOR UPDATE;
        SELECT pg_catalog.max(p.last_slot)
          INTO v_old_last
          FROM taskboard.schedule_slots AS p
         WHERE p.schedule = ANY (v_previous);
        IF v_old_last >= enqueue_periodic.slot THEN
            RETURN NULL;
        END IF;
    END IF;

    IF NOT v_fresh THEN
        UPDATE taskboard.schedule_slots AS s
           SET last_slot = enqueue_periodic.slot,
               last_job_id = NULL,
               task = enqueue_periodic.task,
               queue = enqueue_periodic.queue,
               updated_at = v_now
         WHERE s.schedule = enqueue_periodic.schedule;
    END IF;

    v_id := taskboard.enqueue(
        task         => enqueue_periodic.task,
        payload      => enqueue_periodic.payload,
        queue        => enqueue_periodic.queue,
        run_at       => enqueue_periodic.slot,
        priority     => enqueue_periodic.priority,
        max_attempts => enqueue_periodic.max_attempts
    );

    UPDATE taskboard.schedule_slots AS s
       SET last_job_id = v_id
     WHERE s.schedule = enqueue_periodic.schedule;
    -- The slot is taken under the previous names too, so that a worker
    -- still declaring an old name finds it taken.
    UPDATE taskboard.schedule_slots AS s
       SET last_slot = enqueue_periodic.slot,
           last_job_id = v_id,
           task = enqueue_periodic.task,
           queue = enqueue_periodic.queue,
           updated_at = v_now
     WHERE s.schedule = ANY (v_previous)
       AND s.last_slot < enqueue_periodic.slot;
    RETURN v_id;
END
$$;

--
-- Name: FUNCTION enqueue_periodic(schedule text, slot timestamp with time zone, task text, payload jsonb, queue text, priority integer, max_attempts integer, previous_names text[]); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.enqueue_periodic(schedule text, slot timestamp with time zone, task text, payload jsonb, queue text, priority integer, max_attempts integer, previous_names text[]) IS 'enqueue_periodic(schedule, slot, task, payload, queue, priority, max_attempts, previous_names) -> bigint
Enqueues the job of one slot of a schedule (a time its cron fires, as the
caller computed it from the database clock) and returns its id: a queued
job of `task` on `queue` whose run_at is `slot`, so get_job shows which
slot it is. Exactly once per slot, whatever the number of callers: the
schedule''s row in taskboard.schedule_slots is locked and compared
(last_slot < slot) before the job is inserted, and concurrent callers of
one slot wait for that row, then find the slot taken.
The row keeps the task and queue of its latest slot: they are part of the
slot''s identity.
NULL: that slot, or a later one, was already enqueued for this task on
this queue; nothing changes. So only the latest of the slots missed while
no worker ran gets a job, when a caller sends it first.
previous_names: the names this schedule had before a rename. The first
call under the new name starts from the latest slot those rows hold, and
each slot taken is marked taken under them too, so no slot runs twice
across the rename; remove_schedule deletes the old rows once no worker
declares them.
Sends NOTIFY taskboard, ''<queue>'' as enqueue does (the job is runnable
now). Joins the caller''s transaction: a rollback frees the slot again.
In REPEATABLE READ or SERIALIZABLE a race may raise 40001.
Executable by the worker and admin roles, not by producers.
Raises 23505 when that slot, or a later one, was taken for another task
or queue (two declarations share the name); nothing changes.
Raises 22023 when schedule, task or queue is NULL, empty or longer than
200 characters, slot is NULL, not finite, outside the years 1 to 9999
(before 0001-01-01 or from 10000-01-01 on, UTC) or later than the database
clock, payload, priority or max_attempts is NULL, max_attempts < 1, or a
name in previous_names is NULL, empty or longer than 200 characters.';

--
-- Name: enqueue_waiting(text, jsonb, text, timestamp with time zone, integer, integer, text, jsonb, text, bigint[], text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.enqueue_waiting(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now     timestamptz := pg_catalog.clock_timestamp();
    v_deps    bigint[];
    v_missing bigint;
    v_pending bigint[];
    v_failed  bigint;
    v_failed_state text;
    v_state   text;
    v_id      bigint;
BEGIN
    v_checked := taskboard.check_arg(coalesce(pg_catalog.array_ndims(enqueue_waiting.depends_on), 1) = 1,
                     'depends_on must be a one-dimensional array of job ids');
    v_checked := taskboard.check_items('depends_on', enqueue_waiting.depends_on);
    v_checked := taskboard.check_arg(pg_catalog.cardinality(enqueue_waiting.depends_on) <= 10000,
                     'depends_on must name at most 10000 jobs, got ' || pg_catalog.cardinality(enqueue_waiting.depends_on));
    v_checked := taskboard.check_arg(enqueue_waiting.dedupe_key IS NULL, 'a job with depends_on cannot have a dedupe_key');
    v_deps := ARRAY(SELECT DISTINCT d.id FROM pg_catalog.unnest(enqueue_waiting.depends_on) AS d(id) ORDER BY d.id);

    -- Each dependency read and held, in id order, with FOR KEY SHARE: the
    -- lock the edge's foreign key takes, which only a delete waits for, so
    -- the holders' writes go on. A dependency may then end while this
    -- transaction is open, its end unable to see the edge written here: the
    -- check written below reads each again once this transaction has
    -- committed (taskboard.recheck_dependencies). In REPEATABLE READ or
    -- SERIALIZABLE, a dependency changed since the snapshot raises 40001.
    WITH held AS MATERIALIZED (
        SELECT j.id, j.state
          FROM taskboard.jobs AS j
         WHERE j.id = ANY (v_deps)
         ORDER BY j.id
           FOR KEY SHARE
    )
    SELECT (SELECT pg_catalog.min(d.id) FROM pg_catalog.unnest(v_deps) AS d(id)
             WHERE d.id NOT IN (SELECT h.id FROM held AS h)),
           ARRAY(SELECT h.id FROM held AS h WHERE h.state IN ('waiting', 'queued', 'running') ORDER BY h.id),
           (SELECT pg_catalog.min(h.id) FROM held AS h WHERE h.state IN ('dead', 'cancelled'))
      INTO v_missing, v_pending, v_failed;
    v_checked := taskboard.check_arg(v_missing IS NULL, 'depends_on names job ' || v_missing || ', which does not exist');

    IF v_failed IS NOT NULL AND enqueue_waiting.on_dependency_failure = 'cancel' THEN
        -- A dependency already ended dead or cancelled: the job is cancelled
        -- from the start, with the reason, and waits for nothing.
        SELECT j.state INTO v_failed_state FROM taskboard.jobs AS j WHERE j.id = v_failed;
        INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts,
                                         trace_context, concurrency_key, state, finished_at, errors,
                                         dependencies_left, on_dependency_failure)
        VALUES (enqueue_waiting.queue, enqueue_waiting.task, enqueue_waiting.payload,
                enqueue_waiting.priority, enqueue_waiting.run_at, enqueue_waiting.max_attempts,
                enqueue_waiting.trace_context, enqueue_waiting.concurrency_key, 'cancelled', v_now,
                pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                    'error', pg_catalog.format('dependency %s ended %s', v_failed, v_failed_state),
                    'attempt', 0,
                    'at', v_now)),
                0, enqueue_waiting.on_dependency_failure)
        RETURNING j.id INTO v_id;
        RETURN v_id;
    END IF;

    v_state := CASE WHEN pg_catalog.cardinality(v_pending) > 0 THEN 'waiting' ELSE 'queued' END;
    INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts,
                                     trace_context, concurrency_key, state,
                                     dependencies_left, on_dependency_failure)
    VALUES (enqueue_waiting.queue, enqueue_waiting.task, enqueue_waiting.payload,
            enqueue_waiting.priority, enqueue_waiting.run_at, enqueue_waiting.max_attempts,
            enqueue_waiting.trace_context, enqueue_waiting.concurrency_key, v_state,
            pg_catalog.cardinality(v_pending), enqueue_waiting.on_dependency_failure)
    RETURNING j.id INTO v_id;
    INSERT INTO taskboard.job_dependencies (job_id, depends_on)
    SELECT v_id, p.id FROM pg_catalog.unnest(v_pending) AS p(id);
    IF v_state = 'waiting' THEN
        INSERT INTO taskboard.dependency_checks (job_id, side) VALUES (v_id, 'dependent');
    END IF;

    IF v_state = 'queued' AND enqueue_waiting.run_at <= v_now THEN
        PERFORM taskboard.notify_runnable(enqueue_waiting.queue);
    END IF;
    RETURN v_id;
END
$$;

--
-- Name: FUNCTION enqueue_waiting(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.enqueue_waiting(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text) IS 'enqueue_waiting(task, payload, queue, run_at, priority, max_attempts, dedupe_key, trace_context, concurrency_key, depends_on, on_dependency_failure) -> bigint
Internal: enqueue''s insert of a job with depends_on, its other arguments
checked by enqueue. The job waits (state waiting) for those of depends_on
that have not ended, and is queued at once when all succeeded; when one
ended dead or cancelled, it is inserted cancelled with the error
''dependency N ended dead'' (or cancelled), unless on_dependency_failure is
''run''. The dependencies are held with FOR KEY SHARE only, which no write
of their holders waits for; a job left waiting is checked again after
this transaction (taskboard.dependency_checks), in case a dependency ended
unseen meanwhile. Never granted to an application role.
Raises 22023 when depends_on is not one-dimensional, holds NULL, names
more than 10000 jobs or a job that does not exist, or dedupe_key is given.';

--
-- Name: fail(bigint, uuid, text, interval, boolean, text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.fail(job_id bigint, token uuid, error text, retry_in interval DEFAULT NULL::interval, retry boolean DEFAULT true, traceback text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    -- A longer traceback keeps its last c_traceback_kept characters.
    c_traceback_max  constant integer := 16384;
    c_traceback_kept constant integer := 16000;
    v_now       timestamptz := pg_catalog.clock_timestamp();
    v_traceback text := fail.traceback;
    v_state     text;
BEGIN
    v_checked := taskboard.check_lease(fail.job_id, fail.token);
    v_checked := taskboard.check_given('retry', fail.retry, 'true: retry while attempts are left; false: dead at once');
    IF fail.retry_in IS NOT NULL THEN
        v_checked := taskboard.check_interval('retry_in', fail.retry_in, interval '12 hours');
    END IF;

    IF pg_catalog.length(v_traceback) > c_traceback_max THEN
        v_traceback := pg_catalog.format(
                '[traceback cut: its first %s characters are not stored]',
                pg_catalog.length(v_traceback) - c_traceback_kept)
            || E'\n' || pg_catalog.right(v_traceback, c_traceback_kept);
    END IF;

    UPDATE taskboard.jobs AS j
       SET state = CASE
               WHEN NOT fail.retry OR j.attempt >= j.max_attempts THEN 'dead'
               ELSE 'queued'
           END,
           run_at = CASE
               WHEN NOT fail.retry OR j.attempt >= j.max_attempts THEN j.run_at
               ELSE v_now + coalesce(
                   fail.retry_in,
                   -- Past attempt 13 even 75 % of 2^attempt s exceeds the
                   -- one-hour cap; the exponent is bounded only so that
                   -- power() cannot overflow.
                   pg_catalog.make_interval(secs => least(
                       3600,
                       pg_catalog.power(2, least(j.attempt, 16)) * (0.75 + 0.5 * pg_catalog.random()))))
           END,
           finished_at = CASE WHEN NOT fail.retry OR j.attempt >= j.max_attempts THEN v_now END,
           errors = j.errors || pg_catalog.jsonb_build_array(
               pg_catalog.jsonb_build_object(
                   'error', fail.error,
                   'attempt', j.attempt,
                   'worker', j.claimed_by,
                   'at', v_now)
               || CASE
                      WHEN v_traceback IS NULL THEN '{}'::jsonb
                      ELSE pg_catalog.jsonb_build_object('traceback', v_traceback)
                  END)
     WHERE j.id = fail.job_id
       AND j.state = 'running'
       AND j.lease_token = fail.token
    RETURNING j.state INTO v_state;
    IF v_state IS NOT NULL THEN
        -- Its dependents, read in a statement of their own with the row
        -- locked (the UPDATE's snapshot may predate a wait for it).
        IF v_state = 'dead'
           AND (EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = fail.job_id)
                OR pg_catalog.current_setting('transaction_isolation') <> 'read committed') THEN
            PERFORM taskboard.settle_dependents(ARRAY[fail.job_id]);
        END IF;
        RETURN v_state;
    END IF;

    -- Refused: a line of the job's history when the token's lease was
    -- reclaimed or cancelled.
    PERFORM taskboard.record_refusals('refused_fail', ARRAY[fail.job_id], ARRAY[fail.token]);

    RETURN NULL;
END
$$;

--
-- Name: FUNCTION fail(job_id bigint, token uuid, error text, retry_in interval, retry boolean, traceback text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.fail(job_id bigint, token uuid, error text, retry_in interval, retry boolean, traceback text) IS 'fail(job_id, token, error, retry_in, retry, traceback) -> text
The holder reports a failed attempt. The error is recorded with the
attempt, the worker and the time, and with the traceback when one is
given (key `traceback`, absent otherwise). With `retry` true and attempts
left the job is queued again at clock + retry_in (NULL: 2^attempt seconds
with +/-25 % jitter, capped at one hour); with none left, or with `retry`
false (a non-retryable error, whatever attempts are left and whatever
retry_in says), it becomes dead at once, with finished_at, and the jobs
waiting on it (taskboard.enqueue''s depends_on) are cancelled in the same
transaction, with the error ''dependency N ended dead'', but for those
enqueued with on_dependency_failure ''run'', which count it as ended.
Returns the new state, ''queued'' or ''dead''.
The traceback is bounded: one longer than 16384 characters keeps its
last 16000 (where the exception is), after a first line saying how many
characters were cut, so at most 16 KiB of characters is stored.
NULL: the token is not current; the job does not change.
A refused write by a holder whose lease was reclaimed or cancelled is a
line of the job''s history (taskboard.job_history), once per token and
kind; a token the history does not know is not recorded. The line is
written in the caller''s transaction: a caller that rolls back keeps none.
Raises 22023 when job_id, token or retry is NULL, or retry_in is not
positive or longer than 12 hours (''infinity'' included).
Calls by name of the four-argument form of 0.1.0 and 0.2.0 resolve to
this one: the two arguments it gained come last, with defaults.';

--
-- Name: find_ids(text, text, text, bigint, integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.find_ids(queue text, state text, task text, after_id bigint, max_rows integer) RETURNS bigint[]
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_custom_plan'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_key('queue', find_ids.queue, NULL, 'NULL: every queue');
    v_checked := taskboard.check_key('task', find_ids.task, NULL, 'NULL: every task');
    IF find_ids.state IS NOT NULL THEN
        v_checked := taskboard.check_choice('state', find_ids.state,
                 'waiting', 'queued', 'running', 'succeeded', 'dead', 'cancelled');
    END IF;
    v_checked := taskboard.check_between('max_rows', find_ids.max_rows, 1, 1000);
    RETURN ARRAY(
        SELECT j.id
          FROM taskboard.jobs AS j
         WHERE (find_ids.queue IS NULL OR j.queue = find_ids.queue)
           AND (find_ids.state IS NULL OR j.state = find_ids.state)
           AND (find_ids.task IS NULL OR j.task = find_ids.task)
           AND (find_ids.after_id IS NULL OR j.id < find_ids.after_id)
         ORDER BY j.id DESC
         LIMIT find_ids.max_rows);
END
$$;

--
-- Name: FUNCTION find_ids(queue text, state text, task text, after_id bigint, max_rows integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.find_ids(queue text, state text, task text, after_id bigint, max_rows integer) IS 'find_ids(queue, state, task, after_id, max_rows) -> bigint[]
Internal: the search of taskboard.find_jobs and taskboard.find_jobs_summary.
The ids of the jobs that match every filter given (NULL: any), below
after_id when it is given (keyset paging), newest first, at most
max_rows of them. Planned on every call (plan_cache_mode =
force_custom_plan): each combination of filters gets its own index.
Raises 22023 ''queue must not be empty (NULL: every queue)'' (the same for
task), ''state must be waiting, queued, running, succeeded, dead or
cancelled, got <state>'' or ''max_rows must be between 1 and 1000, got
<max_rows>''.
Called by find_jobs and find_jobs_summary; never granted to an
application role.';

--
-- Name: find_jobs(text, text, text, bigint, integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.find_jobs(queue text DEFAULT NULL::text, state text DEFAULT NULL::text, task text DEFAULT NULL::text, after_id bigint DEFAULT NULL::bigint, max_rows integer DEFAULT 50) RETURNS SETOF taskboard.job_info
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_custom_plan'
    AS $$
BEGIN
    RETURN QUERY
    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.finished_at, j.result, j.errors, j.started_at,
           j.payload, j.fence, j.concurrency_key,
           CASE WHEN j.state = 'waiting' THEN
               ARRAY(SELECT d.depends_on
                       FROM taskboard.job_dependencies AS d
                      WHERE d.job_id = j.id
                      ORDER BY d.depends_on)
           END
      FROM taskboard.jobs AS j
     WHERE j.id = ANY (taskboard.find_ids(find_jobs.queue, find_jobs.state, find_jobs.task, find_jobs.after_id, find_jobs.max_rows))
     ORDER BY j.id DESC;
END
$$;

--
-- Name: FUNCTION find_jobs(queue text, state text, task text, after_id bigint, max_rows integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.find_jobs(queue text, state text, task text, after_id bigint, max_rows integer) IS 'find_jobs(queue, state, task, after_id, max_rows) -> setof taskboard.job_info
Jobs for people and dashboards: those matching every filter given (NULL:
any), newest first by id, at most max_rows of them. Keyset paging: pass
the last job_id of a page as after_id to get the jobs older than it.
Each row is as get_job shows it: concurrency_key, and for a waiting job
waiting_for, the ids of the dependencies it still waits for.
Never a token. For every role: get_job already shows any job to each of
them, and ids are consecutive.
Raises 22023 when queue or task is empty, state is not one of waiting,
queued, running, succeeded, dead or cancelled, or max_rows is NULL or outside
1..1000.';

--
-- Name: find_jobs_summary(text, text, text, bigint, integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.find_jobs_summary(queue text DEFAULT NULL::text, state text DEFAULT NULL::text, task text DEFAULT NULL::text, after_id bigint DEFAULT NULL::bigint, max_rows integer DEFAULT 50) RETURNS SETOF taskboard.job_summary
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_custom_plan'
    AS $$
BEGIN
    RETURN QUERY
    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.started_at, j.finished_at,
           pg_catalog.jsonb_array_length(j.errors),
           pg_catalog.left(j.errors -> -1 ->> 'error', 200)
      FROM taskboard.jobs AS j
     WHERE j.id = ANY (taskboard.find_ids(find_jobs_summary.queue, find_jobs_summary.state, find_jobs_summary.task,
                                          find_jobs_summary.after_id, find_jobs_summary.max_rows))
     ORDER BY j.id DESC;
END
$$;

--
-- Name: FUNCTION find_jobs_summary(queue text, state text, task text, after_id bigint, max_rows integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.find_jobs_summary(queue text, state text, task text, after_id bigint, max_rows integer) IS 'find_jobs_summary(queue, state, task, after_id, max_rows) -> setof taskboard.job_summary
The jobs find_jobs would return for the same arguments (every filter
given, NULL: any; newest first by id; keyset paging by after_id; at most
max_rows), each as a list shows it: job_id, queue, task, state, attempt,
max_attempts, priority, run_at, created_at, started_at, finished_at,
failures (how many entries its errors has) and last_error (the `error`
of the last entry, its first 200 characters; NULL when none). Never the
payload, the result, the errors themselves or a token: get_job gives
the whole job. For every role, as find_jobs.
Raises 22023 as find_jobs does: when queue or task is empty, state is not
one of waiting, queued, running, succeeded, dead or cancelled, or max_rows is
NULL or outside 1..1000.';

--
-- Name: full_keys(text, integer, timestamp with time zone); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.full_keys(queue text, max_running_per_key integer, clock timestamp with time zone) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    RETURN ARRAY(
        SELECT h.concurrency_key
          FROM taskboard.jobs AS h
         WHERE h.queue = full_keys.queue
           AND h.concurrency_key IS NOT NULL
           AND (h.state = 'running' OR h.held_until > full_keys.clock)
         GROUP BY h.concurrency_key
        HAVING pg_catalog.count(*) >= full_keys.max_running_per_key);
END
$$;

--
-- Name: FUNCTION full_keys(queue text, max_running_per_key integer, clock timestamp with time zone); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.full_keys(queue text, max_running_per_key integer, clock timestamp with time zone) IS 'full_keys(queue, max_running_per_key, clock) -> text[]
Internal: a picker''s bound under a key limit (taskboard.set_key_limit):
the concurrency keys of `queue` whose holders fill it by `clock`. A
holder is a running job (an expired lease counts until its job is
reclaimed or finished) or one cancelled under a lease not yet ended. No
queued job of theirs is started; the others'' are. Writes nothing.
Called by claim, on its turn on the queue''s row; never granted to an
application role.';

--
-- Name: get_job(bigint); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.get_job(job_id bigint) RETURNS taskboard.job_info
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_job taskboard.job_info;
BEGIN
    v_checked := taskboard.check_given('job_id', get_job.job_id);

    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.finished_at, j.result, j.errors, j.started_at,
           j.payload, j.fence, j.concurrency_key,
           CASE WHEN j.state = 'waiting' THEN
               ARRAY(SELECT d.depends_on
                       FROM taskboard.job_dependencies AS d
                      WHERE d.job_id = j.id
                      ORDER BY d.depends_on)
           END
      INTO v_job
      FROM taskboard.jobs AS j
     WHERE j.id = get_job.job_id;

    RETURN v_job;
END
$$;

--
-- Name: FUNCTION get_job(job_id bigint); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.get_job(job_id bigint) IS 'get_job(job_id) -> taskboard.job_info
What a producer may see of a job: everything but the lease token.
started_at is when its last claim started it (NULL until claimed).
errors lists each failed attempt as {error, attempt, worker, at}, with a
traceback when the worker sent one (fail bounds it). payload is what the
job was enqueued with; fence is the number of its latest claim (0 before
the first). concurrency_key is the key the job was enqueued with (NULL:
none). waiting_for, for a waiting job, lists the ids of the dependencies
it still waits for, in id order (each leaves the list as it ends); NULL
for a job in any other state.
A row of NULLs for an unknown id.
Raises 22023 when job_id is NULL.';

--
-- Name: grant_leases(bigint[], integer, text, interval, timestamp with time zone); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.grant_leases(ids bigint[], most integer, worker text, lease interval, clock timestamp with time zone) RETURNS SETOF taskboard.claimed
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    RETURN QUERY
    WITH chosen AS MATERIALIZED (
        -- The rows as they are before the grant, found by id only.
        SELECT o.id, o.state, o.priority, o.run_at, o.claimed_by, o.attempt, o.fence,
               o.lease_expires_at, o.lease_token
          FROM taskboard.jobs AS o
         WHERE o.id = ANY (grant_leases.ids)
           AND o.state IN ('queued', 'running')
         ORDER BY o.priority DESC, o.run_at, o.id
         LIMIT grant_leases.most
    ),
    granted AS (
        -- By id through an array, and by id only: joined to `chosen`
        -- instead, the plan kept from an empty table walked the whole
        -- primary key. The state test repeats the fence for the reader.
        UPDATE taskboard.jobs AS j
           SET state = 'running',
               lease_token = pg_catalog.gen_random_uuid(),
               lease_expires_at = grant_leases.clock + grant_leases.lease,
               attempt = j.attempt + 1,
               fence = j.fence + 1,
               started_at = grant_leases.clock,
               claimed_by = grant_leases.worker
         WHERE j.id = ANY (ARRAY(SELECT c.id FROM chosen AS c))
           AND j.state IN ('queued', 'running')
        RETURNING j.id, j.lease_token, j.task, j.payload, j.attempt, j.lease_expires_at,
                  j.idempotency_key, j.fence, j.trace_context
    ),
    reclaimed AS (
        INSERT INTO taskboard.job_events
               (job_id, kind, at, worker, actor, actor_worker, attempt, fence, lease_expires_at,
                token_digest)
        SELECT c.id, 'reclaimed', grant_leases.clock, c.claimed_by,
               coalesce(NULLIF(pg_catalog.current_setting('role'), 'none'), pg_catalog.session_user()::text),
               grant_leases.worker, c.attempt, c.fence, c.lease_expires_at,
               pg_catalog.sha256(pg_catalog.uuid_send(c.lease_token))
          FROM chosen AS c
         WHERE c.state = 'running'
           AND c.id IN (SELECT g.id FROM granted AS g)
    )
    SELECT g.id, g.lease_token, g.task, g.payload, g.attempt, g.lease_expires_at, g.idempotency_key,
           g.fence, g.trace_context,
           grant_leases.clock - CASE WHEN c.state = 'running' THEN c.lease_expires_at ELSE c.run_at END
      FROM granted AS g
      JOIN chosen AS c ON c.id = g.id
     ORDER BY c.priority DESC, c.run_at, c.id;
END
$$;

--
-- Name: FUNCTION grant_leases(ids bigint[], most integer, worker text, lease interval, clock timestamp with time zone); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.grant_leases(ids bigint[], most integer, worker text, lease interval, clock timestamp with time zone) IS 'grant_leases(ids, most, worker, lease, clock) -> setof taskboard.claimed
Internal: the one place a lease is granted. Of the jobs `ids` names that
are queued or running, takes at most `most`, the first in claim order
(priority, higher first, then run_at, then id), and gives each a fresh
lease token, lease_expires_at = clock + lease, attempt + 1, fence + 1,
started_at = clock, claimed_by = worker and state ''running''. Returns
them in claim order, with waited: clock minus run_at for a queued job,
minus the expired lease''s deadline for a running one (a reclaim). Each
reclaim writes a line ''reclaimed'' in the job''s history with the lease it
took over (holder, attempt, fence, deadline, token digest), its actor
the role in force (the one SET ROLE chose, else the login) and
actor_worker the worker. The caller has locked every row of `ids` (FOR
NO KEY UPDATE) and chosen it: a picker of taskboard.claim.
Called by claim; never granted to an application role.';

--
-- Name: job_activity(interval); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.job_activity(recent interval DEFAULT '01:00:00'::interval) RETURNS TABLE(minute_start timestamp with time zone, queue text, succeeded bigint, failed bigint, dead bigint, cancelled bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_since timestamptz;
BEGIN
    v_checked := taskboard.check_recent(job_activity.recent);
    v_since := pg_catalog.clock_timestamp() - job_activity.recent;

    RETURN QUERY
    WITH recent_jobs AS (
        SELECT j.queue, j.state, j.finished_at, j.errors
          FROM taskboard.jobs AS j
         WHERE j.finished_at >= v_since
        UNION ALL
        -- A job that failed and waits for its next attempt, or runs it; or
        -- one an admin retried (its attempts reset, its errors kept): only
        -- those whose last failure is within `recent` (the index
        -- jobs_unfinished_last_failure), since no earlier entry can be.
        SELECT j.queue, j.state, j.finished_at, j.errors
          FROM taskboard.jobs AS j
         WHERE j.state IN ('queued', 'running')
           AND j.errors <> '[]'::jsonb
           AND taskboard.last_failure_at(j.errors) >= v_since
    ), events AS (
        SELECT r.queue, r.state AS what, r.finished_at AS at
          FROM recent_jobs AS r
         WHERE r.finished_at IS NOT NULL
        UNION ALL
        SELECT r.queue, 'failed', (e.entry ->> 'at')::timestamptz
          FROM recent_jobs AS r
         CROSS JOIN LATERAL pg_catalog.jsonb_array_elements(r.errors) AS e(entry)
         WHERE (e.entry ->> 'at')::timestamptz >= v_since
    )
    SELECT pg_catalog.date_trunc('minute', ev.at),
           ev.queue,
           pg_catalog.count(*) FILTER (WHERE ev.what = 'succeeded'),
           pg_catalog.count(*) FILTER (WHERE ev.what = 'failed'),
           pg_catalog.count(*) FILTER (WHERE ev.what = 'dead'),
           pg_catalog.count(*) FILTER (WHERE ev.what = 'cancelled')
      FROM events AS ev
     GROUP BY 1, 2
     ORDER BY 1, 2;
END
$$;

--
-- Name: FUNCTION job_activity(recent interval); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.job_activity(recent interval) IS 'job_activity(recent) -> table of (minute_start, queue, succeeded, failed, dead, cancelled)
What happened within `recent`, per minute and queue, for charts:
  succeeded, dead, cancelled  jobs that finished so in that minute;
  failed                      attempts that failed in that minute (each
                              entry of a job''s errors: a handler''s failure,
                              retried or not, or a last attempt''s lease
                              that expired).
Only minutes with something in them are returned, oldest first. It reads
the jobs finished within `recent` and the unfinished jobs whose last
failed attempt is within it, never the older ones.
Raises 22023 when recent is NULL, not positive or longer than 31 days,
by the time it gives: unless clock - 31 days <= clock - recent < clock,
months and days counted as the calendar makes them.';

--
-- Name: job_history(bigint); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.job_history(job_id bigint) RETURNS TABLE(at timestamp with time zone, kind text, worker text, actor text, attempt integer, fence bigint, lease_expires_at timestamp with time zone, actor_worker text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_given('job_id', job_history.job_id);

    RETURN QUERY
    SELECT e.at, e.kind, e.worker, e.actor, e.attempt, e.fence, e.lease_expires_at, e.actor_worker
      FROM taskboard.job_events AS e
     WHERE e.job_id = job_history.job_id
     ORDER BY e.at, e.id;
END
$$;

--
-- Name: FUNCTION job_history(job_id bigint); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.job_history(job_id bigint) IS 'job_history(job_id) -> setof (at, kind, worker, actor, attempt, fence, lease_expires_at, actor_worker)
The job''s history beyond its errors, oldest first: ''reclaimed'' (worker''s
expired lease taken over by a claim: actor is the role it ran as,
actor_worker the worker name it stated), ''cancelled'' (by actor; worker is
the holder when the job was running), ''retried'' (by actor), and
''refused_complete'', ''refused_fail'', ''refused_renew'' (a late write by
worker, whose lease was reclaimed or cancelled, refused by the fence;
once per lease and kind). actor is the database role in force (the one
SET ROLE chose, else the login); on a reclaim recorded before
actor_worker existed it is the worker name, and actor_worker is NULL, as
on every line but a reclaim. attempt, fence and lease_expires_at are the
holder''s. Never a token.
No rows: the job is unknown or has no such history.
Raises 22023 when job_id is NULL.';

--
-- Name: last_failure_at(jsonb); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.last_failure_at(errors jsonb) RETURNS timestamp with time zone
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT pg_catalog.max((e.entry ->> 'at')::timestamptz)
      FROM pg_catalog.jsonb_array_elements(last_failure_at.errors) AS e(entry)
$$;

--
-- Name: FUNCTION last_failure_at(errors jsonb); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.last_failure_at(errors jsonb) IS 'last_failure_at(errors) -> timestamptz
The latest `at` among the entries of a job''s errors; NULL when there is
none. Immutable for the index: each `at` is written by the functions as
JSON''s ISO 8601 text of a timestamptz, which always carries its UTC
offset, so reading it back depends on no setting.
Raises 22007 (invalid_datetime_format) on an `at` that is not such a text.';

--
-- Name: lease_state(bigint, uuid); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.lease_state(job_id bigint, token uuid) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_state text;
BEGIN
    v_checked := taskboard.check_lease(lease_state.job_id, lease_state.token);

    SELECT CASE
               WHEN j.state = 'running' AND j.lease_expires_at > pg_catalog.clock_timestamp() THEN 'held'
               WHEN j.state = 'running' THEN 'expired'
               WHEN j.state = 'succeeded' THEN 'completed'
           END
      INTO v_state
      FROM taskboard.jobs AS j
     WHERE j.id = lease_state.job_id
       AND j.lease_token = lease_state.token
       AND j.state IN ('running', 'succeeded');

    RETURN coalesce(v_state, 'lost');
END
$$;

--
-- Name: FUNCTION lease_state(job_id bigint, token uuid); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.lease_state(job_id bigint, token uuid) IS 'lease_state(job_id, token) -> text
Read-only answer for the holder, typically right before an external effect:
  held:      the token is current and its lease is live;
  expired:   the token is current but its lease is past its deadline and
             nobody has reclaimed the job yet (complete would still work);
  completed: the job succeeded with this token;
  lost:      anything else (reclaimed, failed, released, cancelled, unknown).
Raises 22023 when job_id or token is NULL.';

--
-- Name: notify_runnable(text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.notify_runnable(queue text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    IF pg_catalog.lower(pg_catalog.current_setting('taskboard.notify', true))
           IN ('off', 'false', 'no', '0') THEN
        RETURN;
    END IF;
    PERFORM pg_catalog.pg_notify('taskboard', notify_runnable.queue);
END
$$;

--
-- Name: FUNCTION notify_runnable(queue text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.notify_runnable(queue text) IS 'notify_runnable(queue) -> void
Internal: tells listeners that `queue` has a job runnable now, by
NOTIFY taskboard, ''<queue>''. Called by enqueue, enqueue_many, release
(without delay) and retry; never granted to an application role.
A database or role setting taskboard.notify = off (or false, no, 0)
turns notifications off for deployments that prefer pure polling: NOTIFY
serialises notifying transactions on a cluster-wide lock at commit.
Raises nothing.';

--
-- Name: pause(text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.pause(queue text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_name('queue', pause.queue);

    INSERT INTO taskboard.queues AS q (queue, paused)
    VALUES (pause.queue, true)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET paused = true,
           updated_at = pg_catalog.clock_timestamp()
     WHERE NOT q.paused;
    RETURN FOUND;
END
$$;

--
-- Name: FUNCTION pause(queue text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.pause(queue text) IS 'pause(queue) -> boolean
Pauses `queue`: from the next claim on, claim hands out nothing from it.
Its running jobs carry on, renew, complete and fail as usual; its queued
jobs wait. A queue needs no declaration: pausing one that has no jobs yet
works. True when this call paused it, false when it already was paused.
Raises 22023 when queue is NULL, empty or longer than 200 characters.';

--
-- Name: pick_expired(text, timestamp with time zone, integer, text[], integer, interval, boolean); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.pick_expired(queue text, clock timestamp with time zone, most integer, rate_full_keys text[], rate_starts integer, rate_per interval, rate_by_key boolean) RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    RETURN ARRAY(
        WITH expired AS MATERIALIZED (
            SELECT j.id, j.priority, j.run_at, j.concurrency_key AS ck
              FROM taskboard.jobs AS j
             WHERE j.queue = pick_expired.queue
               AND j.state = 'running'
               AND j.lease_expires_at <= pick_expired.clock
               AND j.attempt < j.max_attempts
               AND (j.concurrency_key IS NULL
                    OR j.concurrency_key NOT IN (
                        SELECT f.key FROM pg_catalog.unnest(pick_expired.rate_full_keys) AS f(key)))
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT pick_expired.most
               FOR NO KEY UPDATE SKIP LOCKED
        ),
        rooms AS MATERIALIZED (
            SELECT r.ck, pick_expired.rate_starts - (
                       SELECT pg_catalog.count(*)
                         FROM taskboard.queue_starts AS s
                        WHERE s.queue = pick_expired.queue
                          AND s.concurrency_key = r.ck
                          AND s.started_at > pick_expired.clock - pick_expired.rate_per) AS room
              FROM (SELECT DISTINCT e.ck FROM expired AS e) AS r
             WHERE pick_expired.rate_by_key
               AND r.ck IS NOT NULL
        )
        SELECT n.id
          FROM (SELECT e.id, e.ck,
                       pg_catalog.row_number() OVER (PARTITION BY e.ck ORDER BY e.priority DESC, e.run_at, e.id) AS nth
                  FROM expired AS e) AS n
         WHERE NOT pick_expired.rate_by_key
            OR n.ck IS NULL
            OR n.nth <= (SELECT r.room FROM rooms AS r WHERE r.ck = n.ck));
END
$$;

--
-- Name: FUNCTION pick_expired(queue text, clock timestamp with time zone, most integer, rate_full_keys text[], rate_starts integer, rate_per interval, rate_by_key boolean); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.pick_expired(queue text, clock timestamp with time zone, most integer, rate_full_keys text[], rate_starts integer, rate_per interval, rate_by_key boolean) IS 'pick_expired(queue, clock, most, rate_full_keys, rate_starts, rate_per, rate_by_key) -> bigint[]
Internal: a picker of taskboard.claim, the reclaims. The first `most`
running jobs of `queue` whose lease expired by `clock` with an attempt
left, in claim order (priority, higher first, then run_at, then id),
locked FOR NO KEY UPDATE SKIP LOCKED, those of the keys in
`rate_full_keys` left out. Under a rate limit per key (rate_by_key), a
key''s first ones only, up to the starts left in its window of rate_per
(rate_starts less its starts logged in taskboard.queue_starts), counted
once per key. Writes nothing; the rows it locked stay locked until the
caller''s transaction ends. Reads this queue''s running jobs only.
Called by claim; never granted to an application role.';

--
-- Name: pick_keyed(text, timestamp with time zone, integer, text[], integer, integer, interval, boolean, bigint[]); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.pick_keyed(queue text, clock timestamp with time zone, room integer, full_keys text[], max_running_per_key integer, rate_starts integer, rate_per interval, rate_by_key boolean, reclaims bigint[]) RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    RETURN ARRAY(
        WITH keyed AS MATERIALIZED (
            SELECT j.id, j.priority, j.run_at, j.concurrency_key AS ck
              FROM taskboard.jobs AS j
             WHERE j.state = 'queued'
               AND j.queue = pick_keyed.queue
               -- A hashed set: the queued jobs of full keys are read past
               -- (a key with a long backlog has many), each looked up once.
               AND (j.concurrency_key IS NULL
                    OR j.concurrency_key NOT IN (SELECT f.key FROM pg_catalog.unnest(pick_keyed.full_keys) AS f(key)))
               AND j.run_at <= pick_keyed.clock
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT 16 * pick_keyed.room
        ),
        rooms AS MATERIALIZED (
            -- Under a rate per key: the starts left in each key's window.
            SELECT r.ck, pick_keyed.rate_starts - (
                       SELECT pg_catalog.count(*)
                         FROM taskboard.queue_starts AS s
                        WHERE s.queue = pick_keyed.queue
                          AND s.concurrency_key = r.ck
                          AND s.started_at > pick_keyed.clock - pick_keyed.rate_per) AS room
              FROM (SELECT DISTINCT k.ck FROM keyed AS k) AS r
             WHERE pick_keyed.rate_by_key
               AND r.ck IS NOT NULL
        ),
        reclaimed AS MATERIALIZED (
            -- Under a rate per key: the claim's reclaims of each key.
            SELECT x.concurrency_key AS ck, pg_catalog.count(*) AS n
              FROM taskboard.jobs AS x
             WHERE pick_keyed.rate_by_key
               AND x.id = ANY (pick_keyed.reclaims)
               AND x.concurrency_key IS NOT NULL
             GROUP BY x.concurrency_key
        ),
        picked AS MATERIALIZED (
            SELECT n.id
              FROM (SELECT k.id, k.priority, k.run_at, k.ck,
                           pg_catalog.row_number() OVER (PARTITION BY k.ck ORDER BY k.priority DESC, k.run_at, k.id) AS nth
                      FROM keyed AS k) AS n
             WHERE n.ck IS NULL
                OR ((pick_keyed.max_running_per_key IS NULL
                     OR n.nth <= pick_keyed.max_running_per_key - (
                            SELECT pg_catalog.count(*)
                              FROM taskboard.jobs AS h
                             WHERE h.queue = pick_keyed.queue
                               AND h.concurrency_key = n.ck
                               AND (h.state = 'running' OR h.held_until > pick_keyed.clock)))
                    AND (NOT pick_keyed.rate_by_key
                         OR n.nth <= (SELECT r.room FROM rooms AS r WHERE r.ck = n.ck)
                                     - coalesce((SELECT c.n FROM reclaimed AS c WHERE c.ck = n.ck), 0)))
             ORDER BY n.priority DESC, n.run_at, n.id
             LIMIT pick_keyed.room
        ),
        locked AS MATERIALIZED (
            -- Found by id alone: with the queue or the state in this test,
            -- the plan kept from an empty table walked the queue's whole
            -- queued index on PostgreSQL 15. The locked row is the newest
            -- version.
            SELECT j.id, j.state
              FROM taskboard.jobs AS j
             WHERE j.id = ANY (ARRAY(SELECT p.id FROM picked AS p))
               FOR NO KEY UPDATE SKIP LOCKED
        )
        SELECT l.id FROM locked AS l WHERE l.state = 'queued');
END
$$;

--
-- Name: FUNCTION pick_keyed(queue text, clock timestamp with time zone, room integer, full_keys text[], max_running_per_key integer, rate_starts integer, rate_per interval, rate_by_key boolean, reclaims bigint[]); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.pick_keyed(queue text, clock timestamp with time zone, room integer, full_keys text[], max_running_per_key integer, rate_starts integer, rate_per interval, rate_by_key boolean, reclaims bigint[]) IS 'pick_keyed(queue, clock, room, full_keys, max_running_per_key, rate_starts, rate_per, rate_by_key, reclaims) -> bigint[]
Internal: a picker of taskboard.claim, per concurrency key (under a key
limit or a rate limit per key). Reads the queued jobs of `queue` due by
`clock` whose key is not in `full_keys` (a hashed set: the queued jobs
of full keys are read past), and those without a key, sixteen times
`room` of them in claim order (priority, higher first, then run_at, then
id), without a lock (the queue''s claimers take turns on its row), so that
the jobs of keys with room behind many of one key are still found. Takes
each key''s first ones up to its room: max_running_per_key less its
holders (running, or cancelled under a lease not yet ended), and under a
rate per key the starts left in its window less the claim''s `reclaims`
of that key; at most `room` in all, then locks them FOR NO KEY UPDATE
SKIP LOCKED and keeps those still queued (a cancel may have come first).
Writes nothing; the rows it locked stay locked until the caller''s
transaction ends.
Called by claim; never granted to an application role.';

--
-- Name: pick_next(text, timestamp with time zone, integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.pick_next(queue text, clock timestamp with time zone, most integer) RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
DECLARE
    v_keeps boolean := pg_catalog.current_setting('taskboard.claim_cursor', true) IS NOT DISTINCT FROM 'on';
    v_name text := 'taskboard.cursor_' || pg_catalog.to_hex(pg_catalog.hashtext(pick_next.queue));
    v_kept text;
    -- The cursor: when the next walk is due (µs since the epoch), then the
    -- last picked job's priority, run_at (days and µs since the epoch, UTC:
    -- rebuilt exactly, without floating point) and id, then the queue.
    v_cursor text[];
    v_clock bigint := (EXTRACT(epoch FROM pick_next.clock) * 1000000)::bigint;
    v_due bigint;
    v_walked timestamptz;
    v_priority bigint;
    v_run_at timestamptz;
    v_us bigint;
    v_id bigint;
    v_ids bigint[];
BEGIN
    IF v_keeps THEN
        v_kept := pg_catalog.current_setting(v_name, true);
        v_cursor := pg_catalog.regexp_match(v_kept COLLATE "C",
            '^([0-9]{1,17}) (-?[0-9]{1,12}) (-[0-9]{1,6}|[0-9]{1,7}) (-?[0-9]{1,11}) ([0-9]{1,18}) (.*)$');
    END IF;
    IF v_cursor IS NOT NULL AND v_cursor[6] = pick_next.queue
       AND v_clock < v_cursor[1]::bigint AND v_cursor[1]::bigint <= v_clock + 2000000 THEN
        v_priority := v_cursor[2]::bigint;
        v_run_at := ('1970-01-01 00:00:00'::timestamp + v_cursor[3]::integer * interval '1 day'
                     + v_cursor[4]::bigint * interval '1 microsecond') AT TIME ZONE 'UTC';
        v_ids := ARRAY(
            SELECT j.id
              FROM taskboard.jobs AS j
             WHERE j.queue = pick_next.queue
               AND j.state = 'queued'
               AND j.priority = v_priority
               AND (j.run_at, j.id) > (v_run_at, v_cursor[5]::bigint)
               AND j.run_at <= pick_next.clock
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT pick_next.most
               FOR NO KEY UPDATE SKIP LOCKED);
        IF pg_catalog.cardinality(v_ids) < pick_next.most THEN
            v_ids := v_ids || ARRAY(
                SELECT j.id
                  FROM taskboard.jobs AS j
                 WHERE j.queue = pick_next.queue
                   AND j.state = 'queued'
                   AND j.priority < v_priority
                   AND j.run_at <= pick_next.clock
                 ORDER BY j.priority DESC, j.run_at, j.id
                 LIMIT pick_next.most - pg_catalog.cardinality(v_ids)
                   FOR NO KEY UPDATE SKIP LOCKED);
        END IF;
        IF pg_catalog.cardinality(v_ids) = pick_next.most THEN
            v_due := v_cursor[1]::bigint;
        END IF;
    END IF;

    IF v_due IS NULL THEN
        -- The walk from the head, once no lease of the queue has expired (the
        -- check walks this queue's running jobs).
        v_walked := pg_catalog.clock_timestamp();
        IF EXISTS (
            SELECT
              FROM taskboard.jobs AS x
             WHERE x.queue = pick_next.queue
               AND x.state = 'running'
               AND x.lease_expires_at <= pick_next.clock) THEN
            RETURN NULL;
        END IF;
        v_ids := taskboard.pick_queued(pick_next.queue, pick_next.clock, pick_next.most);
        IF NOT v_keeps OR (pg_catalog.cardinality(v_ids) = 0 AND coalesce(v_kept, '') = '') THEN
            RETURN v_ids;
        END IF;
        v_due := (EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000000)::bigint
                 + LEAST(2000000, GREATEST(200000,
                         20 * (EXTRACT(epoch FROM pg_catalog.clock_timestamp() - v_walked) * 1000000)::bigint));
    END IF;

    -- The cursor moves to the last job picked; none picked, none kept.
    SELECT j.priority, j.run_at, j.id
      INTO v_priority, v_run_at, v_id
      FROM taskboard.jobs AS j
     WHERE j.id = v_ids[pg_catalog.cardinality(v_ids)];
    v_us := (EXTRACT(epoch FROM v_run_at) * 1000000)::bigint;
    PERFORM pg_catalog.set_config(v_name, CASE WHEN v_id IS NOT NULL THEN pg_catalog.concat_ws(' ',
        v_due, v_priority, v_us / 86400000000, v_us % 86400000000, v_id, pick_next.queue) ELSE '' END,
        false);
    RETURN v_ids;
END
$_$;

--
-- Name: FUNCTION pick_next(queue text, clock timestamp with time zone, most integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.pick_next(queue text, clock timestamp with time zone, most integer) IS 'pick_next(queue, clock, most) -> bigint[]
Internal: the picker of claim''s common path (a queue without limits).
NULL when a lease of `queue` expired by `clock`: the claim then takes the
path that reclaims and buries. Else the first `most` queued jobs whose
run_at is due by `clock`, in claim order (priority, higher first, then
run_at, then id), locked FOR NO KEY UPDATE SKIP LOCKED, as pick_queued
picks them: a walk from the head of the queue''s queued index.
A session with taskboard.claim_cursor = on (the driver''s control
connections set it) keeps a cursor per queue in a session setting
(taskboard.cursor_<hash of the queue>): the claim-order key of the last
job it picked, and when its next walk from the head is due. Until then,
it picks the queued jobs after its cursor instead, and looks for no
expired lease; when those are fewer than `most` it walks from the head as
any claim does. A walk is due 200 ms after the last one ended, later
while walks are slow (twenty times the last walk''s own time: its check
and its read of the head), and never more than 2 s after. So, while a
transaction holds the xmin horizon back and the head of the indexes fills
with entries no claim can use, most claims of such a session read only
the jobs they take; what it gives up: a job that becomes queued ahead of
the cursor (a higher priority, an earlier run_at, a release or retry
committed late) and an expired lease wait for the next walk of some
session, 2 s at most, unless a claim finds fewer jobs after its cursor
than it asked for. The setting is transactional: a claim rolled back
leaves the cursor as it was. A value no walk wrote (malformed, of
another queue, due more than 2 s after `clock`) counts as no cursor and
raises nothing. A queue is given a setting once the session picks one of
its jobs.
Writes nothing but that setting; the rows it locked stay locked until the
caller''s transaction ends.
Called by claim; never granted to an application role.';

--
-- Name: pick_queued(text, timestamp with time zone, integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.pick_queued(queue text, clock timestamp with time zone, most integer) RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    RETURN ARRAY(
        SELECT j.id
          FROM taskboard.jobs AS j
         WHERE j.queue = pick_queued.queue
           AND j.state = 'queued'
           AND j.run_at <= pick_queued.clock
         ORDER BY j.priority DESC, j.run_at, j.id
         LIMIT pick_queued.most
           FOR NO KEY UPDATE SKIP LOCKED);
END
$$;

--
-- Name: FUNCTION pick_queued(queue text, clock timestamp with time zone, most integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.pick_queued(queue text, clock timestamp with time zone, most integer) IS 'pick_queued(queue, clock, most) -> bigint[]
Internal: a picker of taskboard.claim. The first `most` queued jobs of
`queue` whose run_at is due by `clock`, in claim order (priority, higher
first, then run_at, then id), locked FOR NO KEY UPDATE SKIP LOCKED: a
job another claimer holds is passed over. Writes nothing; the rows stay
locked until the caller''s transaction ends. Reads the head of the
queue''s queued index only.
Called by claim; never granted to an application role.';

--
-- Name: prune(interval, integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.prune(older_than interval, batch integer DEFAULT 10000) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_cutoff  timestamptz;
    v_deleted bigint;
    v_doomed  bigint[];
BEGIN
    v_checked := taskboard.check_delay('older_than', prune.older_than, '100 years', back => true);
    v_checked := taskboard.check_between('batch', prune.batch, 1);

    -- A value, not clock_timestamp() in the query: an index scan can stop at it.
    v_cutoff := pg_catalog.clock_timestamp() - prune.older_than;

    -- The candidates, locked: no edge to one of them can be written now (an
    -- edge's foreign key waits for this lock).
    v_doomed := ARRAY(
        SELECT j.id
          FROM taskboard.jobs AS j
         WHERE j.finished_at < v_cutoff
           AND j.state IN ('succeeded', 'cancelled', 'dead')
           -- A job cancelled under a live lease holds its place and key
           -- until that lease ends (held_until): deleting it would free them.
           AND (j.held_until IS NULL OR j.held_until <= pg_catalog.clock_timestamp())
         ORDER BY j.finished_at
         LIMIT prune.batch
           FOR UPDATE SKIP LOCKED);

    -- Nor one whose dependents are not all settled yet: its edges would go
    -- with it. Read in a statement of its own, with the rows locked: its
    -- snapshot shows every edge committed before the locks.
    WITH deleted AS (
        DELETE FROM taskboard.jobs AS j
         WHERE j.id = ANY (v_doomed)
           AND NOT EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = j.id)
        RETURNING j.id
    )
    SELECT pg_catalog.count(*) INTO v_deleted FROM deleted;

    RETURN v_deleted;
END
$$;

--
-- Name: FUNCTION prune(older_than interval, batch integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.prune(older_than interval, batch integer) IS 'prune(older_than, batch) -> bigint
Deletes up to `batch` finished jobs (succeeded, cancelled, dead) whose
finished_at is before clock - older_than, oldest first, and returns how
many it deleted. Call again until it returns 0; small batches keep each
transaction short; concurrent callers skip each other''s rows.
Only finished jobs are ever deleted, and not a job cancelled under a lease
that has not ended yet (held_until, see taskboard.cancel) before it ends,
nor one whose dependents are not settled yet (taskboard.dependency_checks).
Executable by the admin role only:
a worker login cannot delete jobs (claim, fail without retry, then prune
would erase any due queued job); a worker''s retention setting prunes when
its login is granted the admin role.
The cutoff is read from the clock once, so the scan of finished jobs
stops at it: a call that finds nothing old enough reads next to nothing,
however many recent finished jobs the table keeps.
Raises 22023 when older_than is NULL, negative or longer than 100 years,
by the cutoff it gives: unless clock - 100 years <= clock - older_than <=
clock, months and days counted as the calendar makes them; or batch is
NULL or < 1.';

--
-- Name: queue_overview(interval); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.queue_overview(recent interval DEFAULT '01:00:00'::interval) RETURNS TABLE(queue text, queued bigint, running bigint, runnable bigint, oldest_runnable_at timestamp with time zone, dead bigint, cancelled bigint, succeeded_recent bigint, dead_recent bigint, cancelled_recent bigint, paused boolean, max_running integer, max_running_per_key integer, rate_starts integer, rate_per interval, rate_by_key boolean, window_starts bigint, waiting bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    -- Read once: every count below is against the same instant.
    v_now   timestamptz := pg_catalog.clock_timestamp();
    v_since timestamptz;
BEGIN
    v_checked := taskboard.check_recent(queue_overview.recent);
    v_since := v_now - queue_overview.recent;

    RETURN QUERY
    WITH pending AS (
        -- Each branch reads its state's partial index, never finished jobs.
        SELECT j.queue,
               pg_catalog.count(*) AS queued,
               0::bigint AS running,
               pg_catalog.count(*) FILTER (WHERE j.run_at <= v_now) AS runnable,
               pg_catalog.min(j.run_at) FILTER (WHERE j.run_at <= v_now) AS oldest
          FROM taskboard.jobs AS j
         WHERE j.state = 'queued'
         GROUP BY j.queue
        UNION ALL
        SELECT j.queue,
               0::bigint,
               pg_catalog.count(*),
               pg_catalog.count(*) FILTER (
                   WHERE j.lease_expires_at <= v_now AND j.attempt < j.max_attempts),
               pg_catalog.min(j.lease_expires_at) FILTER (
                   WHERE j.lease_expires_at <= v_now AND j.attempt < j.max_attempts)
          FROM taskboard.jobs AS j
         WHERE j.state = 'running'
         GROUP BY j.queue
    ), unfinished AS (
        SELECT w.queue,
               pg_catalog.sum(w.queued)::bigint AS queued,
               pg_catalog.sum(w.running)::bigint AS running,
               pg_catalog.sum(w.runnable)::bigint AS runnable,
               pg_catalog.min(w.oldest) AS oldest
          FROM pending AS w
         GROUP BY w.queue
    ), failed AS (
        SELECT j.queue,
               pg_catalog.count(*) FILTER (WHERE j.state = 'dead') AS dead,
               pg_catalog.count(*) FILTER (WHERE j.state = 'cancelled') AS cancelled
          FROM taskboard.jobs AS j
         WHERE j.state IN ('dead', 'cancelled')
         GROUP BY j.queue
    ), finished AS (
        SELECT j.queue,
               pg_catalog.count(*) FILTER (WHERE j.state = 'succeeded') AS succeeded,
               pg_catalog.count(*) FILTER (WHERE j.state = 'dead') AS dead,
               pg_catalog.count(*) FILTER (WHERE j.state = 'cancelled') AS cancelled
          FROM taskboard.jobs AS j
         WHERE j.finished_at >= v_since
         GROUP BY j.queue
    ), dependents AS (
        -- The jobs waiting for dependencies, through their own index.
        SELECT j.queue, pg_catalog.count(*) AS waiting
          FROM taskboard.jobs AS j
         WHERE j.state = 'waiting'
         GROUP BY j.queue
    ), names AS (
        SELECT u.queue FROM unfinished AS u
        UNION SELECT f.queue FROM failed AS f
        UNION SELECT f.queue FROM finished AS f
        UNION SELECT q.queue FROM taskboard.queues AS q
        UNION SELECT d.queue FROM dependents AS d
    ), windows AS (
        -- The starts within each rate limit's window: of the queue, or of
        -- its busiest key (the log holds starts of limited queues only).
        SELECT k.queue, pg_catalog.max(k.starts) AS starts
          FROM (SELECT s.queue, pg_catalog.count(*) AS starts
                  FROM taskboard.queues AS q
                  JOIN taskboard.queue_starts AS s
                    ON s.queue = q.queue
                   AND s.started_at > v_now - q.rate_per
                   AND (NOT q.rate_by_key OR s.concurrency_key IS NOT NULL)
                 WHERE q.rate_starts IS NOT NULL
                 GROUP BY s.queue, CASE WHEN q.rate_by_key THEN s.concurrency_key END) AS k
         GROUP BY k.queue
    )
    SELECT n.queue,
           coalesce(u.queued, 0),
           coalesce(u.running, 0),
           coalesce(u.runnable, 0),
           u.oldest,
           coalesce(fa.dead, 0),
           coalesce(fa.cancelled, 0),
           coalesce(fi.succeeded, 0),
           coalesce(fi.dead, 0),
           coalesce(fi.cancelled, 0),
           coalesce(q.paused, false),
           q.max_running,
           q.max_running_per_key,
           q.rate_starts,
           q.rate_per,
           coalesce(q.rate_by_key, false),
           CASE WHEN q.rate_starts IS NOT NULL THEN coalesce(w.starts, 0) END,
           coalesce(d.waiting, 0)
      FROM names AS n
      LEFT JOIN unfinished AS u ON u.queue = n.queue
      LEFT JOIN failed AS fa ON fa.queue = n.queue
      LEFT JOIN finished AS fi ON fi.queue = n.queue
      LEFT JOIN taskboard.queues AS q ON q.queue = n.queue
      LEFT JOIN windows AS w ON w.queue = n.queue
      LEFT JOIN dependents AS d ON d.queue = n.queue
     ORDER BY n.queue;
END
$$;

--
-- Name: FUNCTION queue_overview(recent interval); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.queue_overview(recent interval) IS 'queue_overview(recent) -> table of one row per queue
Each queue as it stands, for people and dashboards, read without counting
the finished jobs beyond `recent`: a table of millions of succeeded jobs
costs it nothing. Per queue:
  queued, running      jobs in those states now (queued includes those
                       whose run_at is still ahead);
  runnable             what claim could hand out now if the queue were not
                       paused or at its limit: queued jobs that are due,
                       and running jobs whose lease expired with attempts
                       left;
  oldest_runnable_at   since when the longest-waiting of those has been
                       runnable (its run_at, or its lease''s expiry);
  dead, cancelled      all such jobs still kept (prune removes them);
  succeeded_recent, dead_recent, cancelled_recent
                       jobs that finished so within `recent`;
  paused, max_running  the queue''s settings (false and NULL by default);
  max_running_per_key, rate_starts, rate_per, rate_by_key
                       its limit per concurrency key and its rate limit
                       (NULL, NULL, NULL and false by default);
  window_starts        the jobs started within the last rate_per, of the
                       queue, or with rate_by_key of its busiest key;
                       NULL without a rate limit;
  waiting              jobs waiting for dependencies (see
                       taskboard.enqueue''s depends_on).
A queue is listed when it has unfinished, dead or cancelled jobs, jobs
finished within `recent`, or settings. Ordered by queue.
Raises 22023 when recent is NULL, not positive or longer than 31 days,
by the time it gives: unless clock - 31 days <= clock - recent < clock,
months and days counted as the calendar makes them.';

--
-- Name: queue_room(text, integer, timestamp with time zone); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.queue_room(queue text, max_running integer, clock timestamp with time zone) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    RETURN (
        SELECT GREATEST(0, queue_room.max_running - pg_catalog.count(*) - (
                   SELECT pg_catalog.count(*)
                     FROM taskboard.jobs AS h
                    WHERE h.queue = queue_room.queue
                      AND h.held_until > queue_room.clock
                      AND h.state <> 'running'))::integer
          FROM taskboard.jobs AS j
         WHERE j.queue = queue_room.queue
           AND j.state = 'running'
           AND NOT (j.lease_expires_at <= queue_room.clock AND j.attempt >= j.max_attempts));
END
$$;

--
-- Name: FUNCTION queue_room(queue text, max_running integer, clock timestamp with time zone); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.queue_room(queue text, max_running integer, clock timestamp with time zone) IS 'queue_room(queue, max_running, clock) -> integer
Internal: a picker''s bound under a queue limit (taskboard.set_queue_limit):
how many more jobs of `queue` may start by `clock`, at least 0. The
limit less the queue''s running jobs (an expired lease counts until its
job is reclaimed or finished; one with no attempt left does not, claim
buries it) and less the places still held: jobs cancelled under a live
lease (taskboard.cancel), or retried since and not yet due. Reads this
queue''s running and held jobs only; writes nothing.
Called by claim, on its turn on the queue''s row; never granted to an
application role.';

--
-- Name: rate_full_keys(text, timestamp with time zone, integer, text[], text[], integer, interval); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.rate_full_keys(queue text, clock timestamp with time zone, room integer, full_keys text[], known text[], rate_starts integer, rate_per interval) RETURNS text[]
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    v_full text[] := rate_full_keys.known;
    -- A look: how many queued jobs it reads, the keys it found full, the
    -- jobs it read and those of them of keys with room or without a key.
    v_reach bigint := 16 * rate_full_keys.room;
    v_new_full text[];
    v_read bigint;
    v_open bigint;
BEGIN
    LOOP
        WITH reached AS MATERIALIZED (
            SELECT j.concurrency_key AS ck
              FROM taskboard.jobs AS j
             WHERE j.queue = rate_full_keys.queue
               AND j.state = 'queued'
               AND j.run_at <= rate_full_keys.clock
               AND (j.concurrency_key IS NULL
                    OR j.concurrency_key NOT IN (
                        SELECT f.key
                          FROM pg_catalog.unnest(pg_catalog.array_cat(rate_full_keys.full_keys, v_full)) AS f(key)))
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT v_reach
        ),
        filled AS MATERIALIZED (
            SELECT c.ck
              FROM (SELECT r.ck
                      FROM reached AS r
                     WHERE r.ck IS NOT NULL
                    UNION
                    SELECT x.concurrency_key
                      FROM taskboard.jobs AS x
                     WHERE x.queue = rate_full_keys.queue
                       AND x.state = 'running'
                       AND x.lease_expires_at <= rate_full_keys.clock
                       AND x.attempt < x.max_attempts
                       AND x.concurrency_key IS NOT NULL
                       AND x.concurrency_key NOT IN (
                           SELECT f.key FROM pg_catalog.unnest(v_full) AS f(key))) AS c
             WHERE (SELECT pg_catalog.count(*)
                      FROM (SELECT
                              FROM taskboard.queue_starts AS s
                             WHERE s.queue = rate_full_keys.queue
                               AND s.concurrency_key = c.ck
                               AND s.started_at > rate_full_keys.clock - rate_full_keys.rate_per
                             LIMIT rate_full_keys.rate_starts) AS w) >= rate_full_keys.rate_starts
        )
        SELECT ARRAY(SELECT f.ck FROM filled AS f),
               (SELECT pg_catalog.count(*) FROM reached AS r),
               (SELECT pg_catalog.count(*)
                  FROM reached AS r
                 WHERE r.ck IS NULL
                    OR r.ck NOT IN (SELECT f.ck FROM filled AS f))
          INTO v_new_full, v_read, v_open;
        v_full := pg_catalog.array_cat(v_full, v_new_full);
        EXIT WHEN v_open >= 16 * rate_full_keys.room OR v_read < v_reach;
        v_reach := 2 * v_reach;
    END LOOP;
    RETURN v_full;
END
$$;

--
-- Name: FUNCTION rate_full_keys(queue text, clock timestamp with time zone, room integer, full_keys text[], known text[], rate_starts integer, rate_per interval); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.rate_full_keys(queue text, clock timestamp with time zone, room integer, full_keys text[], known text[], rate_starts integer, rate_per interval) IS 'rate_full_keys(queue, clock, room, full_keys, known, rate_starts, rate_per) -> text[]
Internal: a picker''s bound under a rate limit per key
(taskboard.set_rate_limit with by_key): `known` and the keys of `queue`
whose window is full by `clock` (none of their jobs starts, an expired
lease of theirs is not reclaimed), among those a round with `room` would
look at: the keys of the first queued jobs it reads, as pick_keyed reads
them, and of the expired leases it may reclaim, each key''s window
counted through its index (at most rate_starts of its starts). A look
reads the first 16 x room queued jobs in claim order, those of the keys
of `full_keys` and those found full so far left out (a hashed set: read
past, not counted again), and counts the windows of their keys once
each. While fewer than sixteen times the room of the jobs it read are of
keys with room (or of none), and the queue has more, it looks again
twice as far: the jobs of keys with room behind full ones are still
reached, no key''s window is counted that the claim does not reach, and
however many full keys are ahead, the looks together read fewer than
eight times the queued jobs up to the last one pick_keyed takes (each
look at most twice as many as it reaches, the last less than twice as
far as needed). Writes nothing.
Called by claim, on its turn on the queue''s row; never granted to an
application role.';

--
-- Name: recheck_dependencies(integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.recheck_dependencies(max_rows integer DEFAULT 1000) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- The dependencies one call reads for the jobs whose edges were written
    -- (at least those of one job), and the ended jobs it settles further.
    c_named_budget constant integer := 10000;
    c_ended_rows constant integer := 5;
    v_checks bigint[];
    v_named bigint[];
    v_read bigint[];
    v_ended bigint[];
    v_skipped bigint[];
    v_done integer := 0;
    v_ended_job bigint;
BEGIN
    -- Only a statement's own snapshot shows every edge committed before it.
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        RETURN 0;
    END IF;

    -- Jobs whose edges an enqueue wrote, oldest first, as many as name
    -- c_named_budget dependencies in all (a job's count of dependencies
    -- left is its count of edges); rows another call works on are left to it.
    v_checks := ARRAY(SELECT c.job_id
                        FROM taskboard.dependency_checks AS c
                       WHERE c.side = 'dependent'
                       ORDER BY c.added_at, c.job_id
                       LIMIT recheck_dependencies.max_rows
                         FOR UPDATE SKIP LOCKED);
    v_checks := ARRAY(SELECT k.id
                        FROM (SELECT k.id, k.ord,
                                     pg_catalog.sum(coalesce((SELECT j.dependencies_left
                                                                FROM taskboard.jobs AS j
                                                               WHERE j.id = k.id), 0))
                                         OVER (ORDER BY k.ord) AS named
                                FROM pg_catalog.unnest(v_checks) WITH ORDINALITY AS k(id, ord)) AS k
                       WHERE k.named <= c_named_budget OR k.ord = 1
                       ORDER BY k.ord);
    IF pg_catalog.cardinality(v_checks) > 0 THEN
        -- (Read through the primary key, then made distinct: a DISTINCT
        -- over the edges was planned as a walk of every edge in order.)
        v_named := ARRAY(SELECT DISTINCT n.id
                           FROM pg_catalog.unnest(ARRAY(SELECT d.depends_on
                                                          FROM taskboard.job_dependencies AS d
                                                         WHERE d.job_id = ANY (v_checks))) AS n(id)
                          ORDER BY n.id);
        -- Each dependency they name, read with the lock that a write of its
        -- row in flight holds against it (FOR SHARE), skipped while one is:
        -- its latest committed state is then its state, and an end still to
        -- come reads its edges in a statement after its own lock, so it sees
        -- the committed edge. The locks are given back at once (the block is
        -- rolled back): no holder's write waits past this statement.
        BEGIN
            WITH r AS MATERIALIZED (
                SELECT p.id, p.state
                  FROM taskboard.jobs AS p
                 WHERE p.id = ANY (v_named)
                 ORDER BY p.id
                   FOR SHARE SKIP LOCKED
            )
            SELECT ARRAY(SELECT r.id FROM r),
                   ARRAY(SELECT r.id FROM r
                          WHERE r.state IN ('succeeded', 'dead', 'cancelled')
                          ORDER BY r.id)
              INTO v_read, v_ended;
            RAISE EXCEPTION USING ERRCODE = 'TB000';
        EXCEPTION
            WHEN SQLSTATE 'TB000' THEN NULL;
        END;
        IF pg_catalog.cardinality(v_ended) > 0 THEN
            PERFORM taskboard.settle_dependents(v_ended);
        END IF;
        -- The dependencies skipped (a write in flight), as a set difference.
        v_skipped := ARRAY(SELECT pg_catalog.unnest(v_named)
                           EXCEPT
                           SELECT pg_catalog.unnest(v_read));
        -- A job none of whose dependencies was skipped is done: each one not
        -- ended is named by a committed edge, which its end will see; each
        -- one ended was settled above. The others go to the back of the
        -- line, to be read again.
        DELETE FROM taskboard.dependency_checks AS c
         WHERE c.side = 'dependent'
           AND c.job_id = ANY (v_checks)
           AND (pg_catalog.cardinality(v_skipped) = 0
                OR NOT EXISTS (SELECT
                                 FROM taskboard.job_dependencies AS d
                                WHERE d.job_id = c.job_id
                                  AND d.depends_on = ANY (v_skipped)));
        UPDATE taskboard.dependency_checks AS c
           SET added_at = pg_catalog.clock_timestamp()
         WHERE c.side = 'dependent'
           AND c.job_id = ANY (v_checks);
        v_done := pg_catalog.cardinality(v_checks);
    END IF;

    -- A few jobs that ended with dependents left: 1000 more edges of each.
    -- One whose edges are not all settled (the budget spent, or dependents
    -- another transaction holds) goes to the back of the line: it holds up
    -- no other.
    FOR v_ended_job IN
        SELECT c.job_id
          FROM taskboard.dependency_checks AS c
         WHERE c.side = 'dependency'
         ORDER BY c.added_at, c.job_id
         LIMIT c_ended_rows
           FOR UPDATE SKIP LOCKED
    LOOP
        PERFORM taskboard.settle_dependents(ARRAY[v_ended_job]);
        -- Settled to the last edge, or the job is not ended (retried): its
        -- next end settles the edges it has then.
        IF (SELECT p.state FROM taskboard.jobs AS p WHERE p.id = v_ended_job)
               IN ('succeeded', 'dead', 'cancelled')
           AND (SELECT true FROM taskboard.job_dependencies AS d
                 WHERE d.depends_on = v_ended_job LIMIT 1) THEN
            UPDATE taskboard.dependency_checks AS c
               SET added_at = pg_catalog.clock_timestamp()
             WHERE c.job_id = v_ended_job AND c.side = 'dependency';
        ELSE
            DELETE FROM taskboard.dependency_checks AS c
             WHERE c.job_id = v_ended_job AND c.side = 'dependency';
        END IF;
        v_done := v_done + 1;
    END LOOP;
    RETURN v_done;
END
$$;

--
-- Name: FUNCTION recheck_dependencies(max_rows integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.recheck_dependencies(max_rows integer) IS 'recheck_dependencies(max_rows) -> integer
Internal: works through taskboard.dependency_checks and returns how many
of its rows it worked on. Up to `max_rows` jobs whose edges an enqueue
wrote (side dependent), oldest first, as many as name 10000 dependencies
in all (at least one job): each dependency they name that has ended by
now is settled (settle_dependents), and a job''s row goes once every
dependency it names was read with no write of it in flight; the others
go to the back of the line. Then up to 5 jobs that ended with dependents
left (side dependency): 1000 more edges of each are settled, a row goes
with its last edge, and one with edges left goes to the back of the line.
Rows another call is working on are skipped. Waits for no lock that a
holder''s write takes, and keeps none past its statement: a dependency
read while a write of it is in flight is read again by a later call.
Does nothing in a transaction that is not READ COMMITTED (a claim there
leaves the rows to claims in READ COMMITTED, as the driver''s are). Called
by claim; never granted to an application role. Raises nothing.';

--
-- Name: record_refusals(text, bigint[], uuid[]); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.record_refusals(kind text, job_ids bigint[], tokens uuid[]) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
INSERT INTO taskboard.job_events
       (job_id, kind, worker, attempt, fence, lease_expires_at, token_digest)
SELECT DISTINCT ON (e.job_id, e.token_digest)
       e.job_id, record_refusals.kind, e.worker, e.attempt, e.fence, e.lease_expires_at, e.token_digest
  FROM unnest(record_refusals.job_ids, record_refusals.tokens) AS i(id, token)
  JOIN taskboard.job_events AS e
    ON e.job_id = i.id
   AND e.token_digest = pg_catalog.sha256(pg_catalog.uuid_send(i.token))
   AND e.kind IN ('reclaimed', 'cancelled')
 WHERE EXISTS (SELECT FROM taskboard.jobs AS k WHERE k.id = e.job_id FOR KEY SHARE SKIP LOCKED)
 ORDER BY e.job_id, e.token_digest
ON CONFLICT ON CONSTRAINT job_events_once DO NOTHING
$$;

--
-- Name: FUNCTION record_refusals(kind text, job_ids bigint[], tokens uuid[]); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.record_refusals(kind text, job_ids bigint[], tokens uuid[]) IS 'record_refusals(kind, job_ids, tokens) -> void
Internal: the history lines of refused writes. For each job_ids[i], when
tokens[i] is a token the job''s history knows (its lease was reclaimed or
cancelled: a line ''reclaimed'' or ''cancelled'' carries its digest), writes
one line of `kind` (''refused_complete'', ''refused_fail'' or
''refused_renew'') with that lease''s worker, attempt, fence and deadline,
once per token and kind (a second refusal writes nothing); a token the
history does not know is not recorded. Empty arrays read nothing.
The job is held FOR KEY SHARE until the caller''s statement ends: an
admin''s prune of it that commits first takes the line with it, rather
than failing the refusal with 23503. A job another transaction holds
FOR UPDATE (deleting it: prune, or the accepted completion of a queue
that discards) gets no line, and the refusal does not wait for that
transaction: the job''s history goes with it. Two workers whose leases
crossed, each refused on the job the other completes, would otherwise
wait for each other.
Called by complete_many, renew_many and fail, after the write they
refused; never granted to an application role.';

--
-- Name: release(bigint, uuid, interval); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.release(job_id bigint, token uuid, delay interval DEFAULT '00:00:00'::interval) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_queue text;
BEGIN
    v_checked := taskboard.check_lease(release.job_id, release.token);
    v_checked := taskboard.check_delay('delay', release.delay, '12 hours');

    UPDATE taskboard.jobs AS j
       SET state = 'queued',
           run_at = pg_catalog.clock_timestamp() + release.delay,
           attempt = j.attempt - 1
     WHERE j.id = release.job_id
       AND j.state = 'running'
       AND j.lease_token = release.token
    RETURNING j.queue INTO v_queue;
    IF NOT FOUND THEN
        RETURN false;
    END IF;

    IF release.delay = interval '0' THEN
        PERFORM taskboard.notify_runnable(v_queue);
    END IF;
    RETURN true;
END
$$;

--
-- Name: FUNCTION release(job_id bigint, token uuid, delay interval); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.release(job_id bigint, token uuid, delay interval) IS 'release(job_id, token, delay) -> boolean
The holder hands the job back, typically at shutdown: it is queued again
at clock + delay and this claim is not counted as an attempt. Sends
NOTIFY taskboard, ''<queue>'' when delay is zero.
true:  released.
false: the token is not current; nothing changes.
Raises 22023 when job_id or token is NULL, or delay is NULL, negative or
longer than 12 hours (''infinity'' included), by the time it gives: unless
clock <= clock + delay <= clock + 12 hours, months and days counted as
the calendar makes them.';

--
-- Name: remove_schedule(text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.remove_schedule(schedule text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_name('schedule', remove_schedule.schedule);
    DELETE FROM taskboard.schedule_slots AS s
     WHERE s.schedule = remove_schedule.schedule;
    RETURN FOUND;
END
$$;

--
-- Name: FUNCTION remove_schedule(schedule text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.remove_schedule(schedule text) IS 'remove_schedule(schedule) -> boolean
Deletes the row of `schedule` in taskboard.schedule_slots (its latest
slot, job, task and queue) and returns true; false when it has none.
Its jobs are left as they are. A worker that still declares the schedule
enqueues its next due slot again, as for a new schedule.
Executable by the admin role only.
Raises 22023 when schedule is NULL, empty or longer than 200 characters.';

--
-- Name: renew(bigint, uuid, interval); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.renew(job_id bigint, token uuid, lease interval DEFAULT '00:01:00'::interval) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_lease(renew.job_id, renew.token);
    RETURN (SELECT r.lease_expires_at
              FROM taskboard.renew_many(ARRAY[renew.job_id], ARRAY[renew.token], renew.lease) AS r);
END
$$;

--
-- Name: FUNCTION renew(job_id bigint, token uuid, lease interval); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.renew(job_id bigint, token uuid, lease interval) IS 'renew(job_id, token, lease) -> timestamptz
Extends the holder''s lease to clock + lease and returns the new deadline,
when `token` is current and its lease has not yet expired.
NULL: the token is not current (reclaimed, completed, failed, released,
cancelled) or its lease already expired; the job does not change and the worker
must treat the job as lost.
A refused write by a holder whose lease was reclaimed or cancelled is a
line of the job''s history (taskboard.job_history), once per token and
kind; a token the history does not know is not recorded. The line is
written in the caller''s transaction: a caller that rolls back keeps none.
Raises 22023 when job_id or token is NULL, or lease is NULL, not positive
or longer than 12 hours (''infinity'' included).

renew_many of one job: the same update, answer and history line.';

--
-- Name: renew_many(bigint[], uuid[], interval); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.renew_many(job_ids bigint[], tokens uuid[], lease interval DEFAULT '00:01:00'::interval) RETURNS TABLE(job_id bigint, lease_expires_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
    -- The answer, one element per input element in input order.
    v_ids       bigint[];
    v_deadlines timestamptz[];
BEGIN
    v_checked := taskboard.check_leases('job_ids and tokens', renew_many.job_ids, renew_many.tokens);
    v_checked := taskboard.check_interval('lease', renew_many.lease, interval '12 hours');

    WITH input AS (
        SELECT u.id, u.token, u.ord
          FROM unnest(renew_many.job_ids, renew_many.tokens) WITH ORDINALITY AS u(id, token, ord)
    ),
    locked AS MATERIALIZED (
        -- Every row holding its input token, locked in job_id order: found
        -- through the primary key, the state and lease read from the locked
        -- row rather than asked of the running index. FOR NO KEY UPDATE, the
        -- lock the update takes anyway: a refusal's FOR KEY SHARE
        -- (record_refusals), in this worker's complete_many, does not wait for it (FOR UPDATE made the
        -- two calls deadlock when a reclaim landed while they waited).
        SELECT j.id, j.state, j.lease_expires_at, i.token
          FROM taskboard.jobs AS j
          JOIN input AS i ON i.id = j.id AND i.token = j.lease_token
         WHERE j.id = ANY (renew_many.job_ids)
         ORDER BY j.id
           FOR NO KEY UPDATE OF j
    ),
    renewed AS (
        UPDATE taskboard.jobs AS j
           SET lease_expires_at = v_now + renew_many.lease
          FROM locked AS l
         WHERE j.id = l.id
           AND l.state = 'running'
           AND l.lease_expires_at > v_now
           AND j.lease_token = l.token
        RETURNING j.id, j.lease_token, j.lease_expires_at
    )
    SELECT pg_catalog.array_agg(i.id ORDER BY i.ord), pg_catalog.array_agg(r.lease_expires_at ORDER BY i.ord)
      INTO v_ids, v_deadlines
      FROM input AS i
      LEFT JOIN renewed AS r ON r.id = i.id AND r.lease_token = i.token;

    -- The refused rows, lines of their jobs' history when their lease was
    -- reclaimed or cancelled; when every row is accepted, nothing is read.
    IF pg_catalog.array_position(v_deadlines, NULL) IS NOT NULL THEN
        PERFORM taskboard.record_refusals('refused_renew',
            ARRAY(SELECT u.id FROM unnest(v_ids, v_deadlines) AS u(id, deadline)
                   WHERE u.deadline IS NULL),
            ARRAY(SELECT u.token FROM unnest(renew_many.tokens, v_deadlines) AS u(token, deadline)
                   WHERE u.deadline IS NULL));
    END IF;

    RETURN QUERY SELECT u.id, u.deadline FROM unnest(v_ids, v_deadlines) AS u(id, deadline);
END
$$;

--
-- Name: FUNCTION renew_many(job_ids bigint[], tokens uuid[], lease interval); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.renew_many(job_ids bigint[], tokens uuid[], lease interval) IS 'renew_many(job_ids, tokens, lease) -> setof (job_id, lease_expires_at)
renew for many jobs in one statement: job_ids[i] is renewed with
tokens[i]. One row per input element, in input order; lease_expires_at is
the new deadline, or NULL where renewal was refused (token not current or
lease already expired: the job is lost to this worker). The rows holding
their given tokens are locked in job_id order, as complete_many locks
them, so one worker''s renewer and completer never deadlock.
A refused write by a holder whose lease was reclaimed or cancelled is a
line of the job''s history (taskboard.job_history), once per token and
kind; a token the history does not know is not recorded. The line is
written in the caller''s transaction: a caller that rolls back keeps none.
Raises 22023 when job_ids or tokens is NULL, multidimensional or holds a
NULL, their lengths differ, or lease is NULL, not positive or longer than
12 hours (''infinity'' included), by the deadline it gives: unless
clock < clock + lease <= clock + 12 hours, months and days counted as
the calendar makes them.

plan_cache_mode = force_generic_plan with enable_seqscan = off: one plan
per session, made at the first call and kept until PostgreSQL invalidates
it. Every step finds its rows by primary key, whatever the table held
when the plan was made.';

--
-- Name: resume(text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.resume(queue text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_name('queue', resume.queue);

    UPDATE taskboard.queues AS q
       SET paused = false,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.queue = resume.queue
       AND q.paused;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = resume.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(resume.queue);
    END IF;
    RETURN true;
END
$$;

--
-- Name: FUNCTION resume(queue text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.resume(queue text) IS 'resume(queue) -> boolean
Resumes a paused `queue`: claim hands out its jobs again, and listeners
are told when one is runnable now (NOTIFY, unless taskboard.notify =
off). True when this call resumed it, false when it was not paused.
Raises 22023 when queue is NULL, empty or longer than 200 characters.';

--
-- Name: retry(bigint); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.retry(job_id bigint) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
    v_queue text;
    v_run_at timestamptz;
    v_task text;
    v_key text;
    v_held_until timestamptz;
    v_left integer;
BEGIN
    v_checked := taskboard.check_given('job_id', retry.job_id);

    BEGIN
        -- A job that waited for dependencies waits again for the edges it
        -- still has: its count of them, kept by each settle that removed
        -- one. A settle in flight that holds the row is waited for; one
        -- that comes while this transaction holds it skips the row, and a
        -- later claim settles it (recheck_dependencies).
        UPDATE taskboard.jobs AS j
           SET state = CASE WHEN j.dependencies_left > 0 THEN 'waiting' ELSE 'queued' END,
               run_at = GREATEST(v_now, j.held_until),
               attempt = 0,
               result = NULL,
               finished_at = NULL
         WHERE j.id = retry.job_id
           AND j.state IN ('dead', 'cancelled')
        RETURNING j.queue, j.run_at, j.task, j.dedupe_key, coalesce(j.dependencies_left, 0)
             INTO v_queue, v_run_at, v_task, v_key, v_left;
    EXCEPTION
        WHEN unique_violation THEN
            -- jobs_unfinished_dedupe_key: another unfinished job holds the key.
            RETURN false;
    END;
    IF v_queue IS NULL THEN
        RETURN false;
    END IF;
    IF v_key IS NOT NULL THEN
        -- Its key is still held by another job cancelled under a live lease.
        SELECT pg_catalog.max(c.held_until)
          INTO v_held_until
          FROM taskboard.jobs AS c
         WHERE c.queue = v_queue
           AND c.held_until > v_run_at
           AND c.state = 'cancelled'
           AND c.task = v_task
           AND c.dedupe_key = v_key;
        IF v_held_until IS NOT NULL THEN
            UPDATE taskboard.jobs AS j
               SET run_at = v_held_until
             WHERE j.id = retry.job_id;
            v_run_at := v_held_until;
        END IF;
    END IF;
    INSERT INTO taskboard.job_events (job_id, kind, at, actor)
    VALUES (retry.job_id, 'retried', v_now,
            -- The role in force: the one SET ROLE chose, else the login.
            CASE pg_catalog.current_setting('role')
                WHEN 'none' THEN pg_catalog.session_user()::text
                ELSE pg_catalog.current_setting('role')
            END);

    IF v_run_at <= v_now AND v_left = 0 THEN
        PERFORM taskboard.notify_runnable(v_queue);
    END IF;
    RETURN true;
END
$$;

--
-- Name: FUNCTION retry(job_id bigint); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.retry(job_id bigint) IS 'retry(job_id) -> boolean
An administrator gives a dead or cancelled job another chance: it is
queued again with its attempts reset; its error history is kept, and
the retry is a line of its history (taskboard.job_history). It is
runnable now, and NOTIFY taskboard, ''<queue>'' is sent; except a job
cancelled while running whose lease had not ended (its held_until, see
taskboard.cancel): that one is runnable when that lease ends. Until then
its holder may still believe it holds the job: its writes are refused,
but an effect outside the database is not, and a second holder must not
start beside it. A job cancelled while queued (after a release too) has
no holder to wait for. Likewise a job with a dedupe_key is runnable no
sooner than the held_until of a cancelled job of its queue and task with
that key. A job cancelled while it waited for dependencies (see
taskboard.enqueue''s depends_on) waits again for those that have not ended;
it locks none of them. The history line names the role in force (the one
SET ROLE chose, else the login).
true:  queued again (or waiting again).
false: the job is not dead or cancelled (or unknown), or its dedupe_key is
       now held by another unfinished job of the queue; nothing changes.
Raises 22023 when job_id is NULL.';

--
-- Name: revert_losses(text); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.revert_losses(release text DEFAULT NULL::text) RETURNS TABLE(data text, added_in text, rows bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_to integer[];
BEGIN
    IF revert_losses.release IS NOT NULL THEN
        v_checked := taskboard.check_arg(revert_losses.release ~ '^[0-9]{1,4}[.][0-9]{1,4}[.][0-9]{1,4}$',
                 'release must be a release such as 0.2.0, or NULL for a revert of everything, got '
                 || pg_catalog.quote_literal(revert_losses.release));
        v_to := pg_catalog.string_to_array(revert_losses.release, '.')::integer[];
    END IF;
    RETURN QUERY
    SELECT lost.data, lost.added_in, lost.rows
      FROM (VALUES
            ('jobs', '0.1.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs)),
            ('fences', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.fence > 0)),
            ('queue settings', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.paused OR q.max_running IS NOT NULL)),
            ('schedules', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.schedule_slots)),
            ('started_at', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.started_at IS NOT NULL)),
            ('trace contexts', '0.4.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.trace_context IS NOT NULL)),
            ('job history', '0.4.5', (SELECT pg_catalog.count(*) FROM taskboard.job_events)),
            ('held places', '0.4.5', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.held_until > pg_catalog.clock_timestamp())),
            ('slot tasks and queues', '0.4.5', (SELECT pg_catalog.count(*) FROM taskboard.schedule_slots AS s WHERE s.task IS NOT NULL)),
            ('concurrency keys', '0.4.8', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.concurrency_key IS NOT NULL)),
            ('key limits', '0.4.8', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.max_running_per_key IS NOT NULL)),
            ('rate limits', '0.4.9', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.rate_starts IS NOT NULL)),
            ('dependencies', '0.5.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.dependencies_left IS NOT NULL)),
            ('waiting jobs', '0.5.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.state = 'waiting')),
            ('reclaiming workers', '0.6.1', (SELECT pg_catalog.count(*) FROM taskboard.job_events AS e WHERE e.actor_worker IS NOT NULL)),
            ('discarding queues', '0.7.0', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.discard_succeeded))
           ) AS lost(data, added_in, rows)
     WHERE lost.rows > 0
       AND (v_to IS NULL
            OR pg_catalog.string_to_array(lost.added_in, '.')::integer[] > v_to)
     ORDER BY pg_catalog.string_to_array(lost.added_in, '.')::integer[], lost.data;
END
$_$;

--
-- Name: FUNCTION revert_losses(release text); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.revert_losses(release text) IS 'revert_losses(release) -> table of (data, added_in, rows)
What a revert to `release` would drop: one row for each kind of data that
a release after `release` added and that holds something now, with the
release that added it and how many rows hold it:
  fences          jobs whose fence is above 0 (0.3.0)
  queue settings  paused or limited queues (0.3.0)
  schedules       schedules with an enqueued slot (0.3.0)
  started_at      jobs with a start time (0.3.0)
  trace contexts  jobs carrying a trace context (0.4.0)
  job history     lines of the jobs'' history (0.4.5)
  held places     cancelled jobs whose lease has not ended yet, holding
                  their place and dedupe key (0.4.5)
  slot tasks and queues
                  schedules whose latest slot''s task and queue are kept (0.4.5)
  concurrency keys
                  jobs carrying a concurrency key (0.4.8)
  key limits      queues with a limit per concurrency key (0.4.8)
  rate limits     queues with a rate limit, and their log of starts (0.4.9)
  dependencies    jobs enqueued with dependencies (0.5.0)
  waiting jobs    jobs waiting for dependencies, which a revert cancels (0.5.0)
  reclaiming workers
                  history lines of reclaims that keep the worker name the
                  reclaiming claim stated beside its role (0.6.1)
  discarding queues
                  queues that delete their jobs at completion (0.7.0)
  jobs            every job, only for release NULL (a revert of everything)
No rows: the revert drops no data. Reads only; ordered by release.
Raises 22023 when release is not NULL and not of the form 0.2.0.
The revert of change revert_guard calls it, and refuses while it returns
a row for release 0.1.0 unless the Sqitch variable drop_data is yes.';

--
-- Name: set_limit(text, text, integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.set_limit(queue text, what text, value integer) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_queue_limit boolean := set_limit.what = 'max_running';
BEGIN
    v_checked := taskboard.check_name('queue', set_limit.queue);
    v_checked := taskboard.check_limit(set_limit.what, set_limit.value, NULL,
                     CASE WHEN v_queue_limit THEN 'no limit' ELSE 'no key limit' END);
    IF set_limit.value IS NOT NULL THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(1952605797, pg_catalog.hashtext(set_limit.queue));
    ELSIF NOT EXISTS (SELECT FROM taskboard.queues AS r WHERE r.queue = set_limit.queue) THEN
        RETURN false;
    END IF;

    INSERT INTO taskboard.queues AS q (queue, max_running, max_running_per_key)
    VALUES (set_limit.queue,
            CASE WHEN v_queue_limit THEN set_limit.value END,
            CASE WHEN NOT v_queue_limit THEN set_limit.value END)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET max_running = CASE WHEN v_queue_limit THEN EXCLUDED.max_running ELSE q.max_running END,
           max_running_per_key = CASE WHEN v_queue_limit THEN q.max_running_per_key
                                      ELSE EXCLUDED.max_running_per_key END,
           updated_at = pg_catalog.clock_timestamp()
     WHERE CASE WHEN v_queue_limit THEN q.max_running IS DISTINCT FROM EXCLUDED.max_running
                ELSE q.max_running_per_key IS DISTINCT FROM EXCLUDED.max_running_per_key END;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM taskboard.notify_runnable(j.queue)
       FROM taskboard.jobs AS j
      WHERE j.queue = set_limit.queue AND j.state = 'queued' AND j.run_at <= pg_catalog.clock_timestamp()
      LIMIT 1;
    RETURN true;
END
$$;

--
-- Name: FUNCTION set_limit(queue text, what text, value integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.set_limit(queue text, what text, value integer) IS 'set_limit(queue, what, value) -> boolean
Internal: the write of a queue''s limit, `what` naming its column:
''max_running'' (taskboard.set_queue_limit) or ''max_running_per_key''
(taskboard.set_key_limit). A limit given (not NULL) takes the queue''s
claim lock (1952605797, hashtext(queue)) exclusively first, and so waits
for the claim transactions of the queue still open; claims that come
meanwhile wait for this transaction and then read the limit
(taskboard.claim). Always, not only for a first limit: a removal of the
limit not yet committed would otherwise let a limit set just after it
pass unlocked, though claims made meanwhile did not count. Writes the
queue''s row (made when it has none and a limit is given); listeners are
told when the queue has a job runnable now. True when this call changed
the limit, false when it already was `value` (a NULL for a queue without
a row: it has no limit to remove).
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
value is below 1 (pause the queue to stop it).
Called by set_queue_limit and set_key_limit; never granted to an
application role.';

--
-- Name: set_key_limit(text, integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.set_key_limit(queue text, max_running_per_key integer) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    RETURN taskboard.set_limit(queue, 'max_running_per_key'::text, max_running_per_key);

--
-- Name: FUNCTION set_key_limit(queue text, max_running_per_key integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.set_key_limit(queue text, max_running_per_key integer) IS 'set_key_limit(queue, max_running_per_key) -> boolean
From the next claim on, claim never lets more than `max_running_per_key`
jobs of one concurrency key of `queue` hold a lease at once (a lease that
expired counts until its job is reclaimed or finished, a cancelled job''s
until it ends), counted across all workers and under concurrent
claimers; jobs of other keys and jobs without a key are still claimed.
A key limit counts the claims already made: setting one waits for the
claim transactions of the queue still open. NULL
removes the key limit. True when this call changed it, false when it
already was `max_running_per_key`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
max_running_per_key is below 1 (pause the queue to stop it).';

--
-- Name: set_queue_discard(text, boolean); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.set_queue_discard(queue text, discard boolean) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_name('queue', set_queue_discard.queue);
    v_checked := taskboard.check_given('discard', set_queue_discard.discard,
                                       'true deletes completed jobs, false keeps them');
    IF NOT set_queue_discard.discard
       AND NOT EXISTS (SELECT FROM taskboard.queues AS r WHERE r.queue = set_queue_discard.queue) THEN
        RETURN false;
    END IF;

    INSERT INTO taskboard.queues AS q (queue, discard_succeeded)
    VALUES (set_queue_discard.queue, set_queue_discard.discard)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET discard_succeeded = EXCLUDED.discard_succeeded,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.discard_succeeded IS DISTINCT FROM EXCLUDED.discard_succeeded;
    RETURN FOUND;
END
$$;

--
-- Name: FUNCTION set_queue_discard(queue text, discard boolean); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.set_queue_discard(queue text, discard boolean) IS 'set_queue_discard(queue, discard) -> boolean
discard true: from the next completion on, an accepted completion of a job
of `queue` deletes the job, with its history, instead of keeping it
succeeded; false (the default of every queue): jobs are kept. For queues
whose finished jobs nobody reads. What a discarded job gives up: get_job,
find_jobs, the dashboard and the CLI no longer find it, its result is
gone, and a completion repeated with its token answers false (as for a
pruned job) where a kept job answers true. The completion is fenced as
always: a token that is not current deletes nothing. A job is kept
succeeded, for prune to delete, when a job waits on it (depends_on), when
another transaction holds a lock on it as the delete''s lock is taken (a
producer''s open transaction naming it in depends_on, which the
completion never waits for), and when the completion runs in a transaction that
is not READ COMMITTED. Failed, dead and cancelled jobs are always kept.
A refused write of an earlier holder of a job being deleted gets no
history line (taskboard.record_refusals). True when
this call changed the setting, false when it already was `discard`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
discard is NULL.';

--
-- Name: set_queue_limit(text, integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.set_queue_limit(queue text, max_running integer) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    RETURN taskboard.set_limit(queue, 'max_running'::text, max_running);

--
-- Name: FUNCTION set_queue_limit(queue text, max_running integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.set_queue_limit(queue text, max_running integer) IS 'set_queue_limit(queue, max_running) -> boolean
From the next claim on, claim never lets more than `max_running` jobs of
`queue` run at once, counted across all workers and also under
concurrent claimers (claimers of a limited queue take turns on its row).
A limit counts the claims already made: setting one waits for the claim
transactions of the queue still open, and claims of the queue wait for it
until this call''s transaction ends.
Jobs already running over a lowered limit carry on; no new one starts
until the queue is under it. NULL removes the limit. Listeners are told
when a raised or removed limit leaves a job runnable now. True when this
call changed the limit, false when it already was `max_running`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
max_running is below 1 (pause the queue to stop it).';

--
-- Name: set_rate_limit(text, integer, interval, boolean); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.set_rate_limit(queue text, starts integer, per interval, by_key boolean DEFAULT false) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    -- per as a fixed length: months counted as 30 days and days as 24
    -- hours (as EXTRACT(epoch) counts them), so that the window is the same
    -- on every date and in every session's time zone.
    v_seconds numeric;
    v_per interval;
BEGIN
    v_checked := taskboard.check_name('queue', set_rate_limit.queue);
    v_checked := taskboard.check_arg((set_rate_limit.starts IS NULL) = (set_rate_limit.per IS NULL),
                     pg_catalog.format('starts and per must both be given, or both be NULL (no rate limit), got starts %s and per %s',
                                       coalesce(set_rate_limit.starts::text, 'NULL'), coalesce(set_rate_limit.per::text, 'NULL')));
    v_checked := taskboard.check_arg(set_rate_limit.by_key IS NOT NULL, 'by_key must be true or false, got NULL');
    v_checked := taskboard.check_arg(set_rate_limit.starts IS NOT NULL OR NOT set_rate_limit.by_key,
                     'by_key needs a rate limit: give starts and per, or by_key false to remove it');
    v_checked := taskboard.check_limit('starts', set_rate_limit.starts, 100000, 'no rate limit');
    IF set_rate_limit.per IS NOT NULL THEN
        v_seconds := EXTRACT(epoch FROM set_rate_limit.per);
        v_checked := taskboard.check_arg(v_seconds > 0, 'per must be positive, got ' || set_rate_limit.per);
        v_checked := taskboard.check_arg(v_seconds <= 31 * 86400, 'per must be at most 31 days, got ' || set_rate_limit.per);
        v_per := pg_catalog.make_interval(secs => v_seconds::double precision);
    END IF;

    IF set_rate_limit.starts IS NULL THEN
        -- No row is written for a queue that has none, and the log of the
        -- queue's starts goes with its limit.
        UPDATE taskboard.queues AS q
           SET rate_starts = NULL, rate_per = NULL, rate_by_key = false,
               updated_at = pg_catalog.clock_timestamp()
         WHERE q.queue = set_rate_limit.queue
           AND q.rate_starts IS NOT NULL;
        IF NOT FOUND THEN
            RETURN false;
        END IF;
        DELETE FROM taskboard.queue_starts AS s WHERE s.queue = set_rate_limit.queue;
    ELSE
        -- A rate limit must count the starts of the claims still in flight,
        -- as a first queue limit does (taskboard.set_queue_limit): each claim
        -- holds the queue's claim lock, shared, until its transaction ends,
        -- and this call waits for them; the claims after it take turns on
        -- the queue's row and log their starts.
        PERFORM pg_catalog.pg_advisory_xact_lock(1952605797, pg_catalog.hashtext(set_rate_limit.queue));
        INSERT INTO taskboard.queues AS q (queue, rate_starts, rate_per, rate_by_key)
        VALUES (set_rate_limit.queue, set_rate_limit.starts, v_per, set_rate_limit.by_key)
        ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
           SET rate_starts = EXCLUDED.rate_starts,
               rate_per = EXCLUDED.rate_per,
               rate_by_key = EXCLUDED.rate_by_key,
               updated_at = pg_catalog.clock_timestamp()
         WHERE (q.rate_starts, q.rate_per, q.rate_by_key)
               IS DISTINCT FROM (EXCLUDED.rate_starts, EXCLUDED.rate_per, EXCLUDED.rate_by_key);
        IF NOT FOUND THEN
            RETURN false;
        END IF;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = set_rate_limit.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(set_rate_limit.queue);
    END IF;
    RETURN true;
END
$$;

--
-- Name: FUNCTION set_rate_limit(queue text, starts integer, per interval, by_key boolean); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.set_rate_limit(queue text, starts integer, per interval, by_key boolean) IS 'set_rate_limit(queue, starts, per, by_key default false) -> boolean
From the next claim on, claim starts at most `starts` jobs of `queue` in
any window of length `per`, on the database''s clock, across all workers
and under concurrent claimers; a reclaim of an expired lease is a start.
With by_key, each concurrency key gets `starts` per window of its own, and
jobs without a key are not limited by it; claim still takes the jobs of
other keys behind a key that used up its window. Jobs held back wait,
queued, neither failed nor delayed. The starts are counted from the claims
made since the limit was set: setting one waits for the claim
transactions of the queue still open. NULL starts and per remove the rate
limit and forget the queue''s starts. True when this call changed the
limit, false when it already was this one.
Raises 22023 when queue is NULL, empty or longer than 200 characters,
only one of starts and per is NULL, starts is outside 1..100000, per is
not positive or longer than 31 days, or by_key is NULL, or true without a
limit. per is kept as a fixed length of time, a month counted as 30 days
and a day as 24 hours, so that the window is the same on every date and
in every time zone (''1 day'' is kept as 24:00:00).';

--
-- Name: settle_dependents(bigint[]); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.settle_dependents(job_ids bigint[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_nestloop TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
    -- The edges this call may still remove.
    v_budget integer := 1000;
    -- The ended jobs whose edges the next round settles: those given, then
    -- those of them with edges left and the dependents a round cancelled.
    v_ended bigint[] := settle_dependents.job_ids;
    v_removed integer;
    v_cancelled bigint[];
    v_queues text[];
BEGIN
    -- A snapshot older than this statement may not show every edge
    -- committed before the end: the jobs are read again after this
    -- transaction, in a fresh one (taskboard.recheck_dependencies).
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        INSERT INTO taskboard.dependency_checks (job_id, side)
        SELECT DISTINCT e.id, 'dependency' FROM pg_catalog.unnest(settle_dependents.job_ids) AS e(id)
        ON CONFLICT ON CONSTRAINT dependency_checks_pkey DO NOTHING;
    END IF;

    WHILE pg_catalog.cardinality(v_ended) > 0 AND v_budget > 0 LOOP
        WITH edges AS MATERIALIZED (
            -- At most the budget's edges of the ended jobs; a job that is
            -- not ended (retried since) has none settled.
            SELECT d.job_id, d.depends_on
              FROM taskboard.job_dependencies AS d
             WHERE d.depends_on = ANY (ARRAY(SELECT p.id
                                               FROM taskboard.jobs AS p
                                              WHERE p.id = ANY (v_ended)
                                                AND p.state IN ('succeeded', 'dead', 'cancelled')))
             LIMIT v_budget
        ),
        locked AS MATERIALIZED (
            -- Their dependents, each locked before any of its edges is
            -- removed, so that its count of dependencies left always equals
            -- its edges. One another transaction has locked (a settle of
            -- another of its dependencies, an admin's cancel or retry) is
            -- skipped, its edges left for a later call: no end waits here.
            SELECT c.id, c.state
              FROM taskboard.jobs AS c
             WHERE c.id = ANY (ARRAY(SELECT DISTINCT e.job_id FROM edges AS e))
             ORDER BY c.id
               FOR NO KEY UPDATE OF c SKIP LOCKED
        ),
        gone AS (
            -- The locked dependents' edges to the ended jobs, found through
            -- the primary key (a join here was planned as a scan of every
            -- edge): those picked, and any other such edge of theirs.
            DELETE FROM taskboard.job_dependencies AS d
             WHERE d.job_id = ANY (ARRAY(SELECT l.id FROM locked AS l))
               AND d.depends_on = ANY (ARRAY(SELECT DISTINCT e.depends_on FROM edges AS e))
            RETURNING d.job_id, d.depends_on
        ),
        tally AS (
            -- Per dependent: how many of its dependencies ended here, the
            -- first of them that did not succeed, and how long a cancelled
            -- one's holder may still act.
            SELECT g.job_id,
                   pg_catalog.count(*)::integer AS ended,
                   pg_catalog.min(g.depends_on) FILTER (WHERE p.state <> 'succeeded') AS failed,
                   pg_catalog.max(p.held_until) FILTER (WHERE p.state = 'cancelled') AS held_until
              FROM gone AS g
              JOIN taskboard.jobs AS p ON p.id = g.depends_on
             WHERE p.id = ANY (v_ended)
             GROUP BY g.job_id
        ),
        changed AS (
            -- Every dependent counts the edges it lost (a cancelled one too,
            -- so that a retry of it waits for exactly the edges it has); a
            -- waiting one moves on. Joined by id to the locked rows: a plan
            -- that walked the tally for each row made a wide fan-out
            -- quadratic.
            UPDATE taskboard.jobs AS c
               SET dependencies_left = c.dependencies_left - t.ended,
                   state = CASE
                       WHEN l.state <> 'waiting' THEN c.state
                       WHEN t.failed IS NOT NULL AND c.on_dependency_failure = 'cancel' THEN 'cancelled'
                       WHEN c.dependencies_left - t.ended = 0 THEN 'queued'
                       ELSE 'waiting'
                   END,
                   finished_at = CASE
                       WHEN l.state = 'waiting' AND t.failed IS NOT NULL AND c.on_dependency_failure = 'cancel'
                       THEN v_now
                       ELSE c.finished_at
                   END,
                   -- Runnable from its own run_at, or from now when that
                   -- passed while it waited; a dependent that runs anyway
                   -- beside a cancelled dependency no sooner than the end
                   -- of the lease that dependency's holder was given.
                   run_at = CASE
                       WHEN l.state <> 'waiting' THEN c.run_at
                       WHEN t.failed IS NOT NULL AND c.on_dependency_failure = 'cancel' THEN c.run_at
                       WHEN c.dependencies_left - t.ended = 0
                       THEN GREATEST(c.run_at, v_now, t.held_until)
                       ELSE GREATEST(c.run_at, t.held_until)
                   END,
                   errors = CASE
                       WHEN l.state = 'waiting' AND t.failed IS NOT NULL AND c.on_dependency_failure = 'cancel'
                       THEN c.errors || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                           'error', pg_catalog.format('dependency %s ended %s', t.failed,
                                                      (SELECT p.state FROM taskboard.jobs AS p WHERE p.id = t.failed)),
                           'attempt', c.attempt,
                           'at', v_now))
                       ELSE c.errors
                   END
              FROM tally AS t, locked AS l
             WHERE c.id = t.job_id
               AND l.id = t.job_id
               AND c.id = ANY (ARRAY(SELECT k.id FROM locked AS k))
            RETURNING c.id, c.state, l.state AS was, c.queue, c.run_at
        )
        SELECT (SELECT pg_catalog.count(*)::integer FROM gone),
               ARRAY(SELECT x.id FROM changed AS x WHERE x.state = 'cancelled' AND x.was = 'waiting'),
               ARRAY(SELECT DISTINCT x.queue FROM changed AS x
                      WHERE x.state = 'queued' AND x.was = 'waiting' AND x.run_at <= v_now)
          INTO v_removed, v_cancelled, v_queues;
        PERFORM taskboard.notify_runnable(q.queue)
           FROM pg_catalog.unnest(v_queues) AS q(queue);
        v_budget := v_budget - v_removed;
        -- Nothing removed: what is left belongs to skipped dependents.
        EXIT WHEN v_removed = 0;
        -- Next round: the ended jobs with edges left, and the dependents
        -- cancelled here that others wait for.
        -- (Each probed on its own: as a join, without nested loops, it read
        -- every edge.)
        v_ended := ARRAY(SELECT e.id
                           FROM pg_catalog.unnest(v_ended || v_cancelled) AS e(id)
                          WHERE (SELECT true FROM taskboard.job_dependencies AS d
                                  WHERE d.depends_on = e.id LIMIT 1));
    END LOOP;

    -- Ended jobs with edges left (the budget spent, or their dependents
    -- locked by others): settled later by recheck_dependencies.
    INSERT INTO taskboard.dependency_checks (job_id, side)
    SELECT e.id, 'dependency'
      FROM pg_catalog.unnest(v_ended) AS e(id)
     WHERE (SELECT p.state FROM taskboard.jobs AS p WHERE p.id = e.id) IN ('succeeded', 'dead', 'cancelled')
       AND (SELECT true FROM taskboard.job_dependencies AS d WHERE d.depends_on = e.id LIMIT 1)
    ON CONFLICT ON CONSTRAINT dependency_checks_pkey DO NOTHING;
END
$$;

--
-- Name: FUNCTION settle_dependents(job_ids bigint[]); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.settle_dependents(job_ids bigint[]) IS 'settle_dependents(job_ids) -> void
Internal: settles what the end of each job of `job_ids` (succeeded, dead
or cancelled, in the caller''s transaction) means for the jobs waiting on
it. Its edges are removed; a dependent whose last dependency ended
successfully becomes queued, runnable from its run_at or now, whichever
is later (NOTIFY taskboard, ''<queue>'' when runnable now); one whose
dependency ended dead or cancelled becomes cancelled, with an error
''dependency N ended dead'' (or cancelled), and its own dependents after it,
unless it was enqueued with on_dependency_failure ''run'': then the
dependency counts as ended like a success, and the dependent is runnable
no sooner than the lease a cancelled dependency''s holder was given
(held_until). A dependent that another transaction has locked is skipped,
so an end never waits here; every dependent, a cancelled one too, counts
the edges it loses. One call removes at most 1000 edges: the jobs whose
edges are left (budget spent, or dependents skipped) are settled later,
1000 edges at a time, by recheck_dependencies (claim calls it), and so are
the jobs given in a transaction that is not READ COMMITTED. A job whose edges were settled
already, that has none, or that has not ended changes nothing. Called by
complete, complete_many, fail, cancel, claim and recheck_dependencies;
never granted to an application role. Raises nothing.';

--
-- Name: version(); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.version() RETURNS text
    LANGUAGE sql IMMUTABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
SELECT '0.7.3'::text
$$;

--
-- Name: FUNCTION version(); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.version() IS 'version() -> text
The schema''s release, for the driver''s start-up check.
Raises nothing.';

--
-- Name: window_room(text, integer, interval, timestamp with time zone); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.window_room(queue text, rate_starts integer, rate_per interval, clock timestamp with time zone) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    RETURN (
        SELECT GREATEST(0, window_room.rate_starts - pg_catalog.count(*))::integer
          FROM taskboard.queue_starts AS s
         WHERE s.queue = window_room.queue
           AND s.started_at > window_room.clock - window_room.rate_per);
END
$$;

--
-- Name: FUNCTION window_room(queue text, rate_starts integer, rate_per interval, clock timestamp with time zone); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.window_room(queue text, rate_starts integer, rate_per interval, clock timestamp with time zone) IS 'window_room(queue, rate_starts, rate_per, clock) -> integer
Internal: a picker''s bound under a rate limit of the whole queue
(taskboard.set_rate_limit without by_key): how many more starts of
`queue`, reclaims included, its window of `rate_per` ending at `clock`
has room for, at least 0: rate_starts less the starts logged in
taskboard.queue_starts after clock - rate_per. Writes nothing.
Called by claim, on its turn on the queue''s row; never granted to an
application role.';

--
-- Name: worker_leases(integer); Type: FUNCTION; Schema: taskboard; Owner: -
--

CREATE FUNCTION taskboard.worker_leases(max_rows integer DEFAULT 500) RETURNS TABLE(worker text, job_id bigint, queue text, task text, attempt integer, fence bigint, started_at timestamp with time zone, lease_expires_at timestamp with time zone, expires_in interval, state text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
BEGIN
    v_checked := taskboard.check_between('max_rows', worker_leases.max_rows, 1, 1000);

    RETURN QUERY
    SELECT h.claimed_by, h.id, h.queue, h.task, h.attempt, h.fence, h.started_at,
           h.lease_ends, h.lease_ends - v_now, h.state
      FROM (SELECT j.claimed_by, j.id, j.queue, j.task, j.attempt, j.fence, j.started_at,
                   j.lease_expires_at AS lease_ends, j.state
              FROM taskboard.jobs AS j
             WHERE j.state = 'running'
            UNION ALL
            -- Read through jobs_held_by_queue: only jobs cancelled while
            -- running have a held_until.
            SELECT j.claimed_by, j.id, j.queue, j.task, j.attempt, j.fence, j.started_at,
                   j.held_until, j.state
              FROM taskboard.jobs AS j
             WHERE j.held_until IS NOT NULL
               AND j.held_until > v_now
               AND j.state = 'cancelled') AS h
     ORDER BY h.claimed_by, h.lease_ends, h.id
     LIMIT worker_leases.max_rows;
END
$$;

--
-- Name: FUNCTION worker_leases(max_rows integer); Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON FUNCTION taskboard.worker_leases(max_rows integer) IS 'worker_leases(max_rows) -> setof (worker, job_id, queue, task, attempt, fence, started_at, lease_expires_at, expires_in, state)
Who holds what: one row per running job, and per job cancelled under a
lease that has not ended yet (its holder may still be at work: state
cancelled, lease_expires_at its held_until), by worker (claimed_by), then
the lease that ends first; at most max_rows rows (default 500). started_at
is the holder''s claim, lease_expires_at its deadline, expires_in that
deadline minus the database''s clock (negative: the lease expired and the
job waits for a reclaim, or for claim to bury it; never for a cancelled
job, which leaves the list when its lease ends). state is running or
cancelled. Never a token.
Raises 22023 when max_rows is NULL or outside 1..1000.';

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: dependency_checks; Type: TABLE; Schema: taskboard; Owner: -
--

CREATE TABLE taskboard.dependency_checks (
    job_id bigint NOT NULL,
    side text NOT NULL,
    added_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT dependency_checks_side_known CHECK ((side = ANY (ARRAY['dependent'::text, 'dependency'::text])))
);

--
-- Name: TABLE dependency_checks; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON TABLE taskboard.dependency_checks IS 'Jobs whose dependency edges are read again after their transaction: side dependent, edges an enqueue wrote while a dependency could end; side dependency, a job that ended with dependents left to settle. Written by enqueue and the calls that end a job; emptied by recheck_dependencies.';

--
-- Name: job_dependencies; Type: TABLE; Schema: taskboard; Owner: -
--

CREATE TABLE taskboard.job_dependencies (
    job_id bigint NOT NULL,
    depends_on bigint NOT NULL
);

--
-- Name: TABLE job_dependencies; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON TABLE taskboard.job_dependencies IS 'The dependencies of waiting jobs not ended yet: job_id waits for depends_on. Written by enqueue, removed as each dependency ends.';

--
-- Name: job_events; Type: TABLE; Schema: taskboard; Owner: -
--

CREATE TABLE taskboard.job_events (
    id bigint NOT NULL,
    job_id bigint NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    kind text NOT NULL,
    worker text,
    actor text,
    attempt integer,
    fence bigint,
    lease_expires_at timestamp with time zone,
    token_digest bytea,
    actor_worker text,
    CONSTRAINT job_events_kind_known CHECK ((kind = ANY (ARRAY['reclaimed'::text, 'cancelled'::text, 'retried'::text, 'refused_complete'::text, 'refused_fail'::text, 'refused_renew'::text]))),
    CONSTRAINT job_events_refusal_has_token CHECK (((kind !~~ 'refused_%'::text) OR (token_digest IS NOT NULL)))
);

--
-- Name: TABLE job_events; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON TABLE taskboard.job_events IS 'A job''s history: reclaimed leases, cancels, retries, refused late writes. Written only by the taskboard functions; no token, only its digest.';

--
-- Name: COLUMN job_events.actor; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.job_events.actor IS 'Who acted: the database role in force (SET ROLE, else the login) that reclaimed, cancelled or retried; on reclaims recorded before actor_worker, the reclaiming worker''s name.';

--
-- Name: COLUMN job_events.actor_worker; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.job_events.actor_worker IS 'reclaimed: the worker name the reclaiming claim stated (its worker argument); NULL otherwise.';

--
-- Name: job_events_id_seq; Type: SEQUENCE; Schema: taskboard; Owner: -
--

ALTER TABLE taskboard.job_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME taskboard.job_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: jobs; Type: TABLE; Schema: taskboard; Owner: -
--

CREATE TABLE taskboard.jobs (
    id bigint NOT NULL,
    queue text NOT NULL,
    task text NOT NULL,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    state text DEFAULT 'queued'::text NOT NULL,
    priority integer DEFAULT 0 NOT NULL,
    run_at timestamp with time zone NOT NULL,
    attempt integer DEFAULT 0 NOT NULL,
    max_attempts integer NOT NULL,
    dedupe_key text,
    lease_token uuid,
    lease_expires_at timestamp with time zone,
    claimed_by text,
    idempotency_key uuid DEFAULT gen_random_uuid() NOT NULL,
    result jsonb,
    errors jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    finished_at timestamp with time zone,
    fence bigint DEFAULT 0 NOT NULL,
    started_at timestamp with time zone,
    trace_context jsonb,
    held_until timestamp with time zone,
    concurrency_key text,
    dependencies_left integer,
    on_dependency_failure text,
    has_dependents boolean DEFAULT false NOT NULL,
    CONSTRAINT jobs_attempt_within_max CHECK (((attempt >= 0) AND (attempt <= max_attempts))),
    CONSTRAINT jobs_concurrency_key_named CHECK (((concurrency_key <> ''::text) AND (char_length(concurrency_key) <= 200))),
    CONSTRAINT jobs_errors_is_array CHECK ((jsonb_typeof(errors) = 'array'::text)),
    CONSTRAINT jobs_fence_not_negative CHECK ((fence >= 0)),
    CONSTRAINT jobs_finished_at_iff_terminal CHECK (((state = ANY (ARRAY['succeeded'::text, 'dead'::text, 'cancelled'::text])) = (finished_at IS NOT NULL))),
    CONSTRAINT jobs_max_attempts_positive CHECK ((max_attempts >= 1)),
    CONSTRAINT jobs_on_dependency_failure_known CHECK ((on_dependency_failure = ANY (ARRAY['cancel'::text, 'run'::text]))),
    CONSTRAINT jobs_queue_not_empty CHECK ((queue <> ''::text)),
    CONSTRAINT jobs_running_has_lease CHECK (((state <> 'running'::text) OR ((lease_token IS NOT NULL) AND (lease_expires_at IS NOT NULL) AND (claimed_by IS NOT NULL)))),
    CONSTRAINT jobs_state_known CHECK ((state = ANY (ARRAY['waiting'::text, 'queued'::text, 'running'::text, 'succeeded'::text, 'dead'::text, 'cancelled'::text]))),
    CONSTRAINT jobs_task_not_empty CHECK ((task <> ''::text)),
    CONSTRAINT jobs_waiting_has_dependencies CHECK (((state <> 'waiting'::text) OR (dependencies_left > 0)))
)
WITH (fillfactor='80');

--
-- Name: TABLE jobs; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON TABLE taskboard.jobs IS 'One row per job. Written only by the taskboard functions, as taskboard_owner.';

--
-- Name: COLUMN jobs.held_until; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.jobs.held_until IS 'Cancelled while running: the deadline its holder was given. The job keeps its place under the queue''s limit and its dedupe key until then. NULL otherwise.';

--
-- Name: COLUMN jobs.concurrency_key; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.jobs.concurrency_key IS 'The key whose jobs in this queue run at most max_running_per_key at once; NULL: none.';

--
-- Name: COLUMN jobs.dependencies_left; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.jobs.dependencies_left IS 'How many of the dependencies of this job have not ended yet; NULL: it was enqueued without any.';

--
-- Name: COLUMN jobs.on_dependency_failure; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.jobs.on_dependency_failure IS 'What a dependency that ends dead or cancelled does to this job: cancel it (cancel), or count as a success (run); NULL: no dependencies.';

--
-- Name: COLUMN jobs.has_dependents; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.jobs.has_dependents IS 'Whether a job was ever enqueued depending on this one: its end then settles their edges.';

--
-- Name: jobs_id_seq; Type: SEQUENCE; Schema: taskboard; Owner: -
--

ALTER TABLE taskboard.jobs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME taskboard.jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: queue_starts; Type: TABLE; Schema: taskboard; Owner: -
--

CREATE TABLE taskboard.queue_starts (
    queue text NOT NULL,
    concurrency_key text,
    started_at timestamp with time zone NOT NULL
);

--
-- Name: TABLE queue_starts; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON TABLE taskboard.queue_starts IS 'The job starts of the queues with a rate limit within their window: written and pruned by claim.';

--
-- Name: queues; Type: TABLE; Schema: taskboard; Owner: -
--

CREATE TABLE taskboard.queues (
    queue text NOT NULL,
    paused boolean DEFAULT false NOT NULL,
    max_running integer,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    max_running_per_key integer,
    rate_starts integer,
    rate_per interval,
    rate_by_key boolean DEFAULT false NOT NULL,
    discard_succeeded boolean DEFAULT false NOT NULL,
    CONSTRAINT queues_max_running_per_key_positive CHECK (((max_running_per_key IS NULL) OR (max_running_per_key >= 1))),
    CONSTRAINT queues_max_running_positive CHECK (((max_running IS NULL) OR (max_running >= 1))),
    CONSTRAINT queues_queue_named CHECK (((queue <> ''::text) AND (char_length(queue) <= 200))),
    CONSTRAINT queues_rate_limit_positive CHECK (((rate_starts IS NULL) OR (((rate_starts >= 1) AND (rate_starts <= 100000)) AND (rate_per > '00:00:00'::interval) AND (rate_per <= '744:00:00'::interval)))),
    CONSTRAINT queues_rate_limit_whole CHECK ((((rate_starts IS NULL) = (rate_per IS NULL)) AND ((rate_starts IS NOT NULL) OR (NOT rate_by_key))))
);

--
-- Name: TABLE queues; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON TABLE taskboard.queues IS 'Queue settings (paused, limits, discard_succeeded). Written only by the taskboard functions.';

--
-- Name: COLUMN queues.max_running_per_key; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.queues.max_running_per_key IS 'At most this many jobs of one concurrency key run at once in this queue; NULL: no key limit.';

--
-- Name: COLUMN queues.rate_starts; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.queues.rate_starts IS 'At most this many jobs of this queue (or of one concurrency key, rate_by_key) start in any window of rate_per; NULL: no rate limit.';

--
-- Name: COLUMN queues.rate_per; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.queues.rate_per IS 'The window of the rate limit; NULL: no rate limit.';

--
-- Name: COLUMN queues.rate_by_key; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.queues.rate_by_key IS 'Whether the rate limit counts each concurrency key''s starts apart (jobs without a key are then not limited).';

--
-- Name: COLUMN queues.discard_succeeded; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON COLUMN taskboard.queues.discard_succeeded IS 'true: an accepted completion deletes the job, its history with it, instead of keeping it succeeded (set_queue_discard).';

--
-- Name: queue_stats; Type: VIEW; Schema: taskboard; Owner: -
--

CREATE VIEW taskboard.queue_stats AS
 SELECT j.queue,
    j.state,
    count(*) AS jobs,
    min(j.run_at) AS oldest_run_at,
    count(*) FILTER (WHERE (((j.state = 'queued'::text) AND (j.run_at <= clock_timestamp())) OR ((j.state = 'running'::text) AND (j.lease_expires_at <= clock_timestamp()) AND (j.attempt < j.max_attempts)))) AS runnable,
    COALESCE(q.paused, false) AS paused,
    q.max_running,
    q.max_running_per_key,
    q.rate_starts,
    q.rate_per,
    COALESCE(q.rate_by_key, false) AS rate_by_key,
        CASE
            WHEN (q.rate_starts IS NULL) THEN NULL::bigint
            WHEN (NOT q.rate_by_key) THEN ( SELECT count(*) AS count
               FROM taskboard.queue_starts s
              WHERE ((s.queue = j.queue) AND (s.started_at > (clock_timestamp() - q.rate_per))))
            ELSE COALESCE(( SELECT max(k.starts) AS max
               FROM ( SELECT count(*) AS starts
                       FROM taskboard.queue_starts s
                      WHERE ((s.queue = j.queue) AND (s.concurrency_key IS NOT NULL) AND (s.started_at > (clock_timestamp() - q.rate_per)))
                      GROUP BY s.concurrency_key) k), (0)::bigint)
        END AS window_starts
   FROM (taskboard.jobs j
     LEFT JOIN taskboard.queues q ON ((q.queue = j.queue)))
  GROUP BY j.queue, j.state, q.paused, q.max_running, q.max_running_per_key, q.rate_starts, q.rate_per, q.rate_by_key;

--
-- Name: schedule_slots; Type: TABLE; Schema: taskboard; Owner: -
--

CREATE TABLE taskboard.schedule_slots (
    schedule text NOT NULL,
    last_slot timestamp with time zone NOT NULL,
    last_job_id bigint,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    task text,
    queue text,
    CONSTRAINT schedule_slots_last_slot_finite CHECK (isfinite(last_slot)),
    CONSTRAINT schedule_slots_schedule_named CHECK (((schedule <> ''::text) AND (char_length(schedule) <= 200)))
);

--
-- Name: TABLE schedule_slots; Type: COMMENT; Schema: taskboard; Owner: -
--

COMMENT ON TABLE taskboard.schedule_slots IS 'The latest enqueued slot of each schedule. Written only by taskboard.enqueue_periodic.';

--
-- Name: schedules; Type: VIEW; Schema: taskboard; Owner: -
--

CREATE VIEW taskboard.schedules AS
 SELECT schedule,
    last_slot,
    last_job_id,
    task,
    queue
   FROM taskboard.schedule_slots s;

--
-- Name: dependency_checks dependency_checks_pkey; Type: CONSTRAINT; Schema: taskboard; Owner: -
--

ALTER TABLE ONLY taskboard.dependency_checks
    ADD CONSTRAINT dependency_checks_pkey PRIMARY KEY (job_id, side);

--
-- Name: job_dependencies job_dependencies_pkey; Type: CONSTRAINT; Schema: taskboard; Owner: -
--

ALTER TABLE ONLY taskboard.job_dependencies
    ADD CONSTRAINT job_dependencies_pkey PRIMARY KEY (job_id, depends_on);

--
-- Name: job_events job_events_once; Type: CONSTRAINT; Schema: taskboard; Owner: -
--

ALTER TABLE ONLY taskboard.job_events
    ADD CONSTRAINT job_events_once UNIQUE (job_id, token_digest, kind);

--
-- Name: job_events job_events_pkey; Type: CONSTRAINT; Schema: taskboard; Owner: -
--

ALTER TABLE ONLY taskboard.job_events
    ADD CONSTRAINT job_events_pkey PRIMARY KEY (id);

--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: taskboard; Owner: -
--

ALTER TABLE ONLY taskboard.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);

--
-- Name: queues queues_pkey; Type: CONSTRAINT; Schema: taskboard; Owner: -
--

ALTER TABLE ONLY taskboard.queues
    ADD CONSTRAINT queues_pkey PRIMARY KEY (queue);

--
-- Name: schedule_slots schedule_slots_pkey; Type: CONSTRAINT; Schema: taskboard; Owner: -
--

ALTER TABLE ONLY taskboard.schedule_slots
    ADD CONSTRAINT schedule_slots_pkey PRIMARY KEY (schedule);

--
-- Name: job_dependencies_by_dependency; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX job_dependencies_by_dependency ON taskboard.job_dependencies USING btree (depends_on);

--
-- Name: jobs_failed_by_queue; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX jobs_failed_by_queue ON taskboard.jobs USING btree (state, queue, id) WHERE (state = ANY (ARRAY['dead'::text, 'cancelled'::text]));

--
-- Name: jobs_finished_at; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX jobs_finished_at ON taskboard.jobs USING btree (finished_at) WHERE (finished_at IS NOT NULL);

--
-- Name: jobs_held_by_queue; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX jobs_held_by_queue ON taskboard.jobs USING btree (queue, held_until) WHERE (held_until IS NOT NULL);

--
-- Name: jobs_holders_by_key; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX jobs_holders_by_key ON taskboard.jobs USING btree (queue, concurrency_key) WHERE ((concurrency_key IS NOT NULL) AND ((state = 'running'::text) OR (held_until IS NOT NULL)));

--
-- Name: jobs_queued_claim_order; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX jobs_queued_claim_order ON taskboard.jobs USING btree (queue, priority DESC, run_at, id) WHERE (state = 'queued'::text);

--
-- Name: jobs_running_by_queue; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX jobs_running_by_queue ON taskboard.jobs USING btree (queue) WHERE (state = 'running'::text);

--
-- Name: jobs_unfinished_last_failure; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX jobs_unfinished_last_failure ON taskboard.jobs USING btree (taskboard.last_failure_at(errors)) WHERE ((state = ANY (ARRAY['queued'::text, 'running'::text])) AND (errors <> '[]'::jsonb));

--
-- Name: jobs_unfinished_task_dedupe_key; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE UNIQUE INDEX jobs_unfinished_task_dedupe_key ON taskboard.jobs USING btree (queue, task, sha256(decode(replace(dedupe_key, '\'::text, '\\'::text), 'escape'::text))) WHERE ((dedupe_key IS NOT NULL) AND (state = ANY (ARRAY['queued'::text, 'running'::text])));

--
-- Name: jobs_waiting_by_queue; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX jobs_waiting_by_queue ON taskboard.jobs USING btree (queue) WHERE (state = 'waiting'::text);

--
-- Name: jobs_with_dependents; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX jobs_with_dependents ON taskboard.jobs USING btree (id) WHERE has_dependents;

--
-- Name: queue_starts_by_key; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX queue_starts_by_key ON taskboard.queue_starts USING btree (queue, concurrency_key, started_at) WHERE (concurrency_key IS NOT NULL);

--
-- Name: queue_starts_by_time; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX queue_starts_by_time ON taskboard.queue_starts USING btree (queue, started_at);

--
-- Name: queues_discarding; Type: INDEX; Schema: taskboard; Owner: -
--

CREATE INDEX queues_discarding ON taskboard.queues USING btree (queue) WHERE discard_succeeded;

--
-- Name: job_dependencies job_dependencies_depends_on_fkey; Type: FK CONSTRAINT; Schema: taskboard; Owner: -
--

ALTER TABLE ONLY taskboard.job_dependencies
    ADD CONSTRAINT job_dependencies_depends_on_fkey FOREIGN KEY (depends_on) REFERENCES taskboard.jobs(id) ON DELETE CASCADE;

--
-- Name: job_dependencies job_dependencies_job_id_fkey; Type: FK CONSTRAINT; Schema: taskboard; Owner: -
--

ALTER TABLE ONLY taskboard.job_dependencies
    ADD CONSTRAINT job_dependencies_job_id_fkey FOREIGN KEY (job_id) REFERENCES taskboard.jobs(id) ON DELETE CASCADE;

--
-- Name: job_events job_events_job_id_fkey; Type: FK CONSTRAINT; Schema: taskboard; Owner: -
--

ALTER TABLE ONLY taskboard.job_events
    ADD CONSTRAINT job_events_job_id_fkey FOREIGN KEY (job_id) REFERENCES taskboard.jobs(id) ON DELETE CASCADE;

--
-- Name: SCHEMA taskboard; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA taskboard TO taskboard_producer;
GRANT USAGE ON SCHEMA taskboard TO taskboard_worker;
GRANT USAGE ON SCHEMA taskboard TO taskboard_admin;

--
-- Name: FUNCTION bury_spent(queue text, clock timestamp with time zone); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.bury_spent(queue text, clock timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION cancel(job_id bigint); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.cancel(job_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.cancel(job_id bigint) TO taskboard_admin;

--
-- Name: FUNCTION check_arg(ok boolean, message text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_arg(ok boolean, message text) FROM PUBLIC;

--
-- Name: FUNCTION check_between(what text, value bigint, low bigint, high bigint); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_between(what text, value bigint, low bigint, high bigint) FROM PUBLIC;

--
-- Name: FUNCTION check_choice(what text, value text, VARIADIC choices text[]); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_choice(what text, value text, VARIADIC choices text[]) FROM PUBLIC;

--
-- Name: FUNCTION check_delay(what text, value interval, most text, back boolean); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_delay(what text, value interval, most text, back boolean) FROM PUBLIC;

--
-- Name: FUNCTION check_flat(what text, VARIADIC ndims integer[]); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_flat(what text, VARIADIC ndims integer[]) FROM PUBLIC;

--
-- Name: FUNCTION check_given(what text, value anyelement, hint text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_given(what text, value anyelement, hint text) FROM PUBLIC;

--
-- Name: FUNCTION check_interval(what text, value interval, most interval); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_interval(what text, value interval, most interval) FROM PUBLIC;

--
-- Name: FUNCTION check_items(what text, value anyarray); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_items(what text, value anyarray) FROM PUBLIC;

--
-- Name: FUNCTION check_key(what text, value text, max_chars integer, null_means text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_key(what text, value text, max_chars integer, null_means text) FROM PUBLIC;

--
-- Name: FUNCTION check_lease(job_id bigint, token uuid); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_lease(job_id bigint, token uuid) FROM PUBLIC;

--
-- Name: FUNCTION check_leases(arrays text, job_ids bigint[], tokens uuid[], other_ndims integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_leases(arrays text, job_ids bigint[], tokens uuid[], other_ndims integer) FROM PUBLIC;

--
-- Name: FUNCTION check_lengths(what text, n integer, other text, m integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_lengths(what text, n integer, other text, m integer) FROM PUBLIC;

--
-- Name: FUNCTION check_limit(what text, value integer, most integer, none_means text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_limit(what text, value integer, most integer, none_means text) FROM PUBLIC;

--
-- Name: FUNCTION check_name(what text, value text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_name(what text, value text) FROM PUBLIC;

--
-- Name: FUNCTION check_recent(recent interval); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_recent(recent interval) FROM PUBLIC;

--
-- Name: FUNCTION check_time(what text, value timestamp with time zone); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_time(what text, value timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION check_trace_context(value jsonb); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.check_trace_context(value jsonb) FROM PUBLIC;

--
-- Name: FUNCTION claim(queue text, worker text, batch integer, lease interval); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.claim(queue text, worker text, batch integer, lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.claim(queue text, worker text, batch integer, lease interval) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.claim(queue text, worker text, batch integer, lease interval) TO taskboard_admin;

--
-- Name: FUNCTION complete(job_id bigint, token uuid, result jsonb); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.complete(job_id bigint, token uuid, result jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.complete(job_id bigint, token uuid, result jsonb) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.complete(job_id bigint, token uuid, result jsonb) TO taskboard_admin;

--
-- Name: FUNCTION complete_held(job_ids bigint[], tokens uuid[], results jsonb[], clock timestamp with time zone); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.complete_held(job_ids bigint[], tokens uuid[], results jsonb[], clock timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION complete_many(job_ids bigint[], tokens uuid[], results jsonb[]); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.complete_many(job_ids bigint[], tokens uuid[], results jsonb[]) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.complete_many(job_ids bigint[], tokens uuid[], results jsonb[]) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.complete_many(job_ids bigint[], tokens uuid[], results jsonb[]) TO taskboard_admin;

--
-- Name: FUNCTION discard_held(job_ids bigint[], tokens uuid[]); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.discard_held(job_ids bigint[], tokens uuid[]) FROM PUBLIC;

--
-- Name: FUNCTION enqueue(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.enqueue(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.enqueue(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text) TO taskboard_producer;
GRANT ALL ON FUNCTION taskboard.enqueue(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.enqueue(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text) TO taskboard_admin;

--
-- Name: FUNCTION enqueue_many(task text, payloads jsonb[], queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_keys text[], trace_context jsonb, concurrency_keys text[]); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.enqueue_many(task text, payloads jsonb[], queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_keys text[], trace_context jsonb, concurrency_keys text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.enqueue_many(task text, payloads jsonb[], queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_keys text[], trace_context jsonb, concurrency_keys text[]) TO taskboard_producer;
GRANT ALL ON FUNCTION taskboard.enqueue_many(task text, payloads jsonb[], queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_keys text[], trace_context jsonb, concurrency_keys text[]) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.enqueue_many(task text, payloads jsonb[], queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_keys text[], trace_context jsonb, concurrency_keys text[]) TO taskboard_admin;

--
-- Name: FUNCTION enqueue_periodic(schedule text, slot timestamp with time zone, task text, payload jsonb, queue text, priority integer, max_attempts integer, previous_names text[]); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.enqueue_periodic(schedule text, slot timestamp with time zone, task text, payload jsonb, queue text, priority integer, max_attempts integer, previous_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.enqueue_periodic(schedule text, slot timestamp with time zone, task text, payload jsonb, queue text, priority integer, max_attempts integer, previous_names text[]) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.enqueue_periodic(schedule text, slot timestamp with time zone, task text, payload jsonb, queue text, priority integer, max_attempts integer, previous_names text[]) TO taskboard_admin;

--
-- Name: FUNCTION enqueue_waiting(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.enqueue_waiting(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text) FROM PUBLIC;

--
-- Name: FUNCTION fail(job_id bigint, token uuid, error text, retry_in interval, retry boolean, traceback text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.fail(job_id bigint, token uuid, error text, retry_in interval, retry boolean, traceback text) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.fail(job_id bigint, token uuid, error text, retry_in interval, retry boolean, traceback text) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.fail(job_id bigint, token uuid, error text, retry_in interval, retry boolean, traceback text) TO taskboard_admin;

--
-- Name: FUNCTION find_ids(queue text, state text, task text, after_id bigint, max_rows integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.find_ids(queue text, state text, task text, after_id bigint, max_rows integer) FROM PUBLIC;

--
-- Name: FUNCTION find_jobs(queue text, state text, task text, after_id bigint, max_rows integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.find_jobs(queue text, state text, task text, after_id bigint, max_rows integer) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.find_jobs(queue text, state text, task text, after_id bigint, max_rows integer) TO taskboard_producer;
GRANT ALL ON FUNCTION taskboard.find_jobs(queue text, state text, task text, after_id bigint, max_rows integer) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.find_jobs(queue text, state text, task text, after_id bigint, max_rows integer) TO taskboard_admin;

--
-- Name: FUNCTION find_jobs_summary(queue text, state text, task text, after_id bigint, max_rows integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.find_jobs_summary(queue text, state text, task text, after_id bigint, max_rows integer) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.find_jobs_summary(queue text, state text, task text, after_id bigint, max_rows integer) TO taskboard_producer;
GRANT ALL ON FUNCTION taskboard.find_jobs_summary(queue text, state text, task text, after_id bigint, max_rows integer) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.find_jobs_summary(queue text, state text, task text, after_id bigint, max_rows integer) TO taskboard_admin;

--
-- Name: FUNCTION full_keys(queue text, max_running_per_key integer, clock timestamp with time zone); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.full_keys(queue text, max_running_per_key integer, clock timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION get_job(job_id bigint); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.get_job(job_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.get_job(job_id bigint) TO taskboard_producer;
GRANT ALL ON FUNCTION taskboard.get_job(job_id bigint) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.get_job(job_id bigint) TO taskboard_admin;

--
-- Name: FUNCTION grant_leases(ids bigint[], most integer, worker text, lease interval, clock timestamp with time zone); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.grant_leases(ids bigint[], most integer, worker text, lease interval, clock timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION job_activity(recent interval); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.job_activity(recent interval) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.job_activity(recent interval) TO taskboard_producer;
GRANT ALL ON FUNCTION taskboard.job_activity(recent interval) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.job_activity(recent interval) TO taskboard_admin;

--
-- Name: FUNCTION job_history(job_id bigint); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.job_history(job_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.job_history(job_id bigint) TO taskboard_admin;

--
-- Name: FUNCTION last_failure_at(errors jsonb); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.last_failure_at(errors jsonb) FROM PUBLIC;

--
-- Name: FUNCTION lease_state(job_id bigint, token uuid); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.lease_state(job_id bigint, token uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.lease_state(job_id bigint, token uuid) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.lease_state(job_id bigint, token uuid) TO taskboard_admin;

--
-- Name: FUNCTION notify_runnable(queue text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.notify_runnable(queue text) FROM PUBLIC;

--
-- Name: FUNCTION pause(queue text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.pause(queue text) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.pause(queue text) TO taskboard_admin;

--
-- Name: FUNCTION pick_expired(queue text, clock timestamp with time zone, most integer, rate_full_keys text[], rate_starts integer, rate_per interval, rate_by_key boolean); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.pick_expired(queue text, clock timestamp with time zone, most integer, rate_full_keys text[], rate_starts integer, rate_per interval, rate_by_key boolean) FROM PUBLIC;

--
-- Name: FUNCTION pick_keyed(queue text, clock timestamp with time zone, room integer, full_keys text[], max_running_per_key integer, rate_starts integer, rate_per interval, rate_by_key boolean, reclaims bigint[]); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.pick_keyed(queue text, clock timestamp with time zone, room integer, full_keys text[], max_running_per_key integer, rate_starts integer, rate_per interval, rate_by_key boolean, reclaims bigint[]) FROM PUBLIC;

--
-- Name: FUNCTION pick_next(queue text, clock timestamp with time zone, most integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.pick_next(queue text, clock timestamp with time zone, most integer) FROM PUBLIC;

--
-- Name: FUNCTION pick_queued(queue text, clock timestamp with time zone, most integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.pick_queued(queue text, clock timestamp with time zone, most integer) FROM PUBLIC;

--
-- Name: FUNCTION prune(older_than interval, batch integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.prune(older_than interval, batch integer) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.prune(older_than interval, batch integer) TO taskboard_admin;

--
-- Name: FUNCTION queue_overview(recent interval); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.queue_overview(recent interval) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.queue_overview(recent interval) TO taskboard_producer;
GRANT ALL ON FUNCTION taskboard.queue_overview(recent interval) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.queue_overview(recent interval) TO taskboard_admin;

--
-- Name: FUNCTION queue_room(queue text, max_running integer, clock timestamp with time zone); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.queue_room(queue text, max_running integer, clock timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION rate_full_keys(queue text, clock timestamp with time zone, room integer, full_keys text[], known text[], rate_starts integer, rate_per interval); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.rate_full_keys(queue text, clock timestamp with time zone, room integer, full_keys text[], known text[], rate_starts integer, rate_per interval) FROM PUBLIC;

--
-- Name: FUNCTION recheck_dependencies(max_rows integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.recheck_dependencies(max_rows integer) FROM PUBLIC;

--
-- Name: FUNCTION record_refusals(kind text, job_ids bigint[], tokens uuid[]); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.record_refusals(kind text, job_ids bigint[], tokens uuid[]) FROM PUBLIC;

--
-- Name: FUNCTION release(job_id bigint, token uuid, delay interval); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.release(job_id bigint, token uuid, delay interval) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.release(job_id bigint, token uuid, delay interval) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.release(job_id bigint, token uuid, delay interval) TO taskboard_admin;

--
-- Name: FUNCTION remove_schedule(schedule text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.remove_schedule(schedule text) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.remove_schedule(schedule text) TO taskboard_admin;

--
-- Name: FUNCTION renew(job_id bigint, token uuid, lease interval); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.renew(job_id bigint, token uuid, lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.renew(job_id bigint, token uuid, lease interval) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.renew(job_id bigint, token uuid, lease interval) TO taskboard_admin;

--
-- Name: FUNCTION renew_many(job_ids bigint[], tokens uuid[], lease interval); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.renew_many(job_ids bigint[], tokens uuid[], lease interval) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.renew_many(job_ids bigint[], tokens uuid[], lease interval) TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.renew_many(job_ids bigint[], tokens uuid[], lease interval) TO taskboard_admin;

--
-- Name: FUNCTION resume(queue text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.resume(queue text) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.resume(queue text) TO taskboard_admin;

--
-- Name: FUNCTION retry(job_id bigint); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.retry(job_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.retry(job_id bigint) TO taskboard_admin;

--
-- Name: FUNCTION revert_losses(release text); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.revert_losses(release text) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.revert_losses(release text) TO taskboard_admin;

--
-- Name: FUNCTION set_limit(queue text, what text, value integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.set_limit(queue text, what text, value integer) FROM PUBLIC;

--
-- Name: FUNCTION set_key_limit(queue text, max_running_per_key integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.set_key_limit(queue text, max_running_per_key integer) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.set_key_limit(queue text, max_running_per_key integer) TO taskboard_admin;

--
-- Name: FUNCTION set_queue_discard(queue text, discard boolean); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.set_queue_discard(queue text, discard boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.set_queue_discard(queue text, discard boolean) TO taskboard_admin;

--
-- Name: FUNCTION set_queue_limit(queue text, max_running integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.set_queue_limit(queue text, max_running integer) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.set_queue_limit(queue text, max_running integer) TO taskboard_admin;

--
-- Name: FUNCTION set_rate_limit(queue text, starts integer, per interval, by_key boolean); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.set_rate_limit(queue text, starts integer, per interval, by_key boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.set_rate_limit(queue text, starts integer, per interval, by_key boolean) TO taskboard_admin;

--
-- Name: FUNCTION settle_dependents(job_ids bigint[]); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.settle_dependents(job_ids bigint[]) FROM PUBLIC;

--
-- Name: FUNCTION version(); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.version() FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.version() TO taskboard_producer;
GRANT ALL ON FUNCTION taskboard.version() TO taskboard_worker;
GRANT ALL ON FUNCTION taskboard.version() TO taskboard_admin;

--
-- Name: FUNCTION window_room(queue text, rate_starts integer, rate_per interval, clock timestamp with time zone); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.window_room(queue text, rate_starts integer, rate_per interval, clock timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION worker_leases(max_rows integer); Type: ACL; Schema: taskboard; Owner: -
--

REVOKE ALL ON FUNCTION taskboard.worker_leases(max_rows integer) FROM PUBLIC;
GRANT ALL ON FUNCTION taskboard.worker_leases(max_rows integer) TO taskboard_admin;

--
-- Name: TABLE queue_stats; Type: ACL; Schema: taskboard; Owner: -
--

GRANT SELECT ON TABLE taskboard.queue_stats TO taskboard_producer;
GRANT SELECT ON TABLE taskboard.queue_stats TO taskboard_worker;
GRANT SELECT ON TABLE taskboard.queue_stats TO taskboard_admin;

--
-- Name: TABLE schedules; Type: ACL; Schema: taskboard; Owner: -
--

GRANT SELECT ON TABLE taskboard.schedules TO taskboard_producer;
GRANT SELECT ON TABLE taskboard.schedules TO taskboard_worker;
GRANT SELECT ON TABLE taskboard.schedules TO taskboard_admin;

--
-- PostgreSQL database dump complete
--
