#!/bin/sh
# make model: check model/taskboard.pml with Spin and report each configuration.
#
#   expect=pass  the model (safety: every assertion in every reachable state;
#                liveness: the LTL claim `finishes` under weak fairness)
#   expect=fail  a mutant, or the model of a behaviour known to break a
#                property: Spin must find a counterexample that violates the
#                property named (its trail is kept in model/trails/). Mutants
#                are built with -DNO_STEP_ASSERTS: only the global properties,
#                not the asserts that restate a step's own guard, may catch
#                them (renew's contract, "it extends only a live lease", is
#                the one step property kept).
# Exit 1 when any configuration ends otherwise than expected.
set -u
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p trails
status=0

check() {  # check NAME EXPECT VIOLATION MODE DEFINES...
    name=$1 expect=$2 violation=$3 mode=$4
    shift 4
    cp taskboard.pml "$work/model.pml"
    (cd "$work" && spin -a "$@" model.pml >/dev/null) || { echo "$name: spin -a failed"; status=1; return; }
    if [ "$mode" = safety ]; then
        (cd "$work" && gcc -O2 -w -DNOCLAIM -DSAFETY -o pan pan.c) || { status=1; return; }
        flags="-m2000000"
    else
        (cd "$work" && gcc -O2 -w -DNFAIR=4 -o pan pan.c) || { status=1; return; }
        flags="-m2000000 -a -f"
    fi
    start=$(date +%s.%N)
    out=$(cd "$work" && ./pan $flags 2>&1)
    took=$(echo "$(date +%s.%N) - $start" | bc)
    errors=$(echo "$out" | sed -n 's/.*errors: \([0-9]*\).*/\1/p')
    states=$(echo "$out" | sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p')
    depth=$(echo "$out" | sed -n 's/.*depth reached \([0-9]*\).*/\1/p')
    incomplete=$(echo "$out" | grep -c "Search not completed\|max search depth too small")
    what=$(echo "$out" | grep -m1 "assertion violated\|acceptance cycle" | sed 's/^pan:1: //; s/ (at depth.*//')
    if [ "$errors" = 0 ]; then
        got=pass
    elif [ -n "$errors" ] && [ -n "$violation" ] && echo "$what" | grep -qF -- "$violation"; then
        got=fail
    else
        got="error"                     # pan broke, or another property than the one named
    fi
    if [ "$got" = pass ] && [ "$incomplete" != 0 ] && [ "$expect" = pass ]; then got="incomplete"; fi
    if [ "$got" = "$expect" ]; then verdict=ok; else verdict="NOT AS EXPECTED"; status=1; fi
    if [ "$got" = fail ] && [ -f "$work/model.pml.trail" ]; then
        cp "$work/model.pml.trail" "trails/$name.trail"
    fi
    case "$what" in "$INV"*) what="the invariant (see model/README.md)" ;; esac
    printf '%-28s %-8s %-5s expected %-5s %-16s states %-9s depth %-5s %5.1fs %s\n' \
        "$name" "$mode" "$got" "$expect" "$verdict" "$states" "$depth" "$took" "$what"
}

echo "Spin $(spin -V | sed -n 's/Spin Version \([^ ]*\).*/\1/p'): one job, N workers, max_attempts 3, lease 2 ticks"
INV="assertion violated ((((attempt"     # the invariant monitored in every state
check safety-n2                  pass "" safety   -DNW=2 -DADMIN=0
check safety-n3                  pass "" safety   -DNW=3 -DADMIN=0
check liveness-n2                pass "" liveness -DNW=2 -DADMIN=0
check liveness-n3                pass "" liveness -DNW=3 -DADMIN=0
check finding-retry-at-once      fail "$INV" safety -DNW=2
check safety-n2-retry-waits      pass "" safety   -DNW=2 -DRETRY_WAITS_FOR_LEASE
check liveness-n2-retry-waits    pass "" liveness -DNW=2 -DRETRY_WAITS_FOR_LEASE
check safety-n3-retry-waits      pass "" safety   -DNW=3 -DRETRY_WAITS_FOR_LEASE
M="-DNW=2 -DRETRY_WAITS_FOR_LEASE -DNO_STEP_ASSERTS"
check mutant-complete-by-id      fail "$INV" safety $M -DMUTANT_COMPLETE_BY_ID
check mutant-renew-expired       fail "(left>0)" safety $M -DMUTANT_RENEW_EXPIRED
check mutant-claim-live          fail "$INV" safety $M -DMUTANT_CLAIM_LIVE
check mutant-fail-any-token      fail "$INV" safety $M -DMUTANT_FAIL_ANY_TOKEN
check mutant-complete-any-state  fail "(state==before)" safety $M -DMUTANT_COMPLETE_ANY_STATE
check mutant-retry-resets-fence  fail "(fence>last_fence)" safety $M -DMUTANT_RETRY_RESETS_FENCE
exit $status
