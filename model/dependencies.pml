/*
 * The dependency-edge protocol: ND dependencies D (1 or 2) and NX
 * dependents X (1 or 2); X 0 depends on every D, X 1 on D 0 only. Each X
 * is enqueued by its own producer transaction (enqueue_waiting), each D is
 * ended once, succeeded or dead, by another transaction (complete, fail,
 * cancel or claim's burial, which call settle_dependents), and NF fix-ups
 * (inside claim) work through the check rows. Checked with Spin.
 *
 * Each SQL statement is one atomic step, and a commit is one atomic switch
 * of what the others see: the committed state is what the globals below
 * hold; a transaction's own writes stay in its variables (e_*, s_*) until
 * it commits. Row locks are modelled where a statement waits on one or
 * skips it: the end of D holds D's row (`inflight`, from its UPDATE to its
 * commit: a fix-up's SKIP LOCKED read skips it, enqueue's KEY SHARE read
 * does not wait for it) and the rows of the dependents it locked (`xlock`,
 * FOR NO KEY UPDATE SKIP LOCKED, until its commit). A settle never waits:
 * a dependent whose row another transaction holds (another end in flight,
 * an admin's cancel or retry of it) is skipped, its edges left and its
 * count untouched, and the ended D gets a D-side check row. An admin's
 * cancel or retry waits for the dependent's row. A fix-up's settle is one
 * step, its commit included: a second settle of the same edge waits on the
 * edge's row, then finds it gone. model/README.md maps each step to its
 * SQL.
 *
 * Options: RR (each end of D may run in REPEATABLE READ: its settle reads
 * the edges of its snapshot, taken at its start, and it inserts a D-side
 * check row), BOUND (an end settles at most BOUND edges inline and leaves
 * the rest to a D-side check row; 0: no bound), RUN (a dependent may be
 * enqueued with on_dependency_failure 'run'), SABORTS (ends of D that roll
 * back, then run again), NF (fix-ups), ADMIN (1: an admin may cancel X 0
 * while it waits, commit or roll back, and retry it once it is cancelled,
 * each holding X 0's row from its statement to its end).
 *
 * Mutants (check.sh builds each with -DNO_STEP_ASSERTS): MUTANT_NO_XCHECK
 * (enqueue inserts no X-side check row), MUTANT_NO_SKIP (a fix-up reads D's
 * committed state through an in-flight end and takes it as final),
 * MUTANT_RR_NO_DCHECK (an end in REPEATABLE READ inserts no D-side check
 * row), MUTANT_BOUND_NO_DCHECK (an end that settled BOUND edges inline
 * leaves the rest to nobody), MUTANT_DCHECK_ONE_BATCH (a fix-up deletes a
 * D-side check row after one batch), MUTANT_SKIP_NO_DCHECK (a settle that
 * skips a locked dependent writes no D-side check row), all caught by
 * liveness (`no_orphan`); MUTANT_DIRTY_READ (enqueue counts an uncommitted
 * success as done) and MUTANT_CANCELLED_UNCOUNTED (a settle counts a
 * waiting dependent's lost edge only, not a cancelled one's), caught by the
 * safety invariant.
 */

#ifndef ND
#define ND 1            /* dependencies D: 1 or 2 */
#endif
#ifndef NX
#define NX 1            /* dependents X: 1 or 2 */
#endif
#ifndef NF
#define NF 2            /* concurrent fix-ups */
#endif
#ifndef RR
#define RR 0            /* 1: an end may run in REPEATABLE READ */
#endif
#ifndef BOUND
#define BOUND 0         /* edges an end settles inline (0: all) */
#endif
#ifndef RUN
#define RUN 0           /* 1: a dependent may be enqueued with on_dependency_failure 'run' */
#endif
#ifndef SABORTS
#define SABORTS 1       /* ends of D that roll back (then run again) in a run */
#endif
#ifndef ADMIN
#define ADMIN 0         /* 1: an admin's cancel (maybe rolled back) and retry of X 0 */
#endif

/* X 0 depends on every D; X 1 on D 0. */
#define dep(x, d) ((x) == 0 || (d) == 0)
#define bit(i) (1 << (i))

/* D's committed state: unfinished (waiting, queued or running), succeeded,
 * or ended dead or cancelled (`BAD`). X's committed state; NONE: its
 * enqueue has not committed (or rolled back). */
