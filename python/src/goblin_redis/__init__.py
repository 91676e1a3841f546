"""Goblin's native rate-limit and lock commands from Python.

``goblin_redis.lock`` (and ``goblin_redis.asyncio.lock``) holds redis-py's ``Lock`` on Goblin's
lock commands, whose waiters wait in line inside the server, and a ``Semaphore``.
``goblin_redis.ratelimit`` checks sets of GCRA policies in one GOBLIN.MGCRA call, all or
nothing, and renders the IETF ``RateLimit`` fields. Both need only redis-py.
``import goblin_redis.limits`` (``pip install goblin-redis[limits]``) registers the
``goblin://`` storages of the ``limits`` library (beneath Flask-Limiter and slowapi): every
rate-limit decision is one Goblin command, with no Lua and no MULTI.

A server without the Goblin module, or with one older than this package, is a
:class:`GoblinModuleError` at the first call of any of them.
"""

# The Goblin module's own version (Cargo.toml's): the package and the module are released together.
__version__ = "0.4.0"

#: The Goblin module this package needs, as ``MODULE LIST`` reports its version (major * 10000 +
#: minor * 100 + patch): at least the package's own, 400 for 0.4.0. Every entry point checks it
#: once per client, before its first command (``goblin_redis._commands``).
__module_version__ = sum(int(part) * scale for part, scale in zip(__version__.split("."), (10000, 100, 1), strict=True))

# After the versions: the vocabulary reads __module_version__.
from ._commands import GoblinModuleError

__all__ = ["GoblinModuleError", "__module_version__", "__version__"]
