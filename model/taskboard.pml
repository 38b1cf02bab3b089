/*
 * The lease protocol of taskboard.claim, renew, complete, fail, release,
 * cancel, retry, pause, resume and set_queue_limit (db/functions/): NJ jobs
 * of one queue and NW workers, checked with Spin. With KEYLIMIT, the queue
 * has a limit per concurrency key (set_key_limit) and its jobs carry keys.
 *
 * Each SQL function is one atomic step here: PostgreSQL runs its UPDATE as
 * one compare-and-set on the job's row (row lock, then the WHERE re-checked
 * on the latest row version), and a claim of a limited queue holds the
 * queue's row while it counts. Time is abstracted to what the guards
 * compare: how long a lease has left, in ticks (`left`: lease_expires_at -
 * clock, never below 0) and how long until a queued job is due (`wait`),
 * both ticked down by `clock`. model/README.md maps each step to its SQL
 * file and the exact guard.
 *
 * Mutants (check.sh builds each with one -D, and with -DNO_STEP_ASSERTS so
 * that only the properties, not an assert restating a step's own guard, can
 * catch it): MUTANT_COMPLETE_BY_ID, MUTANT_RENEW_EXPIRED, MUTANT_CLAIM_LIVE,
 * MUTANT_FAIL_ANY_TOKEN, MUTANT_COMPLETE_ANY_STATE, MUTANT_RETRY_RESETS_FENCE,
 * MUTANT_RETRY_AT_ONCE (retry as in 0.4.1), MUTANT_REPEAT_ANY_TOKEN,
 * MUTANT_CLAIM_PAUSED, MUTANT_LIMIT_COUNTS_LIVE, MUTANT_CANCEL_FREES (a
 * cancel frees the job's place under the limit at once),
 * MUTANT_KEY_COUNTS_RUNNING (a key's holders are only its running jobs
 * whose lease is live), MUTANT_KEY_NO_TURNS (claimers count a key's holders
 * without taking turns on the queue's row), MUTANT_KEY_BLOCKS_QUEUE (a full
 * key holds back every queued job); and for liveness, MUTANT_NEVER_BURIES.
 */

#ifndef NW
#define NW 2            /* workers */
#endif
#ifndef NJ
#define NJ 1            /* jobs, all in one queue: 1, 2 or 3 */
#endif
#ifndef MAXATT
#define MAXATT 3        /* each job's max_attempts */
#endif
#define LEASE 2         /* a lease, in ticks */
#ifndef CRASHES
#define CRASHES 2       /* worker crashes (restarts) in a run: each forgets what it held */
#endif
#ifndef RELEASES
#define RELEASES 1      /* releases in a run (release gives the attempt back: unbounded, no end) */
#endif
#ifndef RENEWS
#define RENEWS 2        /* renewals of one claim: every handler ends */
#endif
#ifndef ADMIN
#define ADMIN 2         /* cancels plus retries in a run */
#endif
#ifndef CONTROL
#define CONTROL 0       /* pauses, resumes and limit changes in a run */
#endif
#ifndef LIMIT
#define LIMIT 0         /* the queue's max_running at the start (0: none) */
#endif
#ifndef KEYLIMIT
#define KEYLIMIT 0      /* the queue's max_running_per_key (0: none) */
#endif

/* Each job's concurrency_key (with KEYLIMIT): jobs 0 and 1 have key 0,
 * job 2 key 1. */
#define key_of(j) ((j) == 2 -> 1 : 0)
#define NK 2

mtype = { QUEUED, RUNNING, SUCCEEDED, DEAD, CANCELLED };

/* The jobs' rows. */
mtype state[NJ] = QUEUED;
byte token[NJ];         /* lease_token: 0 none; a fresh value at every claim of the job */
byte left[NJ];          /* lease_expires_at - clock, 0 once expired */
byte wait[NJ];          /* run_at - clock for a queued job, 0 once due */
byte attempt[NJ];
byte fence[NJ];
byte hold[NJ];          /* held_until - clock, 0 once past or never set (cancel) */

/* The queue's row. */
bool paused = false;
byte limit = LIMIT;     /* max_running, 0: none */

