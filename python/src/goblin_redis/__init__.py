"""Goblin's native rate-limit commands from Python.

``import goblin_redis.limits`` registers the ``goblin://`` storages of the ``limits`` library
(beneath Flask-Limiter and slowapi): every rate-limit decision is one Goblin command, with no
Lua and no MULTI. ``goblin_redis.lock`` (and ``goblin_redis.asyncio.lock``) holds redis-py's
``Lock`` on Goblin's lock commands, whose waiters wait in line inside the server, and a
``Semaphore``.
``goblin_redis.ratelimit`` checks sets of GCRA policies in one GOBLIN.MGCRA call, all or
nothing, and renders the IETF ``RateLimit`` fields.
"""

__version__ = "0.1.0"

#: The Goblin module this package needs, as ``MODULE LIST`` reports its version: at least this
#: (300 is Goblin 0.3.0, the first with COST, GOBLIN.ZWSTATS, GOBLIN.SWINDOW and GOBLIN.SWSTATS).
#: The storages check it on their first call to the server.
__module_version__ = 300

__all__ = ["__module_version__", "__version__"]
