"""The dev PostgreSQL servers under ``.taskboard/``, for development and tests.

Run as ``python -m taskboard_dev.devdb COMMAND [--pg 18|15]``:

- ``start``: initialise and start the dev server if needed, make sure pgTAP's
  extension files are installed in it, print its URL (and nothing else on
  stdout).
- ``stop``: stop the dev server if it is running (the standard library is
  enough: no venv needed).
- ``url``: print the URL of the running server; exit 1 when it is not running.
- ``recreate-db NAME``: drop and create database NAME with pgTAP in it, print
  its URL.
- ``deployer URL``: make the login a managed server gives (CREATEROLE and
  CREATEDB, not superuser) the owner of URL's database, print URL as it.
- ``pg-env URL``: print ``export PGHOST=...`` lines saying the same as URL,
  for clients that take no URI (pg_prove).

Each server is a `taskboard_dev.server.Server` whose data directory is
``.taskboard/pgNN`` at the project root; it keeps running until ``stop``.

When ``TASKBOARD_DATABASE_URL`` is set, that server is used and no dev
server is ever started.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shlex
import shutil
import sys
from pathlib import Path
from urllib.parse import urlsplit

from taskboard_dev import server
from taskboard_dev.server import (
    DEFAULT_VERSION,
    VERSIONS,
    Flavour,
    Server,
    ServerError,
    as_root,
    database_url,
    flavour,
    log_to_stderr,
    run,
)

__all__ = [  # with what this module takes from taskboard_dev.server for its users
    "DATABASE_URL_ENV",
    "DEFAULT_VERSION",
    "ROOT_ENV",
    "VERSIONS",
    "ServerError",
    "base_url",
    "database_url",
    "dev_server",
    "ensure_pgtap",
    "libpq_env",
    "project_root",
    "recreate_database",
    "running_url",
    "sqitch_target",
    "start",
    "stop",
]

log = logging.getLogger("taskboard_dev.devdb")  # also when run as __main__

DATABASE_URL_ENV = "TASKBOARD_DATABASE_URL"
ROOT_ENV = "TASKBOARD_ROOT"  # overrides where .taskboard/ and db/ are found
PGTAP_DEB_PATTERN = r"^postgresql-[0-9]+-pgtap$"
DATABASE_NAME_PATTERN = r"^[a-z_][a-z0-9_]{0,62}$"
DEPLOYER = "taskboard_deployer"  # the Makefile's deploying login: no superuser


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


def dev_server(version: str = DEFAULT_VERSION) -> Server:
    """The dev server for `version`: data directory .taskboard/pg`version`."""
    return Server(version=version, datadir=state_dir() / f"pg{version}")


def running_url(version: str) -> str | None:
    """Return the URL of the running dev server for `version`, or None."""
    dev = dev_server(version)
    return dev.url() if dev.running() else None


def start(version: str = DEFAULT_VERSION) -> str:
    """Start the dev server for `version` if needed and return its URL.

    Idempotent. With TASKBOARD_DATABASE_URL set, returns that URL and starts
    nothing.
    """
    env_url = os.environ.get(DATABASE_URL_ENV)
    if env_url:
        log.info("%s is set: using that server, starting none", DATABASE_URL_ENV)
        return env_url
    ensure_pgtap(flavour(version))
    return dev_server(version).start()


def stop(version: str = DEFAULT_VERSION) -> bool:
    """Stop the dev server for `version` (fast shutdown).

    Returns False when it was not running. Needs no PostgreSQL binaries: the
    postmaster is sent SIGINT, so this works after the venv is gone.
    """
    return dev_server(version).stop("fast")


# -- pgTAP --------------------------------------------------------------------


def ensure_pgtap(fl: Flavour) -> None:
    """Install pgTAP's extension files into the server's share directory
    when missing, from Debian's postgresql-NN-pgtap package (plain SQL)."""
    sharedir = Path(run([str(fl.bin_dir / "pg_config"), "--sharedir"]).stdout.strip())
    extension_dir = sharedir / "extension"
    if (extension_dir / "pgtap.control").exists():
        return
    source = _pgtap_files()
    log.info("installing pgTAP into %s", extension_dir)
    try:
        for path in sorted(source.glob("pgtap*")):
            shutil.copy2(path, extension_dir / path.name)
    except PermissionError as exc:
        raise ServerError(
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
        raise ServerError(
            "pgTAP is missing and apt-get is not available to fetch it: "
            "install pgTAP (https://pgtap.org) into the server's share/extension."
        )
    cache.mkdir(parents=True, exist_ok=True)
    debs = sorted(cache.glob("postgresql-*-pgtap_*.deb"))
    if not debs:
        package = _pgtap_package()
        log.info("downloading %s", package)
        download = ["apt-get", "download", package]
        if as_root():
            download[1:1] = ["-o", "APT::Sandbox::User=root"]
        run(download, cwd=cache)
        debs = sorted(cache.glob("postgresql-*-pgtap_*.deb"))
        if not debs:
            raise ServerError(f"apt-get download {package} left no .deb in {cache}")
    shutil.rmtree(unpacked, ignore_errors=True)
    run(["dpkg-deb", "-x", str(debs[-1]), str(unpacked)])
    found = sorted(unpacked.rglob("pgtap.control"))
    if not found:
        raise ServerError(f"{debs[-1].name} holds no pgtap.control")
    return found[-1].parent


def _pgtap_package() -> str:
    """Return the newest postgresql-NN-pgtap package apt knows of
    (its SQL does not depend on the server version it was built for)."""

    def search() -> list[str]:
        out = run(["apt-cache", "--names-only", "search", PGTAP_DEB_PATTERN]).stdout
        names = [line.split()[0] for line in out.splitlines() if line.strip()]
        return sorted(names, key=lambda name: int(name.split("-")[1]))

    names = search()
    if not names and as_root():
        log.info("apt-get update (to find pgTAP)")
        run(["apt-get", "update"])
        names = search()
    if not names:
        raise ServerError(
            "apt knows no postgresql-NN-pgtap package: run apt-get update "
            "(as root) or install pgTAP into the server's share/extension."
        )
    return names[-1]


# -- databases ----------------------------------------------------------------


def sqitch_target(url: str) -> str:
    """Return the Sqitch target for libpq URI `url`.

    Sqitch's ``db:pg:`` URIs take the same authority, path and query as
    libpq's, and pass query parameters (such as host=/socket/dir) on to
    psql and DBD::Pg.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ServerError(f"not a postgresql:// URI: {url!r}")
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
        raise ServerError(f"bad connection string {url!r}: {exc}") from exc
    env: dict[str, str] = {}
    for key, value in params.items():
        if key not in envvars:
            raise ServerError(f"libpq has no environment variable for {key!r} (in {url!r})")
        env[envvars[key]] = str(value)
    return env


def base_url(version: str = DEFAULT_VERSION) -> str:
    """Return TASKBOARD_DATABASE_URL if set, else start the dev server."""
    return os.environ.get(DATABASE_URL_ENV) or start(version)


def recreate_database(name: str, version: str = DEFAULT_VERSION, *, pgtap: bool = True) -> str:
    """Drop and create database `name` (with pgTAP in it unless `pgtap` is
    False) and return its URL."""
    import psycopg  # here, so that `stop` works without the venv

    if not re.fullmatch(DATABASE_NAME_PATTERN, name):
        raise ServerError(f"database name {name!r} must match {DATABASE_NAME_PATTERN}")
    try:
        url = server.recreate_database(base_url(version), name)
        if pgtap:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pgtap")
    except psycopg.Error as exc:
        raise ServerError(f"cannot recreate database {name}: {exc}".strip()) from exc
    return url


# -- command line -------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m taskboard_dev.devdb", description="Throwaway PostgreSQL for development."
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
    named = commands.add_parser(
        "db-url", help="start the dev server if needed and print the URL of database NAME on it"
    )
    named.add_argument("name")
    named.add_argument("--pg", choices=VERSIONS, default=argparse.SUPPRESS)
    recreate = commands.add_parser("recreate-db", help="drop and create a database, print its URL")
    recreate.add_argument("name")
    recreate.add_argument("--pg", choices=VERSIONS, default=argparse.SUPPRESS)
    recreate.add_argument(
        "--no-pgtap", dest="pgtap", action="store_false", help="do not create extension pgtap"
    )
    deployer = commands.add_parser(
        "deployer", help="print URL logging in as a CREATEROLE, CREATEDB login owning its database"
    )
    deployer.add_argument("url")
    pg_env = commands.add_parser(
        "pg-env", help="print `export PGHOST=...` lines for a URL, for eval in a shell"
    )
    pg_env.add_argument("url")
    args = parser.parse_args(argv)
    log_to_stderr()
    try:
        if args.command == "start":
            print(start(args.pg))
        elif args.command == "stop":
            stop(args.pg)
        elif args.command == "url":
            url = os.environ.get(DATABASE_URL_ENV) or running_url(args.pg)
            if url is None:
                log.error("PostgreSQL %s is not running (start it with `make db`)", args.pg)
                return 1
            print(url)
        elif args.command == "db-url":
            print(database_url(start(args.pg), args.name))
        elif args.command == "recreate-db":
            print(recreate_database(args.name, args.pg, pgtap=args.pgtap))
        elif args.command == "deployer":
            print(server.managed_deployer(args.url, DEPLOYER))
        elif args.command == "pg-env":
            for name, value in libpq_env(args.url).items():
                print(f"export {name}={shlex.quote(value)}")
    except ServerError as exc:
        log.error("%s", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
