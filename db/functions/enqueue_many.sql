-- enqueue_many(task, payloads, queue, run_at, priority, max_attempts, dedupe_keys, trace_context, concurrency_keys) -> setof bigint
-- concurrency_keys pairs with payloads element by element: each job counts
-- toward its key's limit in the queue (taskboard.set_key_limit); a NULL
-- element or a NULL array: no key.
-- Enqueues one job of `task` per element of `payloads` in one round trip and
-- returns their ids in payload order. dedupe_keys pairs with payloads element
-- by element (a NULL element means no key) and behaves as in enqueue, scoped
-- to (queue, task, key): a key held by an unfinished job of the queue and
-- this task yields that job's id (a job of another task holding it does not
-- count), and a key repeated inside the array yields the id of its first
-- occurrence's job. Keys are inserted in key order, so concurrent calls with
-- overlapping keys wait for each other instead of deadlocking. A key held
-- by a job cancelled under a live lease (its held_until, see
-- taskboard.cancel) is no unfinished job's: a new job is inserted, runnable
-- no sooner than that lease's end.
-- trace_context (the caller's W3C trace context) is stored with every job
-- the call inserts, as in enqueue: one call is made in one context.
-- An empty array returns no rows. At most one NOTIFY per call, and only when
-- a new job is runnable now. Joins the caller's transaction.
-- Raises 22023 when task or queue is NULL, empty or longer than 200
-- characters, payloads is NULL, multidimensional or holds a NULL, dedupe_keys
-- has a different length or holds an empty string or a key longer than 400
-- characters, priority or max_attempts is NULL, max_attempts < 1, or run_at
-- is 'infinity' or '-infinity' or outside the years 1 to 9999 (before
-- 0001-01-01 or from 10000-01-01 on, UTC), or trace_context is not a JSON object of
-- strings or is longer than 8192 bytes as text, or concurrency_keys is
-- multidimensional, of another length than payloads, or holds an empty key
-- or one longer than 200 characters.
-- Raises 23505, writing nothing, when a key of dedupe_keys has the same
-- SHA-256 as a different key held by an unfinished job of the queue and task,
-- or as a different key of the same call (no such pair is known): the index
-- cannot tell the two apart, and the other job is not the answer.
-- Calls of the seven-argument form of 0.1.0 to 0.3.0 resolve to this one:
-- the argument it gained comes last, with a default.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.enqueue_many(task text, payloads jsonb[], queue text DEFAULT 'default'::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, dedupe_keys text[] DEFAULT NULL::text[], trace_context jsonb DEFAULT NULL::jsonb, concurrency_keys text[] DEFAULT NULL::text[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
$function$;

REVOKE ALL ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[]) TO taskboard_producer;
GRANT EXECUTE ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[]) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[]) TO taskboard_admin;
