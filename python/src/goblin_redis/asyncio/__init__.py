"""Goblin's lock commands for redis-py's asyncio client: :mod:`goblin_redis.asyncio.lock`'s
``Lock`` and ``Semaphore``."""
