"""NOTIFY taskboard, '<queue>' for jobs runnable now, and only for them."""

from __future__ import annotations

import psycopg

from tests.support.database import MakeDatabase, connect, heard, listening, value

PRODUCER = "taskboard_producer"
WORKER = "taskboard_worker"
ADMIN = "taskboard_admin"


def test_enqueue_notifies_the_queue_of_a_job_runnable_now(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with listening(url) as listener, connect(url, PRODUCER) as producer:
        producer.execute("SELECT taskboard.enqueue('t', queue => 'emails')")
        assert heard(listener, producer) == ["emails"]


def test_a_job_scheduled_for_later_sends_nothing(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with listening(url) as listener, connect(url, PRODUCER) as producer:
        producer.execute(
            "SELECT taskboard.enqueue('t', queue => 'later', run_at => clock_timestamp() + interval '1 hour')"
        )
        producer.execute(
            "SELECT taskboard.enqueue_many('t', array['{}']::jsonb[], queue => 'later',"
            " run_at => clock_timestamp() + interval '1 hour')"
        )
        assert heard(listener, producer) == []


def test_a_rolled_back_enqueue_sends_nothing_and_leaves_no_job(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with listening(url) as listener, connect(url, PRODUCER, autocommit=False) as producer:
        job_id = value(producer, "SELECT taskboard.enqueue('t', queue => 'undone')")
        producer.rollback()
        producer.autocommit = True
        assert heard(listener, producer) == []
        assert value(producer, "SELECT (taskboard.get_job(%s)).state", [job_id]) is None


def test_enqueue_many_notifies_once_per_call(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with listening(url) as listener, connect(url, PRODUCER) as producer:
        producer.execute(
            "SELECT taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[50]), queue => 'bulk')"
        )
        assert heard(listener, producer) == ["bulk"]


def test_a_dedupe_hit_inserts_nothing_and_sends_nothing(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with listening(url) as listener, connect(url, PRODUCER) as producer:
        producer.execute("SELECT taskboard.enqueue('t', queue => 'dd', dedupe_key => 'k')")
        assert heard(listener, producer) == ["dd"]
        producer.execute("SELECT taskboard.enqueue('t', queue => 'dd', dedupe_key => 'k')")
        producer.execute(
            "SELECT taskboard.enqueue_many('t', array['{}']::jsonb[], queue => 'dd', dedupe_keys => array['k'])"
        )
        assert heard(listener, producer) == []


def test_release_notifies_only_without_delay(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with connect(url, PRODUCER) as producer:
        producer.execute(
            "SELECT taskboard.enqueue_many('t', array['{}', '{}']::jsonb[], queue => 'rel')"
        )
    with listening(url) as listener, connect(url, WORKER) as worker:
        (a, a_token), (b, b_token) = worker.execute(
            "SELECT job_id, token FROM taskboard.claim('rel', 'w', 2)"
        ).fetchall()
        assert (
            value(worker, "SELECT taskboard.release(%s, %s, interval '1 hour')", [a, a_token])
            is True
        )
        assert heard(listener, worker) == []
        assert value(worker, "SELECT taskboard.release(%s, %s)", [b, b_token]) is True
        assert heard(listener, worker) == ["rel"]


def test_retry_notifies(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with connect(url, PRODUCER) as producer:
        job_id = value(producer, "SELECT taskboard.enqueue('t', queue => 'again')")
    with listening(url) as listener, connect(url, ADMIN) as admin:
        assert value(admin, "SELECT taskboard.cancel(%s)", [job_id]) is True
        assert heard(listener, admin) == []
        assert value(admin, "SELECT taskboard.retry(%s)", [job_id]) is True
        assert heard(listener, admin) == ["again"]


def test_session_setting_notify_off_silences_enqueue(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with listening(url) as listener, connect(url, PRODUCER) as producer:
        producer.execute("SET taskboard.notify = off")
        producer.execute("SELECT taskboard.enqueue('t', queue => 'quiet')")
        producer.execute(
            "SELECT taskboard.enqueue_many('t', array['{}']::jsonb[], queue => 'quiet')"
        )
        assert heard(listener, producer) == []
        producer.execute("RESET taskboard.notify")
        producer.execute("SELECT taskboard.enqueue('t', queue => 'loud')")
        assert heard(listener, producer) == ["loud"]


def test_database_setting_notify_off_silences_new_sessions(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as admin:
        dbname = value(admin, "SELECT current_database()")
        admin.execute(f'ALTER DATABASE "{dbname}" SET taskboard.notify = off')
    with listening(url) as listener, connect(url, PRODUCER) as producer:
        producer.execute("SELECT taskboard.enqueue('t', queue => 'quiet')")
        assert heard(listener, producer) == []