/* What each worker believes: the job it holds (one claim at a time, batch 1),
 * the token it was given (0: none) and its lease's time left. */
byte job[NW];
byte held[NW];
byte mine_left[NW];
byte renewed[NW];       /* renewals asked for this claim */
bool again[NW];         /* its complete's answer was lost: it asks again, nothing else */

/* Budgets that let a run end, and ghosts for the properties. */
byte crashes = 0;
byte releases = 0;
byte admin = 0;
byte control = 0;
byte last_fence[NJ];
byte succeeded_by[NJ];  /* the token that completed the job, 0: none */
bool revoked[NW];       /* an operator cancelled the job while this worker held it */
mtype before[NJ];       /* each job's state before the step being taken */

#define terminal(j) (state[j] == SUCCEEDED || state[j] == DEAD || state[j] == CANCELLED)
#if NJ == 1
#define finished (terminal(0))
#elif NJ == 2
#define finished (terminal(0) && terminal(1))
#else
#define finished (terminal(0) && terminal(1) && terminal(2))
#endif
#define live(w) (held[w] != 0 && mine_left[w] > 0)
/* Workers that believe they hold a live lease, one cancelled under them included. */
#define believes(w) (live(w) -> 1 : 0)
#if NW == 2
#define live_holders (believes(0) + believes(1))
#elif NW == 3
#define live_holders (believes(0) + believes(1) + believes(2))
#endif

/* A worker that acts holds its token; success only with the current one. */
#define current(w) (state[job[w]] == RUNNING && token[job[w]] == held[w])

/* An expired lease with no attempt left: claim buries it; it counts for no limit. */
#define doomed(j) (state[j] == RUNNING && left[j] == 0 && attempt[j] >= MAXATT)
#define reclaimable(j) (state[j] == RUNNING && left[j] == 0 && attempt[j] < MAXATT)
#define due(j) (state[j] == QUEUED && wait[j] == 0)
#define is_running(j) (state[j] == RUNNING -> 1 : 0)
#define can_cancel(j) (state[j] == QUEUED || state[j] == RUNNING)
#define can_retry(j) (state[j] == DEAD || state[j] == CANCELLED)
#if NJ == 1
#define running_now (is_running(0))
#define cancellable (can_cancel(0))
#define retriable (can_retry(0))
#elif NJ == 2
#define running_now (is_running(0) + is_running(1))
#define cancellable (can_cancel(0) || can_cancel(1))
#define retriable (can_retry(0) || can_retry(1))
#else
#define running_now (is_running(0) + is_running(1) + is_running(2))
#define cancellable (can_cancel(0) || can_cancel(1) || can_cancel(2))
#define retriable (can_retry(0) || can_retry(1) || can_retry(2))
#endif

/* A key has room when fewer than the key limit of its jobs hold a place
 * (counted by claim into `holders`), or when there is no key limit. */
#if KEYLIMIT > 0
#define key_room(j) (holders[key_of(j)] < KEYLIMIT)
#else
#define key_room(j) true
#endif

#ifdef NO_STEP_ASSERTS
#define step_assert(e) skip
#else
#define step_assert(e) assert(e)
#endif

inline forget(w) {
    held[w] = 0;
    mine_left[w] = 0;
    revoked[w] = false;
    again[w] = false
}

inline remember() {
    for (j : 0 .. NJ - 1) { before[j] = state[j] }
    j = 0
}

/* Dead and cancelled change only by retry: checked after every worker step. */
inline terminal_kept() {
    for (j : 0 .. NJ - 1) {
        assert(!(before[j] == DEAD || before[j] == CANCELLED) || state[j] == before[j]);
        before[j] = 0
    }
    j = 0
}

/* A requeued job is due at once or later (release's delay, fail's retry_in). */
inline requeue(k) {
    state[k] = QUEUED;
    if
    :: wait[k] = 0
    :: wait[k] = 1
    fi
}

/* A key's holders, counted before the burying as the SQL does (its full
 * keys are read before the statement that buries): its running jobs, an
 * expired lease included until the job is reclaimed or finished, and its
 * jobs cancelled under a lease not yet ended (held_until ahead). */
