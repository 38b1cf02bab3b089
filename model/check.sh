#!/usr/bin/env bash
# make model: check model/taskboard.pml and model/dependencies.pml with Spin
# and report each configuration.
#
#   expect=pass  the model (safety: every assertion in every reachable state;
#                liveness: the LTL claim, `finishes` or `no_orphan`, under
#                weak fairness)
#   expect=fail  a mutant: Spin must find a counterexample that violates the
#                property named (its trail is kept in model/trails/). Mutants
#                are built with -DNO_STEP_ASSERTS: only the properties, not the
#                asserts that restate a step's own guard, may catch them.
# Runs MODEL_JOBS configurations at once (default 2), only those whose name
# MODEL_ONLY matches when it is set (MODEL_ONLY=^deps- for dependencies.pml's).
# Exit 1 when any configuration ends otherwise than expected.
set -u
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p trails
rm -f trails/*.trail
jobs=${MODEL_JOBS:-2}
names=()

run() {  # run NAME EXPECT VIOLATION MODE DEFINES...: one configuration, one line
    local name=$1 expect=$2 violation=$3 mode=$4
    shift 4
    local dir="$work/$name" flags got verdict what errors states depth incomplete start took out
    mkdir "$dir"
    cp "$model" "$dir/model.pml"
    if ! (cd "$dir" && spin -a "$@" model.pml >/dev/null); then
        echo "$name: spin -a failed"; return 1
    fi
    if [ "$mode" = safety ]; then
        (cd "$dir" && gcc -O2 -w -DNOCLAIM -DSAFETY -DMEMLIM=8000 -o pan pan.c) || return 1
        flags="-m3000000"
    else
        (cd "$dir" && gcc -O2 -w -DNFAIR=4 -DMEMLIM=8000 -o pan pan.c) || return 1
        flags="-m3000000 -a -f"
    fi
    start=$(date +%s.%N)
    out=$(cd "$dir" && ./pan $flags 2>&1)
    took=$(echo "$(date +%s.%N) - $start" | bc)
    errors=$(echo "$out" | sed -n 's/.*errors: \([0-9]*\).*/\1/p')
    states=$(echo "$out" | sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p')
    depth=$(echo "$out" | sed -n 's/.*depth reached \([0-9]*\).*/\1/p')
    incomplete=$(echo "$out" | grep -c "Search not completed\|max search depth too small\|out of memory")
    what=$(echo "$out" | grep -m1 "assertion violated\|acceptance cycle" | sed 's/^pan:1: //; s/ (at depth.*//')
    if [ "$errors" = 0 ]; then
        got=pass
    elif [ -n "$errors" ] && [ -n "$violation" ] && echo "$what" | grep -qF -- "$violation"; then
        got=fail
    else
        got="error"                     # pan broke, or another property than the one named
    fi
    if [ "$got" = pass ] && [ "$incomplete" != 0 ]; then got="incomplete"; fi
    if [ "$got" = "$expect" ]; then verdict=ok; else verdict="NOT AS EXPECTED"; fi
    if [ "$got" = fail ] && [ -f "$dir/model.pml.trail" ]; then
        cp "$dir/model.pml.trail" "trails/$name.trail"
    fi
    case "$what" in
        "$INV"*) what="the invariant (see model/README.md)" ;;
        "$KINV"*) what="the key limit's invariant (see model/README.md)" ;;
        "$DINV"*) what="the dependencies' invariant (see model/README.md)" ;;
    esac
    printf '%-32s %-8s %-5s expected %-5s %-16s states %-9s depth %-5s %6.1fs %s\n' \
        "$name" "$mode" "$got" "$expect" "$verdict" "$states" "$depth" "$took" "$what"
    [ "$verdict" = ok ]
}

model=taskboard.pml     # the model the next checks run: set again before each block
configs=()   # the model and arguments of each check, quoted, in the order the report lists them
check() {  # check NAME ...: one configuration of $model to run (start_all starts them)
    # MODEL_ONLY (an extended regular expression): only the names it matches
    if [ -n "${MODEL_ONLY:-}" ] && ! [[ $1 =~ $MODEL_ONLY ]]; then return 0; fi
    names+=("$1")
    configs+=("$(printf '%q ' "$model" "$@")")
}

start() {  # start MODEL NAME ...: run in the background, at most $jobs at once
    local m=$1
    shift
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    (model=$m; run "$@" > "$work/$1.line" 2>&1; echo $? > "$work/$1.status") &
}

# The longest configurations (minutes each, the others seconds to a minute or
# two) start first, so that no slot is left running one alone at the end.
LONGEST=" liveness-n2-operator safety-n3-operator liveness-n2-two-jobs safety-n3-two-jobs "
start_all() {
    local config
    for config in "${configs[@]}"; do
        eval "set -- $config"
        case "$LONGEST" in *" $2 "*) start "$@" ;; esac
    done
    for config in "${configs[@]}"; do
        eval "set -- $config"
        case "$LONGEST" in *" $2 "*) ;; *) start "$@" ;; esac
    done
}

