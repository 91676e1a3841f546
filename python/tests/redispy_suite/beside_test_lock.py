"""redis-py 8.1.0's sync lock tests (its ``tests/test_lock.py``, unmodified) on
:class:`goblin_redis.lock.Lock`. ``redispy_suite.py`` copies this file into the unpacked sdist
as ``tests/test_goblin_lock.py``, beside the suite's file, whose tests the subclass inherits:
only ``get_lock`` differs, passing ``lock_class``."""

import importlib
from typing import Any

from goblin_redis.lock import Lock

# The suite's module (beside this file in the sdist), not its class: a class bound here by name
# would be collected a second time, with redis-py's own Lock.
_suite: Any = importlib.import_module(".test_lock", __package__)


class TestGoblinLock(_suite.TestLock):  # type: ignore[misc]
    def get_lock(self, redis: Any, *args: Any, **kwargs: Any) -> Lock:
        kwargs["lock_class"] = Lock
        lock: Lock = redis.lock(*args, **kwargs)
        return lock
