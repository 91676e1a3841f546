"""The servers the package's tests run against, as the Rust tests that run them
(tests/python_locks.rs, tests/python_limits.rs) name them in the environment:

- ``GOBLIN_TEST_SERVER`` (host:port, 127.0.0.1:6379 by default): a server with Goblin loaded;
- ``GOBLIN_TEST_BARE`` (host:port): a server without the module, or nothing.

The fixtures over them are in conftest.py.
"""

from __future__ import annotations

import os
from typing import Any

import redis
import redis.asyncio

SERVER = os.environ.get("GOBLIN_TEST_SERVER", "127.0.0.1:6379")
BARE = os.environ.get("GOBLIN_TEST_BARE", "")


def host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def connect(address: str = SERVER, **options: Any) -> Any:
    """A redis-py client of ``address``."""
    host, port = host_port(address)
    return redis.Redis(host=host, port=port, **options)


def connect_async(address: str = SERVER, **options: Any) -> Any:
    """A redis-py asyncio client of ``address``."""
    host, port = host_port(address)
    return redis.asyncio.Redis(host=host, port=port, **options)
