"""The Ledger: every transition of a held claim, and the ones it refuses."""

from __future__ import annotations

import time

import pytest

from taskboard.events import JobEvent
from taskboard.worker.held import RETRY_FIRST_SECONDS, RETRY_MAX_SECONDS, Held, Ledger, State
from taskboard.worker.outcomes import Complete, Fail, Release
from tests.support.fake_queries import hold, row


@pytest.fixture
def events() -> list[JobEvent]:
    return []


@pytest.fixture
def ledger(events: list[JobEvent]) -> Ledger:
    return Ledger("unit", (events.append,))


def kinds(events: list[JobEvent]) -> list[str]:
    return [e.kind for e in events]


def settling(
    ledger: Ledger, job_id: int = 1, outcome: Complete | Fail | Release | None = None
) -> Held:
    held = hold(ledger, row(job_id))
    assert ledger.settle(held, outcome or Complete('"done"'))
    return held


def sending(
    ledger: Ledger, job_id: int = 1, outcome: Complete | Fail | Release | None = None
) -> Held:
    held = settling(ledger, job_id, outcome)
    assert ledger.sending(held)
    return held


def test_a_claim_is_held_running_by_its_token(ledger: Ledger, events: list[JobEvent]) -> None:
    held = hold(ledger, row(7))
    assert held.state is State.RUNNING
    assert ledger.get(held.token) is held and ledger.holds(held)
    assert ledger.counts.claimed == 1
    assert kinds(events) == ["claimed"] and events[0].claimed is held.claimed


def test_the_same_job_under_a_new_token_is_another_claim(ledger: Ledger) -> None:
    first = hold(ledger, row(7))
    second = hold(ledger, row(7, attempt=2))
    assert len(ledger) == 2
    assert ledger.get(first.token) is first and ledger.get(second.token) is second


def test_settle_queues_the_outcome_for_control(ledger: Ledger, events: list[JobEvent]) -> None:
    held = hold(ledger, row(1))
    ledger.wake.clear()
    assert ledger.settle(held, Fail("ValueError: no"))
    assert held.state is State.SETTLING and held.outcome == Fail("ValueError: no")
    assert ledger.outbox() == [held]
    assert ledger.wake.is_set()
    finished = events[-1]
    assert (finished.kind, finished.outcome, finished.error) == (
        "finished",
        "fail",
        "ValueError: no",
    )


def test_only_a_running_claim_settles(ledger: Ledger) -> None:
    held = settling(ledger)
    assert not ledger.settle(held, Fail("again"))
    assert held.outcome == Complete('"done"')
    lost = hold(ledger, row(2))
    ledger.lose(lost, "renewal refused")
    assert not ledger.settle(lost, Complete())
    assert lost.state is State.LOST


def test_a_transactional_claim_goes_from_running_straight_to_sending(
    ledger: Ledger, events: list[JobEvent]
) -> None:
    held = hold(ledger, row(1))
    ledger.wake.clear()
    assert ledger.settle_in_transaction(held, Complete("1"))
    assert held.state is State.SENDING
    assert ledger.outbox() == [] and not ledger.wake.is_set()
    assert kinds(events)[-1] == "finished"
    ledger.note_sent(held)
    assert kinds(events)[-1] == "sending" and held.sent_at is not None
    assert not ledger.settle_in_transaction(held, Complete("1"))


def test_release_at_exit_hands_back_a_running_claim(ledger: Ledger) -> None:
    held = hold(ledger, row(1))
    ledger.release_at_exit(held)
    assert held.state is State.SETTLING and held.outcome == Release(0.0)
    assert held.ctx.lost
    done = settling(ledger, 2)
    ledger.release_at_exit(done)
    assert done.outcome == Complete('"done"')


def test_sending_moves_a_settling_claim_and_stamps_it(
    ledger: Ledger, events: list[JobEvent]
) -> None:
    held = settling(ledger)
    assert ledger.sending(held)
    assert held.state is State.SENDING and held.sent_at is not None
    assert ledger.outbox() == []
    assert (events[-1].kind, events[-1].outcome) == ("sending", "complete")
    assert not ledger.sending(held)
    assert not ledger.sending(hold(ledger, row(2)))