echo "Spin $(spin -V | sed -n 's/Spin Version \([^ ]*\).*/\1/p'): N workers, lease 2 ticks; one job with max_attempts 3," \
     "or two with max_attempts 2 and a queue limit of 1 (lifted, paused, or one job cancelled)," \
     "or two or three with max_attempts 2 and a limit of 1 per key"
INV="assertion violated ((((attempt"   # the invariant monitored in every state
KINV="assertion violated ((((( (((( ((0==2))"   # the key limit's, monitored in every state
DINV="assertion violated ((((((xstate[0]!="      # dependencies.pml's, one dependent
# Two jobs: a queue limit of 1 the operator may lift, smaller budgets.
J2="-DNJ=2 -DLIMIT=1 -DCONTROL=1 -DADMIN=0 -DMAXATT=2 -DCRASHES=1 -DRENEWS=1"
# Two jobs under a limit of 1 with one cancel (or retry) by the operator.
J2C="-DNJ=2 -DLIMIT=1 -DCONTROL=0 -DADMIN=1 -DMAXATT=2 -DCRASHES=1 -DRENEWS=1"
J2C0="-DNJ=2 -DLIMIT=1 -DCONTROL=0 -DADMIN=1 -DMAXATT=2 -DCRASHES=0 -DRENEWS=0"   # its mutant, smaller
# Keys under a limit of 1 per key: jobs 0 and 1 of one key, job 2 of another.
K3="-DNJ=3 -DKEYLIMIT=1 -DADMIN=0 -DMAXATT=2 -DCRASHES=1 -DRENEWS=1 -DRELEASES=0"
K3L="-DNJ=3 -DKEYLIMIT=1 -DADMIN=0 -DMAXATT=2 -DCRASHES=1 -DRENEWS=0 -DRELEASES=0"
# Two jobs of one key with one cancel (or retry) by the operator.
K2C="-DNJ=2 -DKEYLIMIT=1 -DADMIN=1 -DMAXATT=2 -DCRASHES=1 -DRENEWS=1"
# Mutants' configurations: an expired lease (no operator), a cancel (no
# crash, no renewal: only the cancel can free a key's place), a race.
K2="-DNJ=2 -DKEYLIMIT=1 -DADMIN=0 -DMAXATT=2 -DCRASHES=1 -DRENEWS=1"
K2C0="-DNJ=2 -DKEYLIMIT=1 -DADMIN=1 -DMAXATT=2 -DCRASHES=0 -DRENEWS=0"
K20="-DNJ=2 -DKEYLIMIT=1 -DADMIN=0 -DMAXATT=2 -DCRASHES=0 -DRENEWS=0"
K30="-DNJ=3 -DKEYLIMIT=1 -DADMIN=0 -DMAXATT=2 -DCRASHES=0 -DRENEWS=0 -DRELEASES=0"
L=-DLIVENESS

check safety-n2                  pass "" safety   -DNW=2 -DADMIN=0
check safety-n3                  pass "" safety   -DNW=3 -DADMIN=0
check liveness-n2                pass "" liveness -DNW=2 -DADMIN=0 $L
check liveness-n3                pass "" liveness -DNW=3 -DADMIN=0 $L
check safety-n2-operator         pass "" safety   -DNW=2 -DCONTROL=2
check liveness-n2-operator       pass "" liveness -DNW=2 -DCONTROL=1 $L
check safety-n3-operator         pass "" safety   -DNW=3 -DCONTROL=1 -DCRASHES=1 -DRENEWS=1
check safety-n2-two-jobs         pass "" safety   -DNW=2 $J2
check liveness-n2-two-jobs       pass "" liveness -DNW=2 $J2 $L
check safety-n3-two-jobs         pass "" safety   -DNW=3 $J2
check safety-n2-two-jobs-cancel  pass "" safety   -DNW=2 $J2C
check safety-n2-keys             pass "" safety   -DNW=2 $K3
check liveness-n2-keys           pass "" liveness -DNW=2 $K3L $L
check safety-n2-keys-cancel      pass "" safety   -DNW=2 $K2C
M="-DNW=2 -DNO_STEP_ASSERTS"
check mutant-complete-by-id      fail "(succeeded_by[job[w]]==held[w])" safety $M -DMUTANT_COMPLETE_BY_ID
check mutant-renew-expired       fail "(left[job[w]]>0)" safety $M -DMUTANT_RENEW_EXPIRED
check mutant-claim-live          fail "$INV" safety $M -DMUTANT_CLAIM_LIVE
check mutant-fail-any-token      fail "$INV" safety $M -DMUTANT_FAIL_ANY_TOKEN
check mutant-complete-any-state  fail "(state[j]==before[j])" safety $M -DMUTANT_COMPLETE_ANY_STATE
check mutant-retry-resets-fence  fail "(fence[pick]>last_fence[pick])" safety $M -DMUTANT_RETRY_RESETS_FENCE
check mutant-retry-at-once       fail "$INV" safety $M -DMUTANT_RETRY_AT_ONCE
check mutant-repeat-any-token    fail "(succeeded_by[job[w]]==held[w])" safety $M -DMUTANT_REPEAT_ANY_TOKEN
check mutant-claim-paused        fail "!(paused)" safety $M -DCONTROL=2 -DMUTANT_CLAIM_PAUSED
check mutant-limit-counts-live   fail "( !(started)||(limit==0))" safety $M $J2 -DMUTANT_LIMIT_COUNTS_LIVE
check mutant-cancel-frees        fail "((limit==0)|| !(started))" safety $M $J2C0 -DMUTANT_CANCEL_FREES
check mutant-key-counts-running fail "$KINV" safety $M $K2 -DMUTANT_KEY_COUNTS_RUNNING
check mutant-key-counts-running-cancel fail "$KINV" safety $M $K2C0 -DMUTANT_KEY_COUNTS_RUNNING
check mutant-key-no-turns        fail "$KINV" safety $M $K20 -DMUTANT_KEY_NO_TURNS
check mutant-key-blocks-queue    fail "(pick<3)||" safety $M $K30 -DMUTANT_KEY_BLOCKS_QUEUE
check mutant-never-buries        fail "acceptance cycle" liveness -DNW=2 -DADMIN=0 $L -DMUTANT_NEVER_BURIES
# The dependency-edge protocol (model/dependencies.pml): D dependencies, X
# dependents (X 0 waits for every D, X 1 for D 0), one enqueue per X that
# may roll back, each D ended once (succeeded or dead; one end in a run
# rolls back and runs again), 2 fix-ups (1 in the 2x2-all pair). A settle
# skips a dependent another transaction holds (an end in flight, an admin's
# cancel or retry) and leaves a D-side check row.
model=dependencies.pml
echo "dependencies.pml: 1 or 2 dependencies and dependents, ends in READ COMMITTED or" \
     "REPEATABLE READ, 1 edge settled inline (bound), on_dependency_failure 'cancel' or 'run'," \
     "an admin's cancel and retry of a dependent"
