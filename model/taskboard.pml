/*
 * The lease protocol of taskboard.claim, renew, complete, fail, release,
 * cancel and retry (db/functions/), one job and NW workers, checked with Spin.
 *
 * Each SQL function is one atomic step here: PostgreSQL runs its UPDATE as
 * one compare-and-set on the job's row (row lock, then the WHERE re-checked
 * on the latest row version). Time is abstracted to what the guards compare:
 * how long a lease has left, in ticks (`left`: lease_expires_at - clock,
 * never below 0) and how long until a queued job is due (`wait`), both
 * ticked down by `clock`. model/README.md maps each step to its SQL file
 * and the exact guard.
 *
 * Mutants (check.sh builds each with one -D, and with -DNO_STEP_ASSERTS so
 * that only the global properties can catch it): MUTANT_COMPLETE_BY_ID,
 * MUTANT_RENEW_EXPIRED, MUTANT_CLAIM_LIVE, MUTANT_FAIL_ANY_TOKEN,
 * MUTANT_COMPLETE_ANY_STATE, MUTANT_RETRY_RESETS_FENCE.
 */

#ifndef NW
#define NW 2            /* workers */
#endif
#ifndef MAXATT
#define MAXATT 3        /* the job's max_attempts */
#endif
#define LEASE 2         /* a lease, in ticks */
#define CRASHES 2       /* worker crashes (restarts) in a run: each forgets what it held */
#define RELEASES 1      /* releases in a run (release gives the attempt back: unbounded, no end) */
#define RENEWS 2        /* renewals of one claim: every handler ends */
#ifndef ADMIN
#define ADMIN 2         /* cancels plus retries in a run */
#endif

mtype = { QUEUED, RUNNING, SUCCEEDED, DEAD, CANCELLED };

/* The job's row. */
mtype state = QUEUED;
byte token = 0;         /* lease_token: 0 none; a fresh value at every claim */
byte left = 0;          /* lease_expires_at - clock, 0 once expired */
byte wait = 0;          /* run_at - clock for a queued job, 0 once due */
byte attempt = 0;
byte fence = 0;

byte next_token = 1;

/* What each worker believes: the token it holds (0: none) and its lease's time left. */
byte held[NW];
byte mine_left[NW];
byte renewed[NW];       /* renewals asked for this claim */

/* Budgets that let a run end, and ghosts for the properties. */
byte crashes = 0;
byte releases = 0;
byte admin = 0;
byte last_fence = 0;
bool ever_succeeded = false;
bool revoked[NW];       /* an operator cancelled the job while this worker held it */
mtype before;           /* the job's state before the step being taken */

#define terminal (state == SUCCEEDED || state == DEAD || state == CANCELLED)
#define live(w) (held[w] != 0 && mine_left[w] > 0)

/* A worker that acts holds its token; success only with the current one. */
#define current(w) (state == RUNNING && token == held[w])

#ifdef NO_STEP_ASSERTS
#define step_assert(e) skip
#else
#define step_assert(e) assert(e)
#endif

inline forget(w) {
    held[w] = 0;
    mine_left[w] = 0;
    revoked[w] = false
}

/* Dead and cancelled change only by retry: checked after every worker step. */
inline terminal_kept() {
    assert(!(before == DEAD || before == CANCELLED) || state == before)
}

/* claim: queued and due, or running with an expired lease; a spent one is buried. */
inline claim(w) {
    if
#ifdef MUTANT_CLAIM_LIVE
    :: (state == QUEUED && wait == 0) || (state == RUNNING && attempt < MAXATT) ->
#else
    :: (state == QUEUED && wait == 0) || (state == RUNNING && left == 0 && attempt < MAXATT) ->
#endif
        token = next_token; next_token++;
        left = LEASE;
        attempt++;
        fence++;
        assert(fence > last_fence);     /* the fence strictly increases per claim */
        last_fence = fence;
        state = RUNNING;
        held[w] = token;
        mine_left[w] = LEASE;
        renewed[w] = 0;
        revoked[w] = false
    :: state == RUNNING && left == 0 && attempt >= MAXATT ->
        state = DEAD                    /* buried, not handed out */
    :: else -> skip                     /* nothing runnable */
    fi
}

/* renew: the current token, lease not expired. The answer may be lost. */
inline renew(w, lost) {
    if
#ifdef MUTANT_RENEW_EXPIRED
    :: current(w) ->
#else
    :: current(w) && left > 0 ->
#endif
        /* renew's contract: it extends only a live lease (an expired one is
         * reclaimable: its holder must claim again) */
        assert(left > 0);
        left = LEASE;
        if
        :: !lost -> mine_left[w] = LEASE
        :: else -> skip                 /* the worker keeps its older, earlier deadline */
        fi
    :: else -> forget(w)                /* not the holder: the driver gives the job up */
    fi
}

