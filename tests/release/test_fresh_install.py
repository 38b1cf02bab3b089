"""A fresh install and the upgrade chain leave the same schema, by pg_dump --schema-only.

The fresh install is the one script `taskboard sql` prints (what a team whose
migrations run through another tool applies), run by a managed service's
deploying login; the chain is `sqitch deploy --to @vX` release after release
from the first, as a database that lived through every release was upgraded,
then the rest of the plan. Each release's change is written from
db/functions/ (taskboard_dev.release), so this is also the proof that the
written changes add up to the sources.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from taskboard import install
from taskboard_dev import schema
from tests.support.cli import run
from tests.support.database import DB_DIR, MakeDatabase, run_sqitch
from tests.support.install import Domain, psql


@pytest.fixture
def domain(server_url: str) -> Iterator[Domain]:
    made = Domain(server_url)
    yield made
    made.drop()


def test_a_fresh_install_dumps_as_the_upgrade_chain_does(
    make_database: MakeDatabase, domain: Domain
) -> None:
    url = domain.database()
    script = run(None, "sql", "--prefix", domain.prefix)
    assert script.returncode == 0, script.stderr
    done = psql(domain.deployer(url), script.stdout)
    assert done.returncode == 0, done.stderr
    # The domain's roles under the default prefix's names, as the chain has them.
    rename = re.compile(rf"\b{re.escape(domain.prefix)}_(owner|producer|worker|admin)\b")
    fresh = rename.sub(r"taskboard_\1", schema.dump(url))

    chained = make_database(release=install.releases(DB_DIR)[-1])
    rest = run_sqitch(chained, "deploy", "--verify")  # what the plan holds after the last tag
    assert rest.returncode == 0, rest.stdout + rest.stderr

    assert "CREATE FUNCTION taskboard.claim(" in fresh
    assert fresh == schema.dump(chained)