inline count_holders() {
    for (j : 0 .. NJ - 1) {
        if
#ifdef MUTANT_KEY_COUNTS_RUNNING
        :: state[j] == RUNNING && left[j] > 0 -> holders[key_of(j)]++
#else
        :: state[j] == RUNNING || hold[j] > 0 -> holders[key_of(j)]++
#endif
        :: else -> skip
        fi
    }
    j = 0
}

/* What a claim may take: an expired lease with attempts left (`takes_over`)
 * or a due job while the queue and the job's key have room (`can_start`);
 * `starts` is what the claim does, `startable` what its contract expects. */
#ifdef MUTANT_CLAIM_LIVE
#define takes_over(j) (state[j] == RUNNING && attempt[j] < MAXATT)
#else
#define takes_over(j) (reclaimable(j))          /* whatever its key: it already holds a place */
#endif
#define can_start(j) (due(j) && room && !paused && key_room(j))
#ifdef MUTANT_KEY_BLOCKS_QUEUE
/* a full key holds back every queued job of the queue */
#define starts(j) (can_start(j) && holders[0] < KEYLIMIT && holders[1] < KEYLIMIT)
#else
#define starts(j) (can_start(j))
#endif
#if NJ == 1
#define startable (can_start(0))
#elif NJ == 2
#define startable (can_start(0) || can_start(1))
#else
#define startable (can_start(0) || can_start(1) || can_start(2))
#endif

/* claim: nothing from a paused queue; else bury every spent lease, then take
 * one job: an expired lease with attempts left, or a queued job that is due
 * while fewer than the limit run and, under a key limit, fewer than the key
 * limit of its key's jobs hold a place. Which one, when several could be
 * taken, is left open (the SQL orders by priority, run_at, id). */
inline claim(w) {
#ifdef MUTANT_CLAIM_PAUSED
    /* pause only stops new starts; expired leases are still reclaimed */
#else
    if
    :: paused -> goto claimed
    :: else -> skip
    fi;
#endif
#if KEYLIMIT > 0 && !defined(MUTANT_KEY_NO_TURNS)
    count_holders();        /* the claimer holds the queue's row: no claim in between */
#endif
    for (j : 0 .. NJ - 1) {
        if
#ifndef MUTANT_NEVER_BURIES
        :: doomed(j) -> state[j] = DEAD         /* buried, not handed out */
#endif
        :: else -> skip
        fi
    }
    running = 0;
    for (j : 0 .. NJ - 1) {
        if
#ifdef MUTANT_LIMIT_COUNTS_LIVE
        :: state[j] == RUNNING && left[j] > 0 -> running++
#else
        :: state[j] == RUNNING -> running++
#endif
#ifndef MUTANT_CANCEL_FREES
        /* a place a cancel left held: held_until still ahead */
        :: state[j] != RUNNING && hold[j] > 0 -> running++
#endif
        :: else -> skip
        fi
    }
    room = (limit == 0 || running < limit);
    pick = NJ;
    if
    :: takes_over(0) -> pick = 0
    :: starts(0) -> pick = 0
#if NJ >= 2
    :: takes_over(1) -> pick = 1
    :: starts(1) -> pick = 1
#endif
#if NJ == 3
    :: takes_over(2) -> pick = 2
    :: starts(2) -> pick = 2
#endif
    :: else -> skip                             /* nothing runnable */
    fi;
    /* claim's contract: it comes back empty only when no job is runnable
     * for it; under a key limit, a full key holds back only its own jobs */
    assert(pick < NJ || !startable);
    if
    :: pick < NJ ->
        /* nothing is handed out from a paused queue */
        assert(!paused);
        started = (state[pick] == QUEUED);
        left[pick] = LEASE;
        attempt[pick]++;
        fence[pick]++;
        assert(fence[pick] > last_fence[pick]);  /* the fence strictly increases per claim */
        last_fence[pick] = fence[pick];
        token[pick] = fence[pick];              /* fresh: no claim of this job had it */
        state[pick] = RUNNING;
        job[w] = pick;
        held[w] = token[pick];
        mine_left[w] = LEASE;
        renewed[w] = 0;
        revoked[w] = false;
        /* a claim that starts a queued job never leaves more running than the limit */
        assert(!started || limit == 0 || running_now <= limit);
        /* nor more workers believing a live lease, a cancelled holder's included */
        assert(limit == 0 || !started || live_holders <= limit);
        started = false;
        pick = 0
    :: else -> pick = 0
    fi;
claimed:
    j = 0;
    running = 0;
#if KEYLIMIT > 0
    holders[0] = 0;
    holders[1] = 0;
#endif
    room = false
}