mtype = { UNF, OK, BAD, NONE, WAITING, QUEUED, CANCELLED };

/* Committed rows. */
mtype dstate[ND] = UNF;
bool dcheck[ND];        /* D-side check row */
mtype xstate[NX] = NONE;
short left[NX];         /* X's dependencies_left (kept equal to its edges, cancelled or not) */
bool runs[NX];           /* X's on_dependency_failure is 'run' */
byte edges[NX];         /* X's edges, bit d: X -> D d */
bool xcheck[NX];        /* X-side check row */

/* Row locks. */
bool inflight[ND];      /* an end of D has updated D's row and not committed */
byte xlock[NX];         /* d + 1: the end of D d locked X (to settle it) and has not
                         * committed; ALOCK: an admin's cancel or retry of X holds it */
#define ALOCK (ND + 1)

/* Each enqueue's transaction: 0 not run, 1 run (open), 2 committed, 3 rolled back. */
byte e_phase[NX];
mtype e_state[NX] = NONE;
byte e_left[NX];
bool e_run[NX];
byte e_edges[NX];
bool e_check[NX];

/* Each end's transaction. */
mtype s_end[ND] = UNF;  /* the end it writes */
bool s_rr[ND];          /* in REPEATABLE READ */
byte s_snap[ND];        /* RR: the edges to D in its snapshot, bit x */
byte s_took[ND];        /* the edges it settled (deleted, uncommitted), bit x */
bool s_dcheck[ND];      /* it inserts a D-side check row */
byte s_aborts = 0;

/* Ghosts. */
byte settled[NX * ND];  /* how many times each edge X -> D was settled */
byte xdeps[NX];         /* the edges X was enqueued with, bit d */
bool a_cancelled;       /* the admin's cancel of X 0 committed */
bool a_retried;         /* the admin's retry of X 0 committed */

#ifdef NO_STEP_ASSERTS
#define step_assert(e) skip
#else
#define step_assert(e) assert(e)
#endif

#define has_edge(x, d) ((edges[x] & bit(d)) != 0)
#if ND == 1
#define nedges(x) (edges[x] & 1)
#else
#define nedges(x) ((edges[x] & 1) + ((edges[x] >> 1) & 1))
#endif
#define ended(d) (dstate[d] != UNF)

/* Settle one edge X -> D (D's end committed, or committing; X's row locked
 * by the settle): the DELETE of the edge is a compare-and-set; one off
 * dependencies_left, a cancelled X's too; a waiting X is cancelled when D
 * ended dead or cancelled (unless 'run'), queued when it was the last. */
inline settle(x, d) {
    if
    :: has_edge(x, d) ->
        edges[x] = edges[x] & ~bit(d);
        settled[x * ND + d]++;
        assert(settled[x * ND + d] <= 1);       /* each edge settled at most once */
#ifndef MUTANT_CANCELLED_UNCOUNTED
        left[x]--;
#endif
        if
        :: xstate[x] == WAITING ->
#ifdef MUTANT_CANCELLED_UNCOUNTED
            left[x]--;
#endif
            if
            :: dstate[d] == BAD && !runs[x] -> xstate[x] = CANCELLED
            :: else ->
                if
                :: left[x] == 0 -> xstate[x] = QUEUED
                :: else -> skip
                fi
            fi
        :: else -> skip
        fi
    :: else -> skip                             /* settled already: nothing */
    fi
}

/* A settle that skipped a locked dependent: a D-side check row for D, so
 * that a later fix-up settles the edges left. */
#ifdef MUTANT_SKIP_NO_DCHECK
#define on_skip(row) skip
#else
#define on_skip(row) row = true
#endif

/* A fix-up's settle_dependents of an ended D: every remaining edge whose
 * dependent's row is free settled; one whose row another transaction holds
 * skipped, its edge left, and a D-side check row for D. */
inline settle_free(d) {
    for (k : 0 .. NX - 1) {
        if
        :: has_edge(k, d) && xlock[k] == 0 -> settle(k, d)
        :: has_edge(k, d) && xlock[k] != 0 -> on_skip(dcheck[d])
        :: else -> skip
        fi
    }
    k = 0
}

#ifdef MUTANT_DIRTY_READ
/* enqueue reads an end in flight, a success, as if committed */
#define dirty(d) (dstate[d] == UNF && inflight[d] && s_end[d] == OK)
#else
#define dirty(d) false
#endif