def test_a_failed_send_waits_longer_each_time(ledger: Ledger, events: list[JobEvent]) -> None:
    held = sending(ledger)
    before = time.monotonic()
    ledger.send_failed(held, OSError("connection reset"))
    assert held.state is State.SETTLING and held.failures == 1
    assert before + RETRY_FIRST_SECONDS <= held.retry_at <= time.monotonic() + RETRY_FIRST_SECONDS
    assert (events[-1].kind, events[-1].error) == ("send_failed", "OSError: connection reset")
    delays = []
    for _ in range(8):
        assert ledger.sending(held)
        ledger.send_failed(held, OSError("again"))
        delays.append(round(held.retry_at - time.monotonic(), 1))
    assert delays == [0.4, 0.8, 1.6, 3.2, RETRY_MAX_SECONDS, RETRY_MAX_SECONDS, 5.0, 5.0]
    assert ledger.outbox() == [held]


def test_requeue_sends_again_at_once_without_counting_a_failure(ledger: Ledger) -> None:
    held = sending(ledger)
    ledger.requeue(held)
    assert held.state is State.SETTLING and held.failures == 0 and held.retry_at == 0.0


def test_amend_replaces_what_is_sent(ledger: Ledger) -> None:
    held = sending(ledger)
    ledger.wake.clear()
    ledger.amend(held, Fail("did not commit"))
    assert held.state is State.SETTLING and held.outcome == Fail("did not commit")
    assert ledger.wake.is_set()
    ledger.amend(held, Fail("again"))
    assert held.outcome == Fail("again")
    running = hold(ledger, row(2))
    ledger.amend(running, Fail("no"))
    assert running.state is State.RUNNING and running.outcome is None


@pytest.mark.parametrize(
    ("outcome", "state", "answer", "counted"),
    [
        (Complete(), State.COMPLETED, True, "succeeded"),
        (Complete(), State.LOST, False, "stale"),
        (Fail("e"), State.FAILED, "queued", "failed"),
        (Fail("e"), State.FAILED, "dead", "dead"),
        (Fail("e"), State.LOST, None, "stale"),
        (Release(1.0), State.RELEASED, True, "released"),
    ],
)
def test_the_databases_answer_settles_a_sending_claim(
    ledger: Ledger,
    events: list[JobEvent],
    outcome: Complete | Fail | Release,
    state: State,
    answer: object,
    counted: str,
) -> None:
    held = sending(ledger, outcome=outcome)
    ledger.resolve(held, state, answer)
    assert held.state is state and not ledger.holds(held) and len(ledger) == 0
    counts = vars(ledger.counts)
    assert {k: v for k, v in counts.items() if v and k != "claimed"} == {counted: 1}
    last = events[-1]
    assert last.kind == ("released" if outcome.name == "release" else "settled")
    assert (last.outcome, last.answer, last.sent_at) == (outcome.name, answer, held.sent_at)


def test_a_refused_release_is_not_counted(ledger: Ledger) -> None:
    held = sending(ledger, outcome=Release())
    ledger.resolve(held, State.RELEASED, False)
    assert ledger.counts.released == 0 and len(ledger) == 0


def test_only_a_sending_claim_is_resolved(ledger: Ledger) -> None:
    held = settling(ledger)
    ledger.resolve(held, State.COMPLETED, True)
    assert held.state is State.SETTLING and ledger.counts.succeeded == 0


def test_lose_gives_up_a_running_claim(ledger: Ledger, events: list[JobEvent]) -> None:
    held = hold(ledger, row(1))
    ledger.changed.clear()
    assert ledger.lose(held, "renewal refused")
    assert held.state is State.LOST and held.ctx.lost and not ledger.holds(held)
    assert ledger.counts.lost == 1 and ledger.changed.is_set()
    assert (events[-1].kind, events[-1].error) == ("lost", "renewal refused")
    assert not ledger.lose(held, "twice")
    assert ledger.counts.lost == 1


def test_lose_leaves_a_settling_or_sending_claim_to_the_databases_answer(ledger: Ledger) -> None:
    waiting = settling(ledger, 1)
    sent = sending(ledger, 2)
    assert not ledger.lose(waiting, "no successful renewal")
    assert not ledger.lose(sent, "renewal refused")
    assert (waiting.state, sent.state) == (State.SETTLING, State.SENDING)
    assert ledger.counts.lost == 0 and not waiting.ctx.lost


def test_abandon_gives_up_a_sending_claim_whose_answer_cannot_be_had(ledger: Ledger) -> None:
    held = hold(ledger, row(1))
    assert ledger.settle_in_transaction(held, Complete())
    assert ledger.abandon(held, "whether its COMMIT happened could not be learnt in time")
    assert held.state is State.LOST and ledger.counts.lost == 1 and len(ledger) == 0
    running = hold(ledger, row(2))
    waiting = settling(ledger, 3)
    assert not ledger.abandon(running, "no") and not ledger.abandon(waiting, "no")