/* renew: the current token, lease not expired. The answer may be lost. */
inline renew(w, lost) {
    if
#ifdef MUTANT_RENEW_EXPIRED
    :: current(w) ->
#else
    :: current(w) && left[job[w]] > 0 ->
#endif
        /* renew's contract: it extends only a live lease (an expired one is
         * reclaimable: its holder must claim again) */
        assert(left[job[w]] > 0);
        /* and never a lease an operator cancelled: the refusal is how the
         * holder learns of the cancel */
        assert(!revoked[w]);
        left[job[w]] = LEASE;
        if
        :: !lost -> mine_left[w] = LEASE
        :: else -> skip                 /* the worker keeps its older, earlier deadline */
        fi
    :: else -> forget(w)                /* not the holder: the driver gives the job up */
    fi
}

/* complete: the current token, whatever the lease (an expired lease nobody
 * reclaimed is still the holder's). Asked again with the same token after
 * its own success, it answers true again. The answer may be lost: the
 * worker then asks again. */
inline complete(w, lost) {
    was_current = current(w);
    if
#if defined(MUTANT_COMPLETE_BY_ID)
    :: state[job[w]] == RUNNING ->
#elif defined(MUTANT_COMPLETE_ANY_STATE)
    :: token[job[w]] == held[w] && state[job[w]] != SUCCEEDED ->
#else
    :: current(w) ->
#endif
        step_assert(token[job[w]] == held[w]);
        state[job[w]] = SUCCEEDED;
        succeeded_by[job[w]] = held[w]
    :: else -> skip
    fi;
    /* complete's contract: the current token completes, whatever its lease */
    assert(!was_current || (state[job[w]] == SUCCEEDED && succeeded_by[job[w]] == held[w]));
    was_current = false;
    if
    :: lost ->
        again[w] = true;                /* it asks again, with the same token */
        mine_left[w] = 0                /* its handler has ended: only the answer is awaited */
    :: else ->
        if
#ifdef MUTANT_REPEAT_ANY_TOKEN
        :: state[job[w]] == SUCCEEDED ->
#else
        :: state[job[w]] == SUCCEEDED && token[job[w]] == held[w] ->
#endif
            /* complete's contract: true only for the token that completed
             * the job (the driver then reports it succeeded) */
            assert(succeeded_by[job[w]] == held[w])
        :: else -> skip
        fi;
        forget(w)
    fi
}

/* fail: the current token; queued again, or dead when not retryable or out of attempts. */
inline fail(w, retryable) {
    if
#ifdef MUTANT_FAIL_ANY_TOKEN
    :: state[job[w]] == RUNNING ->
#else
    :: current(w) ->
#endif
        step_assert(token[job[w]] == held[w]);
        if
        :: retryable && attempt[job[w]] < MAXATT -> requeue(job[w])
        :: else -> state[job[w]] = DEAD
        fi
    :: else -> skip
    fi;
    forget(w)
}

/* release: the current token; back to queued, the attempt given back. */
inline release(w) {
    if
    :: current(w) ->
        step_assert(token[job[w]] == held[w]);
        requeue(job[w]);
        attempt[job[w]]--
    :: else -> skip
    fi;
    forget(w)
}

byte running;           /* scratch of claim, reset after each step */
#if KEYLIMIT > 0
byte holders[NK];       /* each key's holders */
#endif
#ifdef MUTANT_KEY_NO_TURNS
byte seen[NW * NK];     /* the holders each worker counted before it claims */
bool counted[NW];
#endif
bool room;
byte pick;
bool started;
bool was_current;

