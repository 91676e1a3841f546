"""The fixtures the package's tests share, over the servers of ``servers.py``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from servers import BARE, connect


@pytest.fixture
def server() -> Iterator[Any]:
    """A client of the server with Goblin, the server emptied and its statistics reset first."""
    client = connect()
    client.flushall()
    client.config_resetstat()
    yield client
    client.close()


@pytest.fixture
def bare() -> Iterator[Any]:
    """A client of the server without the module, its statistics reset once its connection is
    made (CLIENT SETINFO and the like): a test that asks for it is skipped where there is none,
    and the Rust tests that run the package's tests fail a run with a skip."""
    if not BARE:
        pytest.skip("GOBLIN_TEST_BARE is not set")
    client = connect(BARE)
    client.ping()
    client.config_resetstat()
    yield client
    client.close()