/* The producer of X: enqueue (one statement: it reads each D's latest
 * committed state under a KEY SHARE lock, which waits for no end, and
 * inserts X, its edges and its X-side check row), then commit or roll back,
 * any time later. */
proctype producer(byte x) {
    byte d;
    atomic {
        e_phase[x] = 1;
        if
        :: RUN -> e_run[x] = true
        :: true -> skip
        fi;
        for (d : 0 .. ND - 1) {
            if
            :: dep(x, d) ->
                if
                :: dirty(d) -> skip                             /* the mutant's read */
                :: dstate[d] == OK -> skip                      /* succeeded: not counted */
                :: dstate[d] == BAD && e_run[x] -> skip         /* under 'run': not counted */
                :: dstate[d] == BAD && !e_run[x] -> e_state[x] = CANCELLED
                :: dstate[d] == UNF && !dirty(d) -> e_edges[x] = e_edges[x] | bit(d); e_left[x]++
                fi
            :: else -> skip
            fi
        }
        d = 0;
        if
        :: e_state[x] == CANCELLED -> e_edges[x] = 0; e_left[x] = 0 /* cancelled from the start, waits for nothing */
        :: e_state[x] != CANCELLED && e_left[x] > 0 -> e_state[x] = WAITING;
#ifndef MUTANT_NO_XCHECK
            e_check[x] = true
#endif
        :: e_state[x] != CANCELLED && e_left[x] == 0 -> e_state[x] = QUEUED
        fi
    }
    if
    :: atomic {                                 /* commit: all of it visible at once */
        xstate[x] = e_state[x]; left[x] = e_left[x]; runs[x] = e_run[x];
        edges[x] = e_edges[x]; xcheck[x] = e_check[x]; xdeps[x] = e_edges[x];
        e_phase[x] = 2 }
    :: atomic { e_phase[x] = 3 }                /* roll back: none of it, ever */
    fi
}

/* What the settle statement of D's end reads: the committed edges to D
 * (in REPEATABLE READ, only those of its snapshot). It waits for no lock:
 * a dependent whose row another transaction holds is skipped. */
#define sees(d, k) (has_edge(k, d) && (!s_rr[d] || (s_snap[d] & bit(k))))

/* The end of D: begin (the snapshot of REPEATABLE READ), UPDATE D's row,
 * then a later statement reads D's committed edges (READ COMMITTED: those
 * committed now; REPEATABLE READ: those of its snapshot) and settles them,
 * then commit. It may roll back before its commit and run again. */
