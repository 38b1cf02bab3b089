"""What users install, used as they use it: `make test-installed` (part of `make test`).

Builds the sdist and the wheel from this checkout (the wheel once from the
checkout and once from the sdist: they must hold the same files), checks
that the wheel holds every runtime module and data file and nothing of
development, then installs it into fresh virtualenvs without the dev
extras and runs what a user runs, from a directory outside the checkout
(so the source tree cannot be imported), against fresh databases of the
dev server:

- the wheel, no extras, no `sqitch` on PATH: `taskboard --help`,
  `taskboard migrate --prefix` as a CREATEROLE CREATEDB login (the SQL the
  package carries), `taskboard enqueue`, `taskboard worker` running the
  README's first example to success, `python myapp.py` as the README says,
  one SIGTERM stopping the worker, `taskboard jobs`;
- the sdist, no extras, with Sqitch on PATH: the same, migrate through Sqitch;
- the wheel with every extra: every module of the package imports, the
  dashboard serves its overview, a worker serves /metrics, and pytest runs
  a user's tests (examples/testing) with the taskboard plugin, its test
  databases made by a CREATEROLE CREATEDB login.

Each database gets roles of its own prefix (one set of roles is one trust
domain), dropped with the databases at the end. Exit status 1 at the first
check that fails, with what it saw.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg import sql

from taskboard_dev import devdb, server

ROOT = devdb.project_root()
PACKAGE = ROOT / "pydriver" / "taskboard"
README = ROOT / "README.md"
DATA = (
    "sqitch.conf",
    "sqitch.plan",
    "deploy/*.sql",
    "revert/*.sql",
    "verify/*.sql",
    "functions/*.sql",
)
TIMEOUT_SECONDS = 120  # any one command
JOB_DEADLINE_SECONDS = 60
STOP_DEADLINE_SECONDS = 30  # the worker's exit after one SIGTERM
PREFIX = "tbinstalled"  # roles tbinstalled_<kind>_owner, ...; databases the same


class CheckFailed(Exception):
    pass


def say(text: str) -> None:
    print(f"== {text}", flush=True)


def check(ok: bool, what: str, seen: object = "") -> None:
    if not ok:
        raise CheckFailed(f"{what}\n{seen}".rstrip())


def run(
    argv: list[str], *, cwd: Path, env: dict[str, str], ok: bool = True, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    if ok:
        check(
            done.returncode == 0,
            f"`{' '.join(argv)}` exited {done.returncode}",
            done.stdout + done.stderr,
        )
    return done


# -- building -------------------------------------------------------------------------------


def build(work: Path) -> tuple[Path, Path]:
    """The sdist and the wheel built from it; a second wheel, from the checkout, must match."""
    from_sdist, direct = work / "dist", work / "dist-direct"
    python = [sys.executable, "-m", "build", "--outdir"]
    env = {**os.environ, "PYTHONPATH": ""}
    say("python -m build --sdist --wheel (the wheel from the sdist)")
    run([*python, str(from_sdist), "--sdist", "--wheel", str(ROOT)], cwd=work, env=env)
    say("python -m build --wheel (from the checkout)")
    run([*python, str(direct), "--wheel", str(ROOT)], cwd=work, env=env)
    (sdist,) = from_sdist.glob("*.tar.gz")
    (wheel,) = from_sdist.glob("*.whl")
    (other,) = direct.glob("*.whl")
    check(
        files(wheel) == files(other),
        "the wheel built from the sdist differs from the one built from the checkout",
        sorted(set(files(wheel).items()) ^ set(files(other).items())),
    )
    return sdist, wheel


def files(wheel: Path) -> dict[str, str]:
    """Each file of the wheel but its RECORD, with its SHA-256."""
    with zipfile.ZipFile(wheel) as archive:
        return {
            name: hashlib.sha256(archive.read(name)).hexdigest()
            for name in archive.namelist()
            if not name.endswith("/RECORD")
        }


def expected_files() -> set[str]:
    """What the wheel must hold of the package: every module, template and Sqitch file."""
    wanted = {f"taskboard/{p.relative_to(PACKAGE)}" for p in PACKAGE.rglob("*.py")}
    wanted |= {f"taskboard/web/templates/{p.name}" for p in (PACKAGE / "web/templates").iterdir()}
    wanted.add("taskboard/py.typed")
    for pattern in DATA:
        wanted |= {
            f"taskboard/db/{p.relative_to(ROOT / 'db')}" for p in (ROOT / "db").glob(pattern)
        }
    return {name for name in wanted if "__pycache__" not in name}


def check_wheel(wheel: Path) -> None:
    say(f"{wheel.name}: every runtime file, nothing of development")
    held = {name for name in files(wheel) if not name.startswith("taskboard_pg-")}
    wanted = expected_files()
    check(wanted <= held, "the wheel lacks files", sorted(wanted - held))
    check(held <= wanted, "the wheel holds files that are not the runtime's", sorted(held - wanted))


# -- the database ---------------------------------------------------------------------------


class Databases:
    """Fresh databases of the dev server, each with roles of its own prefix, and a login."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.names: list[str] = []

    def fresh(self, name: str) -> tuple[str, str]:
        """A new database `PREFIX_name`: the URL of its deployer (CREATEROLE CREATEDB) and the
        URL of the app's login, which gets every Taskboard role once `grant` runs."""
        database = f"{PREFIX}_{name}"
        self.drop(database)
        self.names.append(database)
        url = server.recreate_database(self.base_url, database)
        deployer = server.managed_deployer(url, f"{database}_deployer", prefix=database)
        return deployer, server.as_user(url, f"{database}_app")

    def grant(self, name: str) -> None:
        """Make the app's login of database `PREFIX_name`, holding its producer, worker and
        admin roles."""
        database = f"{PREFIX}_{name}"
        with psycopg.connect(self.base_url, autocommit=True) as conn:
            login = sql.Identifier(f"{database}_app")
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(login))
            for kind in ("producer", "worker", "admin"):
                role = sql.Identifier(f"{database}_{kind}")
                conn.execute(sql.SQL("GRANT {} TO {}").format(role, login))

    def drop(self, database: str) -> None:
        with psycopg.connect(self.base_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
            )
            roles = [
                name
                for (name,) in conn.execute(
                    "SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)", [database + "_"]
                )
            ]
            for role in roles:
                conn.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(sql.Identifier(role)))
            for role in roles:
                conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))

    def drop_all(self) -> None:
        for database in self.names:
            self.drop(database)


