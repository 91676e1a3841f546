"""A lock that waits in line inside the server, for redis-py's asyncio client:
:class:`Lock`, a drop-in for ``redis.asyncio.lock.Lock``, as :class:`goblin_redis.lock.Lock`
is for the sync one::

    import redis.asyncio
    from goblin_redis.asyncio.lock import Lock

    r = redis.asyncio.Redis()
    async with r.lock("lock:report", timeout=30, blocking_timeout=5, lock_class=Lock):
        ...

Every operation is one Goblin command (``GOBLIN.LOCK``, ``GOBLIN.BLOCK``, ``GOBLIN.CAD``,
``GOBLIN.EXTEND``), with no Lua and no sleep loop. A task cancelled while it waits in line
closes its connection (redis-py does), and the server gives up its place.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal

import redis.asyncio.lock
from redis.typing import Number

from .. import _locking

__all__ = ["Lock"]


def _cancelling(task: asyncio.Task[Any] | None) -> int:
    """How many cancellations of ``task`` are pending (Python 3.11+; 0 before)."""
    count = getattr(task, "cancelling", None)
    return int(count()) if count is not None else 0


class Lock(redis.asyncio.lock.Lock):
    """``redis.asyncio.lock.Lock`` on Goblin's lock commands: the same constructor,
    attributes, methods, exceptions and key, for ``r.lock(name, ..., lock_class=Lock)``."""

    def register_scripts(self) -> None:
        """Nothing to register: no operation runs a script."""

    def _encode(self, token: str | bytes) -> bytes:
        client: Any = self.redis
        pool = getattr(client, "connection_pool", None)
        encoder = client.get_encoder() if pool is None else pool.get_encoder()  # a cluster has no pool
        encoded: bytes = encoder.encode(token)
        return encoded

    async def acquire(
        self,
        blocking: bool | None = None,
        blocking_timeout: Number | None = None,
        token: str | bytes | None = None,
    ) -> bool:
        """Take the lock; True once held. ``blocking`` False (or a ``blocking_timeout`` of
        0 or less): one ``GOBLIN.LOCK``. Otherwise wait in line inside the server
        (``GOBLIN.BLOCK``), up to ``blocking_timeout`` seconds (None: for ever)."""
        encoded = _locking.new_token() if token is None else self._encode(token)
        if blocking is None:
            blocking = self.blocking
        if blocking_timeout is None:
            blocking_timeout = self.blocking_timeout
        if await self._take(encoded, blocking, blocking_timeout):
            self.local.token = encoded
            return True
        return False

    async def _take(self, token: bytes, blocking: bool, blocking_timeout: Number | None) -> bool:
        ms = _locking.lease_ms(self.timeout)
        if not blocking or (blocking_timeout is not None and blocking_timeout <= 0):
            return _locking.granted(await self.redis.execute_command("GOBLIN.LOCK", self.name, token, ms))
        deadline = None if blocking_timeout is None else time.monotonic() + float(blocking_timeout)
        slice_length = _locking.slice_length(self.redis)
        task = asyncio.current_task()
        cancelling = _cancelling(task)
        while True:
            wait = slice_length
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                wait = min(wait, remaining)
            reply = await self.redis.execute_command("GOBLIN.BLOCK", self.name, token, ms, _locking.wait_argument(wait))
            if _cancelling(task) > cancelling:
                # The task was cancelled, and the cancellation lost on the way (redis-py's
                # asyncio read can swallow one that lands as a reply arrives): do not wait
                # on, and do not keep a lock granted meanwhile.
                if _locking.granted(reply):
                    await self.redis.execute_command("GOBLIN.CAD", self.name, token)
                raise asyncio.CancelledError
            if _locking.granted(reply):
                return True

    async def do_acquire(self, token: str | bytes) -> bool:
        """One attempt that does not wait (``GOBLIN.LOCK``)."""
        return await self._take(self._encode(token), False, None)

    async def do_release(self, expected_token: bytes) -> None:
        if not int(await self.redis.execute_command("GOBLIN.CAD", self.name, expected_token)):
            raise _locking.not_owned("Cannot release a lock that's no longer owned")

    async def do_extend(self, additional_time: Number, replace_ttl: bool) -> Literal[True]:
        """``GOBLIN.EXTEND [REPLACE]``; a time that is not positive is the server's
        ResponseError: an extend never deletes the lock."""
        args: list[Any] = [self.name, self.local.token, _locking.positive_ms(additional_time)]
        if replace_ttl:
            args.append("REPLACE")
        if not int(await self.redis.execute_command("GOBLIN.EXTEND", *args)):
            raise _locking.not_owned("Cannot extend a lock that's no longer owned")
        return True

    async def do_reacquire(self) -> Literal[True]:
        """``GOBLIN.EXTEND ... REPLACE``: the lease starts over at ``timeout``."""
        ms = _locking.lease_ms(self.timeout)
        if not int(await self.redis.execute_command("GOBLIN.EXTEND", self.name, self.local.token, ms, "REPLACE")):
            raise _locking.not_owned("Cannot reacquire a lock that's no longer owned")
        return True