/* The workers are the first processes: worker w runs as process w. */
active [NW] proctype worker() {
    byte w = _pid;
    byte j;
    do
#ifdef MUTANT_KEY_NO_TURNS
    /* claimers count a key's holders without taking turns on the queue's
     * row: another claim may start a job between the count and the take */
    :: atomic { held[w] == 0 && !counted[w] ->
                count_holders();
                seen[w * NK] = holders[0]; seen[w * NK + 1] = holders[1];
                holders[0] = 0; holders[1] = 0;
                counted[w] = true }
    :: atomic { held[w] == 0 && counted[w] ->
                holders[0] = seen[w * NK]; holders[1] = seen[w * NK + 1];
                seen[w * NK] = 0; seen[w * NK + 1] = 0;
                counted[w] = false;
                remember(); claim(w); terminal_kept() }
#else
    :: atomic { held[w] == 0 -> remember(); claim(w); terminal_kept() }
#endif
    :: atomic { held[w] != 0 && !again[w] && renewed[w] < RENEWS ->
                renewed[w]++; remember(); renew(w, false); terminal_kept() }
    :: atomic { held[w] != 0 && !again[w] && renewed[w] < RENEWS ->
                renewed[w]++; remember(); renew(w, true); terminal_kept() }
    :: atomic { held[w] != 0 -> remember(); complete(w, false); terminal_kept() }
    :: atomic { held[w] != 0 && !again[w] -> remember(); complete(w, true); terminal_kept() }
    :: atomic { held[w] != 0 && !again[w] -> remember(); fail(w, true); terminal_kept() }
    :: atomic { held[w] != 0 && !again[w] -> remember(); fail(w, false); terminal_kept() }
    :: atomic { held[w] != 0 && !again[w] && releases < RELEASES ->
                releases++; remember(); release(w); terminal_kept() }
    :: atomic { crashes < CRASHES -> crashes++; forget(w) }     /* a crash and restart */
    od
}

/* The clock: every time left goes down by one, the database's and each worker's. */
active proctype clock() {
    byte i;
    do
    :: atomic {
        for (i : 0 .. NJ - 1) {
            if
            :: left[i] > 0 -> left[i]--
            :: else -> skip
            fi;
            if
            :: wait[i] > 0 -> wait[i]--
            :: else -> skip
            fi;
            if
            :: hold[i] > 0 -> hold[i]--
            :: else -> skip
            fi
        }
        for (i : 0 .. NW - 1) {
            if
            :: mine_left[i] > 0 -> mine_left[i]--
            :: else -> skip
            fi
        }
        i = 0
    }
    od
}

/* An operator: cancel (queued or running) and retry (dead or cancelled) a
 * job, a few times; pause, resume and set or lift the queue's limit. */
#if ADMIN > 0 || CONTROL > 0
active proctype operator() {
    byte i, k;
    do
    :: atomic { admin < ADMIN && cancellable ->
                if
                :: state[0] == QUEUED || state[0] == RUNNING -> k = 0
#if NJ >= 2
                :: state[1] == QUEUED || state[1] == RUNNING -> k = 1
#endif
#if NJ == 3
                :: state[2] == QUEUED || state[2] == RUNNING -> k = 2
#endif
                fi;
                admin++;
                for (i : 0 .. NW - 1) {
                    if
                    :: held[i] != 0 && job[i] == k && state[k] == RUNNING && held[i] == token[k] ->
                        revoked[i] = true
                    :: else -> skip
                    fi
                }
                i = 0;
                if              /* held_until: the deadline of a live lease cancelled */
                :: state[k] == RUNNING && left[k] > 0 -> hold[k] = left[k]
                :: else -> skip
                fi;
                state[k] = CANCELLED;
                k = 0 }
    :: atomic { admin < ADMIN && retriable ->
                if
                :: state[0] == DEAD || state[0] == CANCELLED -> k = 0
#if NJ >= 2
                :: state[1] == DEAD || state[1] == CANCELLED -> k = 1
#endif
#if NJ == 3
                :: state[2] == DEAD || state[2] == CANCELLED -> k = 2
#endif
                fi;
                admin++;
#ifdef MUTANT_RETRY_AT_ONCE
                wait[k] = 0;            /* due at once (0.4.1) */
#else
                wait[k] = hold[k];      /* due once a lease cancelled while live has ended */
#endif
                state[k] = QUEUED; attempt[k] = 0;
#ifdef MUTANT_RETRY_RESETS_FENCE
                fence[k] = 0;
#endif
                k = 0 }
    :: atomic { control < CONTROL && !paused -> control++; paused = true }
    :: atomic { control < CONTROL && paused -> control++; paused = false }
    :: atomic { control < CONTROL && LIMIT > 0 && limit == 0 -> control++; limit = LIMIT }
    :: atomic { control < CONTROL && limit > 0 -> control++; limit = 0 }
    :: atomic { admin < ADMIN || control < CONTROL ->      /* the operator is done */
                admin = ADMIN; control = CONTROL }
    od
}
#endif

