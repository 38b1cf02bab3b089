/*
 * The lease protocol of taskboard.claim, renew, complete, fail, release,
 * cancel and retry (db/functions/), one job and NW workers, checked with Spin.
 *
 * Each SQL function is one atomic step here: PostgreSQL runs its UPDATE as
 * one compare-and-set on the job's row (row lock, then the WHERE re-checked
 * on the latest row version). Time is abstracted to what the guards compare:
 * how long a lease has left, in ticks (`left`: lease_expires_at - clock,
 * never below 0), decremented by `tick`. model/README.md maps each step to
 * its SQL file and the exact guard.
 *
 * Mutants (make model builds each with one -D): MUTANT_COMPLETE_BY_ID
 * (complete guarded by the id alone) and MUTANT_RENEW_EXPIRED (renew without
 * the lease_expires_at > clock test).
 */

#ifndef NW
#define NW 2            /* workers */
#endif
#define MAXATT 2        /* the job's max_attempts */
#define LEASE 2         /* a lease, in ticks */
#define CRASHES 2       /* worker crashes in a run (each forgets what it held) */
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

#define terminal (state == SUCCEEDED || state == DEAD || state == CANCELLED)
#define live(w) (held[w] != 0 && mine_left[w] > 0)

/* A worker that acts holds its token; success only with the current one. */
#define current(w) (state == RUNNING && token == held[w])

inline forget(w) {
    held[w] = 0;
    mine_left[w] = 0
}

/* claim: queued, or running with an expired lease; a spent one is buried. */
inline claim(w) {
    if
    :: (state == QUEUED && wait == 0) || (state == RUNNING && left == 0 && attempt < MAXATT) ->
        token = next_token; next_token++;
        left = LEASE;
        attempt++;
        fence++;
        assert(fence > last_fence);     /* the fence strictly increases per claim */
        last_fence = fence;
        state = RUNNING;
        held[w] = token;
        mine_left[w] = LEASE;
        renewed[w] = 0
    :: state == RUNNING && left == 0 && attempt >= MAXATT ->
        state = DEAD                    /* buried, not handed out */
    :: else -> skip                     /* nothing runnable */
    fi
}

/* renew: the current token, lease not expired. The answer may be lost. */
inline renew(w, lost) {
#ifdef MUTANT_RENEW_EXPIRED
    if
    :: current(w) ->
#else
    if
    :: current(w) && left > 0 ->
#endif
        assert(left > 0);               /* a renewal extends only a live lease */
        left = LEASE;
        if
        :: !lost -> mine_left[w] = LEASE
        :: else -> skip                 /* the worker keeps its older, earlier deadline */
        fi
    :: else -> forget(w)                /* not the holder: the driver gives the job up */
    fi
}

/* complete: the current token, whatever the lease (an expired lease nobody
 * reclaimed is still the holder's). Asked again by the same holder after its
 * own success, it answers true without changing anything. */
inline complete(w) {
#ifdef MUTANT_COMPLETE_BY_ID
    if
    :: state == RUNNING ->
#else
    if
    :: current(w) ->
#endif
        assert(token == held[w]);       /* only the current token completes */
        state = SUCCEEDED;
        ever_succeeded = true
    :: else -> skip
    fi;
    forget(w)
}

/* fail: the current token; retry or dead when out of attempts (or not retryable). */
inline fail(w, retryable) {
    if
    :: current(w) ->
        assert(token == held[w]);
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
        assert(token == held[w]);
        state = QUEUED;
        attempt--
    :: else -> skip
    fi;
    forget(w)
}

proctype worker(byte w) {
    do
    :: atomic { held[w] == 0 -> claim(w) }
    :: atomic { held[w] != 0 && renewed[w] < RENEWS -> renewed[w]++; renew(w, false) }
    :: atomic { held[w] != 0 && renewed[w] < RENEWS -> renewed[w]++; renew(w, true) }
    :: atomic { held[w] != 0 -> complete(w) }
    :: atomic { held[w] != 0 -> fail(w, true) }
    :: atomic { held[w] != 0 -> fail(w, false) }
    :: atomic { held[w] != 0 && releases < RELEASES -> releases++; release(w) }
    :: atomic { w > 0 && crashes < CRASHES -> crashes++; forget(w) }  /* worker 0 keeps running */
    od
}

/* The clock: every lease's time left goes down by one, the database's and each worker's. */
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
    do
    :: atomic { admin < ADMIN && (state == QUEUED || state == RUNNING) ->
                admin++; state = CANCELLED }
    :: atomic { admin < ADMIN && (state == DEAD || state == CANCELLED) ->
                admin++; state = QUEUED; attempt = 0;
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
#if NW == 2
#define exclusive mutex(0, 1)
#elif NW == 3
#define exclusive (mutex(0, 1) && mutex(0, 2) && mutex(1, 2))
#endif
#define invariant (attempt <= MAXATT && (!ever_succeeded || state == SUCCEEDED) && exclusive)

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
