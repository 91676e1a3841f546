"""redis-py 8.1.0's asyncio lock tests (its ``tests/test_asyncio/test_lock.py``, unmodified) on
:class:`goblin_redis.asyncio.lock.Lock`. ``redispy_suite.py`` copies this file into the
unpacked sdist as ``tests/test_asyncio/test_goblin_lock.py``, beside the suite's file."""

import importlib
from typing import Any

from goblin_redis.asyncio.lock import Lock

_suite: Any = importlib.import_module(".test_lock", __package__)


class TestGoblinLock(_suite.TestLock):  # type: ignore[misc]
    def get_lock(self, redis: Any, *args: Any, **kwargs: Any) -> Lock:
        kwargs["lock_class"] = Lock
        lock: Lock = redis.lock(*args, **kwargs)
        return lock