/* Safety, in every state: the monitor blocks until the invariant is false, then fails. */
#define mutex(a, b) (!(live(a) && live(b) && job[a] == job[b]))
/* A live belief is the current holder's, unless an operator cancelled under it. */
#define kept(w) (!live(w) || (state[job[w]] == RUNNING && token[job[w]] == held[w]) || revoked[w])
/* A worker never believes its lease outlasts the database's. */
#define behind(w) (held[w] != token[job[w]] || mine_left[w] <= left[job[w]])
#define worker_ok(w) (kept(w) && behind(w))
/* Attempts within max_attempts; a succeeded job stays succeeded. */
#define job_ok(j) (attempt[j] <= MAXATT && (succeeded_by[j] == 0 || state[j] == SUCCEEDED))
#if NW == 2
#define exclusive (mutex(0, 1))
#define each_worker (worker_ok(0) && worker_ok(1))
#elif NW == 3
#define exclusive (mutex(0, 1) && mutex(0, 2) && mutex(1, 2))
#define each_worker (worker_ok(0) && worker_ok(1) && worker_ok(2))
#endif
#if NJ == 1
#define each_job (job_ok(0))
#elif NJ == 2
#define each_job (job_ok(0) && job_ok(1))
#else
#define each_job (job_ok(0) && job_ok(1) && job_ok(2))
#endif
#define invariant (each_job && exclusive && each_worker)

/* Under a key limit: never more than the limit of one key's jobs hold a
 * live lease. A job's lease is live while it has not expired; a job
 * cancelled under a live lease holds it until held_until (`hold`), retried
 * since or not, as its worker may still be running it. Nor more workers
 * than the limit believe they hold a live lease on one key's jobs. */
#if KEYLIMIT > 0
#define lease_live(j) ((state[j] == RUNNING && left[j] > 0) || (state[j] != RUNNING && hold[j] > 0))
#define live_of(j, k) ((key_of(j) == k && lease_live(j)) -> 1 : 0)
#define believes_of(w, k) ((live(w) && key_of(job[w]) == k) -> 1 : 0)
#if NJ == 2
#define live_in_key(k) (live_of(0, k) + live_of(1, k))
#else
#define live_in_key(k) (live_of(0, k) + live_of(1, k) + live_of(2, k))
#endif
#if NW == 2
#define believers_in_key(k) (believes_of(0, k) + believes_of(1, k))
#else
#define believers_in_key(k) (believes_of(0, k) + believes_of(1, k) + believes_of(2, k))
#endif
#define key_ok(k) (live_in_key(k) <= KEYLIMIT && believers_in_key(k) <= KEYLIMIT)
#define per_key (key_ok(0) && key_ok(1))
#else
#define per_key true
#endif

#ifndef LIVENESS
active proctype safety() {
    atomic { !(invariant && per_key) -> assert(invariant); assert(per_key) }
}
#endif

/* Liveness, under weak fairness: every job ends up finished, unless the
 * operator leaves the queue paused. */
ltl finishes { <> [] (finished || paused) }