/* complete: the current token, whatever the lease (an expired lease nobody
 * reclaimed is still the holder's). */
inline complete(w) {
    if
#if defined(MUTANT_COMPLETE_BY_ID)
    :: state == RUNNING ->
#elif defined(MUTANT_COMPLETE_ANY_STATE)
    :: token == held[w] ->
#else
    :: current(w) ->
#endif
        step_assert(token == held[w]);
        state = SUCCEEDED;
        ever_succeeded = true
    :: else -> skip
    fi;
    forget(w)
}

/* fail: the current token; queued again, or dead when not retryable or out of attempts. */
inline fail(w, retryable) {
    if
#ifdef MUTANT_FAIL_ANY_TOKEN
    :: state == RUNNING ->
#else
    :: current(w) ->
#endif
        step_assert(token == held[w]);
        if
        :: retryable && attempt < MAXATT -> state = QUEUED
        :: else -> state = DEAD
        fi
    :: else -> skip
    fi;
    forget(w)
}

/* release: the current token; back to queued, the attempt given back. */
inline release(w) {
    if
    :: current(w) ->
        step_assert(token == held[w]);
        state = QUEUED;
        attempt--
    :: else -> skip
    fi;
    forget(w)
}

proctype worker(byte w) {
    do
    :: atomic { held[w] == 0 -> before = state; claim(w); terminal_kept() }
    :: atomic { held[w] != 0 && renewed[w] < RENEWS ->
                renewed[w]++; before = state; renew(w, false); terminal_kept() }
    :: atomic { held[w] != 0 && renewed[w] < RENEWS ->
                renewed[w]++; before = state; renew(w, true); terminal_kept() }
    :: atomic { held[w] != 0 -> before = state; complete(w); terminal_kept() }
    :: atomic { held[w] != 0 -> before = state; fail(w, true); terminal_kept() }
    :: atomic { held[w] != 0 -> before = state; fail(w, false); terminal_kept() }
    :: atomic { held[w] != 0 && releases < RELEASES ->
                releases++; before = state; release(w); terminal_kept() }
    :: atomic { crashes < CRASHES -> crashes++; forget(w) }     /* a crash and restart */
    od
}

/* The clock: every time left goes down by one, the database's and each worker's. */
active proctype clock() {
    byte i;
    do
    :: atomic {
        if
        :: left > 0 -> left--
        :: else -> skip
        fi;
        if
        :: wait > 0 -> wait--
        :: else -> skip
        fi;
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

/* An operator: cancel (queued or running) and retry (dead or cancelled), a few times. */
active proctype operator() {
    byte i;
    do
    :: atomic { admin < ADMIN && (state == QUEUED || state == RUNNING) ->
                admin++;
                for (i : 0 .. NW - 1) {
                    if
                    :: state == RUNNING && held[i] == token -> revoked[i] = true
                    :: else -> skip
                    fi
                }
                i = 0;
                state = CANCELLED }
    :: atomic { admin < ADMIN && (state == DEAD || state == CANCELLED) ->
                admin++; state = QUEUED; attempt = 0;
#ifdef MUTANT_RETRY_RESETS_FENCE
                fence = 0;
#endif
#ifdef RETRY_WAITS_FOR_LEASE
                wait = left             /* due once a lease cancelled while live has ended */
#else
                wait = 0                /* due at once */
#endif
              }
    od
}

/* Safety, in every state: the monitor blocks until the invariant is false, then fails. */
#define mutex(a, b) (!(live(a) && live(b)))
/* A live belief is the current holder's, unless an operator cancelled under it. */
#define kept(w) (!live(w) || (state == RUNNING && token == held[w]) || revoked[w])
/* A worker never believes its lease outlasts the database's. */
#define behind(w) (held[w] != token || mine_left[w] <= left)
#if NW == 2
#define exclusive (mutex(0, 1))
#define each_worker (kept(0) && kept(1) && behind(0) && behind(1))
#elif NW == 3
#define exclusive (mutex(0, 1) && mutex(0, 2) && mutex(1, 2))
#define each_worker (kept(0) && kept(1) && kept(2) && behind(0) && behind(1) && behind(2))
#endif
#define invariant (attempt <= MAXATT && (!ever_succeeded || state == SUCCEEDED) && exclusive && each_worker)

active proctype safety() {
    atomic { !invariant -> assert(invariant) }
}

init {
    byte w;
    atomic {
        for (w : 0 .. NW - 1) {
            run worker(w)
        }
    }
}

/* Liveness, under weak fairness: a job that is not finished finishes. */
ltl finishes { [] (!terminal -> <> terminal) }
