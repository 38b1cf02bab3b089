"""A release is one Sqitch change written from db/functions/ (taskboard_dev.release).

The end-to-end test works on a copy of db/: it starts a release there, edits,
adds and removes function files, writes the scripts, and deploys, verifies
and reverts them on a fresh database.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from taskboard_dev import devdb, release, schema
from tests.support.database import DB_DIR, MakeDatabase, run_sqitch


def test_every_function_file_reads_back_into_what_it_says() -> None:
    for path in sorted(release.FUNCTIONS_DIR.glob("*.sql")):
        function = release.parse(path.stem, path.read_text())
        assert function.name == path.stem
        assert function.signature.startswith(f"taskboard.{path.stem}(")
        rendered = schema.function_file(
            function.signature,
            function.definition,
            function.comment,
            [f"taskboard_{kind}" for kind in function.roles],
        )
        assert rendered == path.read_text(), path.name


def test_a_file_out_of_shape_is_named_with_what_is_wrong() -> None:
    text = (release.FUNCTIONS_DIR / "get_job.sql").read_text()
    with pytest.raises(release.ReleaseError, match=r"get_job\.sql: the note under its contract"):
        release.parse("get_job", text.replace(schema.FUNCTION_NOTE, ""))
    with pytest.raises(release.ReleaseError, match="grants to no role of the default prefix"):
        release.parse("get_job", text.replace("TO taskboard_admin;", "TO somebody;"))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server_url: str) -> Iterator[Path]:
    """A copy of db/ that release writes into, in place of the real one, its pending
    release (if the plan has one) tagged, so that a new one can start."""
    copy = tmp_path / "db"
    shutil.copytree(DB_DIR, copy, ignore=shutil.ignore_patterns("tests", "*.sha256"))
    monkeypatch.setattr(release, "DB", copy)
    monkeypatch.setattr(release, "FUNCTIONS_DIR", copy / "functions")
    monkeypatch.setattr(release, "NEXT_DIR", copy / "next")
    scratch = "taskboard_t_release_" + uuid.uuid4().hex[:12]
    monkeypatch.setattr(release, "SCRATCH_DB", scratch)
    pending = release.pending_release()
    if pending is not None:
        tagged = subprocess.run(
            ["sqitch", "tag", f"v{pending}", "-n", "the pending release"],
            cwd=copy,
            env={**os.environ, **release.PLANNER},
            capture_output=True,
            text=True,
            check=False,
        )
        assert tagged.returncode == 0, tagged.stderr
    yield copy
    with psycopg.connect(devdb.base_url("18"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {scratch} WITH (FORCE)")


# Four Sqitch runs of the whole plan: a minute or more alone, more beside other suites.
@pytest.mark.timeout(900)
def test_a_release_written_from_the_files_deploys_verifies_and_reverts(
    project: Path, make_database: MakeDatabase, capsys: pytest.CaptureFixture[str]
) -> None:
    functions = project / "functions"
    last = release.last_tag()
    get_job = functions / "get_job.sql"
    get_job.write_text(get_job.read_text().replace("A row of NULLs", "A row of NULLs, always,"))
    job_activity = (functions / "job_activity.sql").read_text()
    (functions / "job_activity.sql").unlink()
    with pytest.raises(release.ReleaseError, match=r"taskboard\.job_activity\(.*a released"):
        release.main(["write", "9.9.9", "a probe"])
    (functions / "job_activity.sql").write_text(job_activity)
    added = (functions / "version.sql").read_text().replace("version()", "release_probe()")
    (functions / "release_probe.sql").write_text(added.replace("SELECT '", "SELECT 'probe "))
    (project / "next").mkdir()
    (project / "next" / "deploy.sql").write_text("CREATE TABLE taskboard.probe (id int);")
    (project / "next" / "revert.sql").write_text("DROP TABLE taskboard.probe;")

    assert release.main(["write", "9.9.9", "a probe"]) == 0
    assert release.pending() == ["version"] and release.pending_release() == "9.9.9"
    assert release.main(["check"]) == 0, "what was written is what check expects"
    deploy = (project / "deploy" / "version.sql").read_text()
    assert "A row of NULLs, always," in deploy and "release_probe()" in deploy
    assert "taskboard.claim(" not in deploy, "an unchanged function is not in the release"
    assert (project / "deploy" / f"version@v{last}.sql").exists(), "the released scripts are kept"

    # Upgraded from the last release, as a user's database is (a copy of the tests'
    # database at that release); then `sqitch verify` of the whole plan.
    url = make_database(release=last)
    done = run_sqitch(url, "deploy", "--verify", project=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert run_sqitch(url, "verify", project=project).returncode == 0
    since_last = ("--from", f"@v{last}")
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT taskboard.version()").fetchone() == ("9.9.9",)
        assert conn.execute("SELECT taskboard.release_probe()").fetchone() == ("probe 9.9.9",)
        assert conn.execute("SELECT to_regclass('taskboard.probe')").fetchone() == (
            "taskboard.probe",
        )

    # verify catches a function changed by hand: its contract, then its body
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("COMMENT ON FUNCTION taskboard.version() IS 'x'")
    failed = run_sqitch(url, "verify", *since_last, project=project)
    assert failed.returncode != 0
    assert "taskboard.version() does not have the contract this release deploys" in (
        failed.stdout + failed.stderr
    )
    with psycopg.connect(url, autocommit=True) as conn:
        body = conn.execute(
            "SELECT pg_get_functiondef('taskboard.get_job(bigint)'::regprocedure)"
        ).fetchone()
        assert body is not None
        conn.execute(str(body[0]).replace("RETURN v_job;", "RETURN v_job; -- by hand"))
    failed = run_sqitch(url, "verify", *since_last, project=project)
    assert failed.returncode != 0
    assert "taskboard.get_job(bigint) does not have the body this release deploys" in (
        failed.stdout + failed.stderr
    )

    back = run_sqitch(url, "revert", "-y", "--to", f"@v{last}", project=project)
    assert back.returncode == 0, back.stdout + back.stderr
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT taskboard.version()").fetchone() == (last,)
        assert conn.execute("SELECT to_regclass('taskboard.probe')").fetchone() == (None,)
        assert conn.execute("SELECT to_regprocedure('taskboard.release_probe()')").fetchone() == (
            None,
        )
    assert release.functions_of(url) == release.released_functions(last)

    # A function this layout's releases added may go again in the next one.
    assert run_sqitch(url, "deploy", project=project).returncode == 0
    tagged = subprocess.run(
        ["sqitch", "tag", "v9.9.9", "-n", "the probe"],
        cwd=project,
        env={**os.environ, **release.PLANNER},
        capture_output=True,
        text=True,
        check=False,
    )
    assert tagged.returncode == 0, tagged.stderr
    (functions / "release_probe.sql").unlink()
    (project / "next" / "deploy.sql").unlink()
    (project / "next" / "revert.sql").unlink()
    assert release.main(["write", "9.9.10", "no probe"]) == 0
    assert (
        "DROP FUNCTION taskboard.release_probe();"
        in (project / "deploy" / "version.sql").read_text()
    )
    done = run_sqitch(url, "deploy", "--verify", project=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert run_sqitch(url, "verify", *since_last, project=project).returncode == 0
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regprocedure('taskboard.release_probe()')").fetchone() == (
            None,
        )

    capsys.readouterr()
    (functions / "version.sql").write_text(
        (functions / "version.sql").read_text().replace("9.9.10", "9.9.11")
    )
    assert release.main(["check"]) == 1
    assert "db/deploy/version.sql is stale: run make schema" in capsys.readouterr().err


def test_without_a_pending_release_the_files_must_be_the_last_releases(
    project: Path,
) -> None:
    get_job = project / "functions" / "get_job.sql"
    get_job.write_text(get_job.read_text().replace("A row of NULLs", "A row of NULLs, always,"))
    with pytest.raises(release.ReleaseError, match=r"differs from release .* \(get_job\): name"):
        release.main(["check"])
