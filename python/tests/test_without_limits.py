"""goblin-redis without limits, as ``pip install goblin-redis`` leaves it (limits is the
``limits`` extra): the locks and the policy sets import and serve with redis-py alone, their one
error is a plain Exception there, and ``import goblin_redis.limits`` says which extra to install.
tests/python_locks.rs runs it in .servers/venv-locks, which has redis-py and no limits.

    GOBLIN_TEST_SERVER=127.0.0.1:PORT .servers/venv-locks/bin/pytest python/tests/test_without_limits.py
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import pytest
from servers import connect

if importlib.util.find_spec("limits") is not None:
    pytest.skip("limits is installed here: run this in .servers/venv-locks", allow_module_level=True)


def test_the_locks_and_the_policy_sets_import_without_limits() -> None:
    for name in ("goblin_redis", "goblin_redis.lock", "goblin_redis.asyncio.lock", "goblin_redis.ratelimit"):
        importlib.import_module(name)
    assert not any(name == "limits" or name.startswith("limits.") for name in sys.modules)
    import goblin_redis

    assert goblin_redis.GoblinModuleError.__mro__[1] is Exception


def test_goblin_redis_limits_says_which_extra_to_install() -> None:
    with pytest.raises(ImportError, match=r"pip install 'goblin-redis\[limits\]'"):
        importlib.import_module("goblin_redis.limits")
    assert "goblin_redis.limits" not in sys.modules


def test_they_serve_without_limits() -> None:
    from goblin_redis.lock import Lock, Semaphore
    from goblin_redis.ratelimit import Policy, PolicySet, key

    r = connect()
    r.delete("{nolimits}:minute", "nolimits:lock", "nolimits:sem")
    assert PolicySet(r, [Policy("minute", key("nolimits", "minute"), limit=2, period=60)]).hit(cost=2).allowed
    with Lock(r, "nolimits:lock", timeout=5), Semaphore(r, "nolimits:sem", limit=1, lease=5):
        assert r.exists("nolimits:lock", "nolimits:sem") == 2
    assert r.exists("nolimits:lock", "nolimits:sem") == 0
    r.delete("{nolimits}:minute")
    r.close()


def test_the_module_version_is_the_packages() -> None:
    """``__module_version__`` is read from ``__version__`` (major * 10000 + minor * 100 + patch),
    and the server's Goblin is at least that."""
    import goblin_redis

    major, minor, patch = (int(part) for part in goblin_redis.__version__.split("."))
    assert goblin_redis.__module_version__ == major * 10000 + minor * 100 + patch
    modules: list[dict[bytes, Any]] = connect().module_list()
    assert next(int(m[b"ver"]) for m in modules if m[b"name"] == b"goblin") >= goblin_redis.__module_version__
