"""Goblin beneath ``limits``: importing this module registers the storage schemes

- ``goblin://``, ``goblins://``, ``goblin+unix://``: :class:`GoblinStorage`, on redis-py;
- ``goblin+cluster://``: :class:`GoblinClusterStorage`;
- ``async+goblin://`` (and ``async+goblins://``, ``async+goblin+unix://``):
  :class:`AsyncGoblinStorage`, on coredis or, with ``implementation="redispy"``, redis-py;
- ``async+goblin+cluster://``: :class:`AsyncGoblinClusterStorage`.

Each implements limits' ``Storage``, ``MovingWindowSupport`` and
``SlidingWindowCounterSupport``; every decision (``incr``, ``acquire_entry``,
``acquire_sliding_window_entry``) is one Goblin command, with no Lua and no MULTI::

    import goblin_redis.limits  # noqa: F401  (registers the schemes)
    from limits import storage, strategies, parse

    limiter = strategies.MovingWindowRateLimiter(storage.storage_from_string("goblin://localhost:6379"))
    limiter.hit(parse("10/second"), "user42")

It needs limits (``pip install goblin-redis[limits]``). A server without Goblin, or with one
older than this package, is a :class:`GoblinModuleError` (a limits ``ConfigurationError``) at a
storage's first call.
"""

try:
    import limits  # noqa: F401
except ImportError as exc:  # limits is an extra: the locks and the policy sets do without it
    raise ImportError(
        "goblin_redis.limits is a storage for the limits library, which is not installed: "
        "pip install 'goblin-redis[limits]' (or goblin-redis[redis], goblin-redis[async-redis] "
        "for limits' client extras)",
        name=exc.name,
    ) from exc

from .._commands import GoblinModuleError
from ._aio import AsyncGoblinClusterStorage, AsyncGoblinStorage
from ._shared import PREFIX
from ._sync import GoblinClusterStorage, GoblinStorage

__all__ = [
    "PREFIX",
    "AsyncGoblinClusterStorage",
    "AsyncGoblinStorage",
    "GoblinClusterStorage",
    "GoblinModuleError",
    "GoblinStorage",
]
