"""Fixtures of the dashboard's tests: a deployed database and logins of its roles."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.database import MakeDatabase, login_role


@pytest.fixture
def deployed(make_database: MakeDatabase) -> str:
    return make_database(deploy=True)


@pytest.fixture
def admin_url(deployed: str) -> Iterator[str]:
    with login_role(deployed, "taskboard_admin") as url:
        yield url


@pytest.fixture
def producer_url(deployed: str) -> Iterator[str]:
    with login_role(deployed, "taskboard_producer") as url:
        yield url