proctype ender(byte d) {
    byte k, view;
    bool skipped;
again:
    atomic {                                    /* begin */
        if
        :: RR -> s_rr[d] = true
        :: true -> s_rr[d] = false
        fi;
        if
        :: s_rr[d] ->
            for (k : 0 .. NX - 1) {
                if
                :: has_edge(k, d) -> s_snap[d] = s_snap[d] | bit(k)
                :: else -> skip
                fi
            }
            k = 0
        :: else -> skip
        fi
    }
    atomic {                                    /* UPDATE D: succeeded, or dead (fail, cancel, burial) */
        if
        :: s_end[d] = OK
        :: s_end[d] = BAD
        fi;
        inflight[d] = true
    }
    if
    :: atomic { s_aborts < SABORTS -> s_aborts++; goto rollback }
    :: true
    fi;
    /* settle_dependents: the edges it reads, each dependent's row locked
     * FOR NO KEY UPDATE SKIP LOCKED before any of its edges is deleted: one
     * another transaction holds is skipped (its edges and count left), and
     * D gets a D-side check row; the rows it locked are held to its end */
    atomic {
        view = 0;
        for (k : 0 .. NX - 1) {
            if
            :: sees(d, k) -> view = view | bit(k)
            :: else -> skip
            fi
        }
        k = 0;
        skipped = false;
#if BOUND > 0
        /* at most BOUND (1) edge inline, which one left open: taken when its
         * dependent's row is free, else skipped; a D-side check row for the
         * rest */
        if
        :: view == 0 -> skip
        :: (view & 1) && xlock[0] == 0 -> s_took[d] = 1
        :: (view & 1) && xlock[0] != 0 -> skipped = true; view = view & ~1
#if NX == 2
        :: (view & 2) && xlock[1] == 0 -> s_took[d] = 2
        :: (view & 2) && xlock[1] != 0 -> skipped = true; view = view & ~2
#endif
        fi;
#ifndef MUTANT_BOUND_NO_DCHECK
        if
        :: view != s_took[d] -> s_dcheck[d] = true
        :: else -> skip
        fi;
#endif
#else
        for (k : 0 .. NX - 1) {
            if
            :: (view & bit(k)) && xlock[k] == 0 -> s_took[d] = s_took[d] | bit(k)
            :: (view & bit(k)) && xlock[k] != 0 -> skipped = true
            :: else -> skip
            fi
        }
#endif
        if
        :: skipped -> on_skip(s_dcheck[d])
        :: else -> skip
        fi;
        skipped = false;
        for (k : 0 .. NX - 1) {
            if
            :: s_took[d] & bit(k) -> xlock[k] = d + 1
            :: else -> skip
            fi
        }
        k = 0; view = 0;
#ifndef MUTANT_RR_NO_DCHECK
        if
        :: s_rr[d] -> s_dcheck[d] = true        /* its snapshot may miss edges committed since */
        :: else -> skip
        fi;
#endif
    }
    if
    :: atomic { s_aborts < SABORTS -> s_aborts++; goto rollback }
    :: true
    fi;
    atomic {                                    /* commit: D's end and its settlements at once */
        dstate[d] = s_end[d];
        inflight[d] = false;
        for (k : 0 .. NX - 1) {
            if
            :: s_took[d] & bit(k) -> settle(k, d); xlock[k] = 0
            :: else -> skip
            fi
        }
        k = 0;
        dcheck[d] = s_dcheck[d];
        goto done
    }
rollback:
    atomic {                                    /* none of its writes; its locks released */
        inflight[d] = false;
        for (k : 0 .. NX - 1) {
            if
            :: xlock[k] == d + 1 -> xlock[k] = 0
            :: else -> skip
            fi
        }
        k = 0;
        s_end[d] = UNF; s_took[d] = 0; s_snap[d] = 0; s_dcheck[d] = false; s_rr[d] = false;
        goto again
    }
done:
    skip
}

/* A fix-up step for edge X -> D of an X-side check row: D read with SKIP
 * LOCKED. Skipped when an end of D is in flight (the row stays); D ended:
 * its remaining edges settled, a locked dependent skipped (a D-side check
 * row for D); D unfinished with no end in flight: the edge is safe (a later
 * end sees it). */
#ifdef MUTANT_NO_SKIP
#define skips(d) false
#else
#define skips(d) (inflight[d])
#endif

inline check_edge(x, d) {
    if
    :: !has_edge(x, d) -> skip
    :: has_edge(x, d) && skips(d) -> skipped = true
    :: has_edge(x, d) && !skips(d) && ended(d) -> settle_free(d)
    :: has_edge(x, d) && !skips(d) && !ended(d) -> skip        /* safe */
    fi
}

/* A D-side check row's step: one edge whose dependent's row is free settled
 * (a batch of 1; a locked one is skipped, the row kept), or, when none
 * remains, the row deleted. A step that would skip every edge changes
 * nothing and is left out. */
#if NX == 1
#define dbatch(d) (dcheck[d] && (!has_edge(0, d) || xlock[0] == 0))
#else
#define dbatch(d) (dcheck[d] && ((!has_edge(0, d) && !has_edge(1, d)) \
                   || (has_edge(0, d) && xlock[0] == 0) || (has_edge(1, d) && xlock[1] == 0)))
#endif

inline d_side(d) {
    if
    :: has_edge(0, d) && xlock[0] == 0 -> settle(0, d)
#if NX == 2
    :: has_edge(1, d) && xlock[1] == 0 -> settle(1, d)
#endif
#if NX == 1
    :: !has_edge(0, d) -> dcheck[d] = false
#else
    :: !has_edge(0, d) && !has_edge(1, d) -> dcheck[d] = false
#endif
    fi;
#ifdef MUTANT_DCHECK_ONE_BATCH
    dcheck[d] = false;
#endif
    skip
}

proctype fixup() {
    byte x, d, k;
    bool skipped;
end_idle:
    do
    :: atomic { xcheck[0] -> x = 0; d = 0; skipped = false }
       goto pass
#if NX == 2
    :: atomic { xcheck[1] -> x = 1; d = 0; skipped = false }
       goto pass
#endif
    :: atomic { dbatch(0) -> d_side(0) }
#if ND == 2
    :: atomic { dbatch(1) -> d_side(1) }
#endif
    od;
pass:
    do
    :: atomic { d < ND -> check_edge(x, d); d++ }
    :: atomic { d == ND ->                      /* the pass's end: the row deleted when nothing was skipped */
                if
                :: !skipped -> xcheck[x] = false
                :: else -> skip
                fi;
                x = 0; d = 0; skipped = false;
                goto end_idle }
    od
}