DFI="-DND=2 -DNX=1 -DRR=1 -DRUN=1"                   # fan-in: one dependent of two
DFO="-DND=1 -DNX=2 -DRR=1 -DRUN=1 -DBOUND=1"         # fan-out: two dependents of one
D22="-DND=2 -DNX=2 -DBOUND=1"                        # two and two, READ COMMITTED
D22R="-DND=2 -DNX=2 -DRR=1 -DRUN=1 -DBOUND=1 -DNF=1" # two and two, every option, 1 fix-up
DFA="-DND=2 -DNX=1 -DRUN=1 -DADMIN=1"                # fan-in, an admin's cancel and retry of X 0
check deps-safety-fan-in         pass "" safety   $DFI
check deps-liveness-fan-in       pass "" liveness $DFI $L
check deps-safety-fan-out        pass "" safety   $DFO
check deps-liveness-fan-out      pass "" liveness $DFO $L
check deps-safety-2x2            pass "" safety   $D22
check deps-liveness-2x2          pass "" liveness $D22 $L
check deps-safety-2x2-all        pass "" safety   $D22R
check deps-liveness-2x2-all      pass "" liveness $D22R $L
check deps-safety-admin          pass "" safety   $DFA
check deps-liveness-admin        pass "" liveness $DFA $L
M="-DNO_STEP_ASSERTS"
check deps-mutant-no-xcheck      fail "acceptance cycle" liveness $M $L -DMUTANT_NO_XCHECK
check deps-mutant-no-skip        fail "acceptance cycle" liveness $M $L -DMUTANT_NO_SKIP
check deps-mutant-rr-no-dcheck   fail "acceptance cycle" liveness $M $L -DRR=1 -DMUTANT_RR_NO_DCHECK
check deps-mutant-bound-no-dcheck fail "acceptance cycle" liveness $M $L -DNX=2 -DBOUND=1 -DMUTANT_BOUND_NO_DCHECK
check deps-mutant-dcheck-one-batch fail "acceptance cycle" liveness $M $L -DNX=2 -DRR=1 -DMUTANT_DCHECK_ONE_BATCH
check deps-mutant-dirty-read     fail "$DINV" safety $M -DMUTANT_DIRTY_READ
check deps-mutant-cancelled-uncounted fail "$DINV" safety $M -DADMIN=1 -DMUTANT_CANCELLED_UNCOUNTED
check deps-mutant-skip-no-dcheck fail "acceptance cycle" liveness $M $L -DND=2 -DMUTANT_SKIP_NO_DCHECK
check deps-mutant-skip-no-dcheck-admin fail "acceptance cycle" liveness $M $L -DADMIN=1 -DMUTANT_SKIP_NO_DCHECK
start_all
wait

status=0
for name in "${names[@]}"; do
    cat "$work/$name.line"
    [ "$(cat "$work/$name.status" 2>/dev/null)" = 0 ] || status=1
done
exit $status
