"""The session's reference runs, shared by the check tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.checks.support import Runs


@pytest.fixture(scope="session")
def runs() -> Iterator[Runs]:
    cache = Runs()
    yield cache
    cache.close()