/* The admin's process: X 0 cancelled while it waits (cancel.sql: its row
 * locked FOR NO KEY UPDATE, which waits for a settle's lock, and updated),
 * then committed or rolled back; then, once X 0 is cancelled (by the admin
 * or by a dependency), retried (retry.sql: its UPDATE waits for a settle's
 * lock; waiting again when dependencies_left > 0, else queued; no
 * recount, no lock on its dependencies). Each holds X 0's row from its
 * statement to its commit: a settle meanwhile skips X 0. */
proctype admin() {
    mtype to = NONE;
    if
    :: atomic { xlock[0] == 0 && xstate[0] == WAITING -> xlock[0] = ALOCK }
       if
       :: atomic { xstate[0] = CANCELLED; a_cancelled = true; xlock[0] = 0 }   /* commit */
       :: atomic { xlock[0] = 0 }                                              /* roll back */
       fi
    :: true -> skip
    fi;
    if
    :: atomic { xlock[0] == 0 && xstate[0] == CANCELLED ->
           xlock[0] = ALOCK;
           if
           :: left[0] > 0 -> to = WAITING
           :: else -> to = QUEUED
           fi }
       atomic { xstate[0] = to; a_retried = true; xlock[0] = 0; to = NONE }
    :: true -> skip
    fi
}

/* The invariant, over committed rows. A queued X: every dependency ended
 * in a way that lets it run (succeeded, or any end under 'run'), or, X 0
 * retried, every dependency it was enqueued with an edge to ended. A
 * cancelled X: a dependency ended dead or cancelled and X is not 'run', or
 * the admin cancelled it. dependencies_left is X's number of edges, above
 * 0 while X waits. */
#define lets_run(x, d) (!dep(x, d) || dstate[d] == OK || (dstate[d] == BAD && runs[x]))
#define kills(x, d) (dep(x, d) && dstate[d] == BAD && !runs[x])
#define gone_by(x, d) ((xdeps[x] & bit(d)) == 0 || ended(d))
#if ND == 1
#define all_let(x) (lets_run(x, 0))
#define some_kills(x) (kills(x, 0))
#define all_gone(x) (gone_by(x, 0))
#else
#define all_let(x) (lets_run(x, 0) && lets_run(x, 1))
#define some_kills(x) (kills(x, 0) || kills(x, 1))
#define all_gone(x) (gone_by(x, 0) && gone_by(x, 1))
#endif
#define x_ok(x) ((xstate[x] != QUEUED || all_let(x) || (x == 0 && a_retried && all_gone(x))) \
                 && (xstate[x] != CANCELLED || some_kills(x) || (x == 0 && a_cancelled)) \
                 && left[x] == nedges(x) \
                 && (xstate[x] != WAITING || left[x] > 0))
#if NX == 1
#define invariant (x_ok(0))
#else
#define invariant (x_ok(0) && x_ok(1))
#endif

/* No orphan: once every D has ended (committed) and every enqueue has
 * committed or rolled back, every X leaves waiting. */
#if ND == 1
#define all_ended (ended(0))
#else
#define all_ended (ended(0) && ended(1))
#endif
#if NX == 1
#define quiet (all_ended && e_phase[0] >= 2)
#define none_waiting (xstate[0] != WAITING)
#else
#define quiet (all_ended && e_phase[0] >= 2 && e_phase[1] >= 2)
#define none_waiting (xstate[0] != WAITING && xstate[1] != WAITING)
#endif

#ifndef LIVENESS
proctype monitor() {
end:
    atomic { !invariant -> assert(invariant) }
}
#endif

init {
    byte i;
    atomic {
        for (i : 0 .. NX - 1) { run producer(i) }
        for (i : 0 .. ND - 1) { run ender(i) }
        for (i : 1 .. NF) { run fixup() }
        if
        :: ADMIN -> run admin()
        :: else -> skip
        fi;
#ifndef LIVENESS
        run monitor();
#endif
        i = 0
    }
}

ltl no_orphan { [] (quiet -> <> none_waiting) }