# -- a user's machine -------------------------------------------------------------------------


class Install:
    """A fresh virtualenv holding one install of taskboard-pg, and a work directory outside
    the checkout holding the README's first example as myapp.py."""

    def __init__(self, work: Path, name: str, requirement: str, *, sqitch: bool) -> None:
        self.dir = work / name
        self.venv = self.dir / "venv"
        self.home = self.dir / "app"
        self.home.mkdir(parents=True)
        (self.home / "myapp.py").write_text(readme_example())
        say(f"{name}: pip install {Path(requirement).name} into a fresh venv")
        run([sys.executable, "-m", "venv", str(self.venv)], cwd=self.dir, env=dict(os.environ))
        run(
            [
                str(self.bin("pip")),
                "install",
                "--quiet",
                "--disable-pip-version-check",
                requirement,
            ],
            cwd=self.dir,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
        # No sqitch: the venv's own bin alone. With it: the venv's bin before the system's.
        self.path = str(self.venv / "bin")
        if sqitch:
            self.path += ":/usr/local/bin:/usr/bin:/bin"
        check(
            (shutil.which("sqitch", path=self.path) is not None) == sqitch,
            f"sqitch {'missing from' if sqitch else 'found on'} PATH {self.path}",
        )

    def bin(self, name: str) -> Path:
        return self.venv / "bin" / name

    def env(self, database_url: str | None = None, **settings: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("TASKBOARD_", "PG", "VIRTUAL_ENV")) and k != "PYTHONPATH"
        }
        env["PATH"] = self.path
        if database_url is not None:
            env["TASKBOARD_DATABASE_URL"] = database_url
        env.update({f"TASKBOARD_{k.upper()}": v for k, v in settings.items()})
        return env

    def taskboard(
        self, database_url: str | None, *args: str, ok: bool = True, **settings: str
    ) -> subprocess.CompletedProcess[str]:
        return run(
            [str(self.bin("taskboard")), *args],
            cwd=self.home,
            env=self.env(database_url, **settings),
            ok=ok,
        )

    def python(self, database_url: str | None, *args: str) -> subprocess.CompletedProcess[str]:
        return run([str(self.bin("python")), *args], cwd=self.home, env=self.env(database_url))

    @contextmanager
    def worker(self, database_url: str, **settings: str) -> Iterator[subprocess.Popen[str]]:
        """`taskboard worker myapp:app` in the background; one SIGTERM must stop it."""
        process = subprocess.Popen(
            [str(self.bin("taskboard")), "worker", "myapp:app"],
            cwd=self.home,
            env=self.env(database_url, **settings),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            yield process
            if process.poll() is not None:
                raise CheckFailed(f"the worker exited early\n{process.communicate()[0]}")
            process.send_signal(signal.SIGTERM)
            try:
                output, _ = process.communicate(timeout=STOP_DEADLINE_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                raise CheckFailed(
                    f"the worker did not exit within {STOP_DEADLINE_SECONDS} s of one SIGTERM"
                ) from None
            check(process.returncode == 0, f"the worker exited {process.returncode}", output)
            check("Traceback" not in output, "the worker logged a traceback", output)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def readme_example() -> str:
    """The README's first Python example (the block that starts with `# myapp.py`)."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    check(bool(blocks) and blocks[0].startswith("# myapp.py\n"), "README: no myapp.py example")
    return str(blocks[0])


def wait_for_job(install: Install, url: str, job_id: str) -> dict[str, object]:
    deadline = time.monotonic() + JOB_DEADLINE_SECONDS
    while True:
        job = json.loads(install.taskboard(url, "job", job_id, "--json").stdout)
        assert isinstance(job, dict)
        if job["state"] not in ("queued", "running"):
            return job
        check(time.monotonic() < deadline, f"job {job_id} unfinished after a minute", job)
        time.sleep(0.2)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str, deadline_seconds: float = 30) -> str:
    """The body of `url` once it answers 200."""
    deadline = time.monotonic() + deadline_seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return str(response.read().decode())
        except OSError as exc:
            check(time.monotonic() < deadline, f"{url} did not answer", exc)
            time.sleep(0.2)


# -- the checks -------------------------------------------------------------------------------


def user_story(install: Install, databases: Databases, name: str, *, sqitch: bool) -> None:
    """--help, migrate, enqueue, a worker running the README's example, jobs."""
    help_text = install.taskboard(None, "--help").stdout
    check("migrate" in help_text and "worker" in help_text, "taskboard --help", help_text)
    where = install.python(None, "-c", "import taskboard; print(taskboard.__file__)").stdout
    check(where.startswith(str(install.venv)), "taskboard is imported from elsewhere", where)

    deployer, app = databases.fresh(name)
    prefix = f"{PREFIX}_{name}"
    say(f"{name}: taskboard migrate --prefix {prefix}, as a CREATEROLE CREATEDB login")
    done = install.taskboard(deployer, "migrate", "--prefix", prefix)
    path = "With Sqitch" if sqitch else "Sqitch is not on PATH"
    check(done.stdout.startswith(path), f"migrate did not say: {path}", done.stdout)
    databases.grant(name)

    say(f"{name}: taskboard enqueue, and taskboard worker myapp:app runs it")
    job_id = install.taskboard(
        app, "enqueue", "send_email", '{"to": "maya@example.com"}', "--app", "myapp:app"
    ).stdout.strip()
    with install.worker(app):
        job = wait_for_job(install, app, job_id)
        check(job["state"] == "succeeded" and job["result"] == {"sent": True}, "the job", job)
        say(f"{name}: python myapp.py, as the README says")
        printed = install.python(app, "myapp.py").stdout.split()
        check(printed[1:] == ["{'sent':", "True}"], "python myapp.py printed", printed)
    jobs = install.taskboard(app, "jobs").stdout
    check(job_id in jobs and "succeeded" in jobs, "taskboard jobs", jobs)


def every_extra(install: Install, databases: Databases) -> None:
    """Every module imports; the dashboard serves its overview; a worker serves /metrics."""
    say("every extra: each module of the package imports")
    walked = install.python(
        None,
        "-c",
        "import importlib, pkgutil, taskboard\n"
        "for m in pkgutil.walk_packages(taskboard.__path__, 'taskboard.'):\n"
        "    if m.name != 'taskboard.__main__':  # importing it runs the command\n"
        "        importlib.import_module(m.name)\n"
        "    print(m.name)\n",
    ).stdout.split()
    modules = {
        ".".join(("taskboard", *p.relative_to(PACKAGE).with_suffix("").parts))
        for p in PACKAGE.rglob("*.py")
    }
    modules = {m.removesuffix(".__init__") for m in modules} - {"taskboard"}
    check(set(walked) == modules, "the modules imported", sorted(set(walked) ^ modules))

    deployer, app = databases.fresh("extras")
    install.taskboard(deployer, "migrate", "--prefix", f"{PREFIX}_extras")
    databases.grant("extras")
    install.taskboard(app, "enqueue", "send_email", '{"to": "a@example.com"}', "--queue", "emails")

    say("every extra: taskboard dashboard serves its overview")
    port = free_port()
    dashboard = subprocess.Popen(
        [str(install.bin("taskboard")), "dashboard", "--port", str(port)],
        cwd=install.home,
        env=install.env(app),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        page = get(f"http://127.0.0.1:{port}/")
        check("emails" in page, "the overview names no queue emails", page[:2000])
    finally:
        dashboard.terminate()
        dashboard.wait(timeout=STOP_DEADLINE_SECONDS)

    say("every extra: a worker serves /metrics")
    port = free_port()
    with install.worker(app, metrics_port=str(port)):
        metrics = get(f"http://127.0.0.1:{port}/metrics")
        check("taskboard_" in metrics, "/metrics has no taskboard_ metric", metrics[:2000])


def users_tests(install: Install, databases: Databases) -> None:
    """pytest runs examples/testing, a user's suite, with the plugin of the installed package
    (entry point pytest11), on test databases a CREATEROLE CREATEDB login makes."""
    say("every extra: pytest runs a user's tests with the taskboard plugin")
    suite = install.home / "testing"
    shutil.copytree(
        ROOT / "examples" / "testing", suite, ignore=shutil.ignore_patterns("__pycache__", ".*")
    )
    deployer, _ = databases.fresh("plugin")
    env = {**install.env(), "TASKBOARD_TEST_DATABASE_URL": deployer}
    done = run([str(install.bin("python")), "-m", "pytest", "-q"], cwd=suite, env=env)
    check(" passed" in done.stdout and "failed" not in done.stdout, "pytest", done.stdout)


def main() -> int:
    work = devdb.state_dir() / "installed"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    base_url = devdb.base_url("18")
    databases = Databases(base_url)
    try:
        sdist, wheel = build(work)
        check_wheel(wheel)
        wheel_install = Install(work, "wheel", str(wheel), sqitch=False)
        user_story(wheel_install, databases, "wheel", sqitch=False)
        sdist_install = Install(work, "sdist", str(sdist), sqitch=True)
        user_story(sdist_install, databases, "sdist", sqitch=True)
        full = Install(work, "extras", f"{wheel}[web,metrics,otel,testing]", sqitch=False)
        every_extra(full, databases)
        users_tests(full, databases)
    except CheckFailed as exc:
        print(f"make test-installed: FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        databases.drop_all()
    say("what users install works")
    return 0


if __name__ == "__main__":
    sys.exit(main())
