"""Locks that wait in line inside the server, for redis-py's asyncio client: :class:`Lock`, a
drop-in for ``redis.asyncio.lock.Lock``, :class:`Semaphore`, N permits with leases, and
:class:`ReadWriteLock`, a readers-writer lock, as :mod:`goblin_redis.lock` has them for the sync
client::

    import redis.asyncio
    from goblin_redis.asyncio.lock import Lock, Semaphore

    r = redis.asyncio.Redis()
    async with r.lock("lock:report", timeout=30, blocking_timeout=5, lock_class=Lock):
        ...
    async with Semaphore(r, "sem:db", limit=3, lease=60):
        ...

Every operation is one Goblin command (``GOBLIN.LOCK``, ``GOBLIN.BLOCK``, ``GOBLIN.CAD``,
``GOBLIN.EXTEND``; ``GOBLIN.ZWINDOW``, ``GOBLIN.BZWINDOW``; the readers-writer lock's), with no
Lua and no sleep loop. A
task cancelled while it waits in line closes its connection (redis-py does), and the server
gives up its place; a lock or permit granted as the cancellation lands is given back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType
from typing import Literal, TypeVar

import redis.asyncio.lock
from redis.typing import Number

from .. import _locking
from .._commands import arun

__all__ = ["DeadlockError", "Lock", "ReadLock", "ReadWriteLock", "Semaphore", "WriteLock"]

DeadlockError = _locking.DeadlockError


def _cancellation() -> Callable[[], bool]:
    """Whether the running task has been cancelled since now, asked after each reply of an
    acquire: redis-py's asyncio read can swallow a cancellation that lands as a reply arrives.
    (``Task.cancelling``, Python 3.11 and later; before, never.)"""
    cancelling = getattr(asyncio.current_task(), "cancelling", None)
    if cancelling is None:
        return _locking.never
    before: int = cancelling()
    return lambda: bool(cancelling() > before)


class Lock(redis.asyncio.lock.Lock):
    """``redis.asyncio.lock.Lock`` on Goblin's lock commands: the same constructor,
    attributes, methods, exceptions and key, for ``r.lock(name, ..., lock_class=Lock)``; its
    arguments checked as :class:`goblin_redis.lock.Lock`'s."""

    def register_scripts(self) -> None:
        """No scripts to register: the constructor's arguments are checked instead (see
        :meth:`goblin_redis.lock.Lock.register_scripts`)."""
        _locking.check_lock(self)

    @property
    def fencing_token(self) -> int | None:
        """:attr:`goblin_redis.lock.Lock.fencing_token`: the grant's, kept by extends, None
        once released."""
        return _locking.fencing_token(self)

    async def acquire(
        self,
        blocking: bool | None = None,
        blocking_timeout: Number | None = None,
        token: str | bytes | None = None,
    ) -> bool:
        """Take the lock; True once held. ``blocking`` False (or a ``blocking_timeout`` of
        0 or less): one ``GOBLIN.LOCK``. Otherwise wait in line inside the server
        (``GOBLIN.BLOCK``), up to ``blocking_timeout`` seconds (None: for ever)."""
        return await arun(self.redis, _locking.acquiring(self, blocking, blocking_timeout, token, _cancellation()))

    async def do_acquire(self, token: str | bytes) -> bool:
        """One attempt that does not wait (``GOBLIN.LOCK``)."""
        return await arun(self.redis, _locking.attempting(self, token))

    async def do_release(self, expected_token: bytes) -> None:
        await arun(self.redis, _locking.releasing(self, expected_token))

    async def do_extend(self, additional_time: Number, replace_ttl: bool) -> Literal[True]:
        """``GOBLIN.EXTEND [REPLACE]``; a time that is not positive is the server's
        ResponseError: an extend never deletes the lock."""
        return await arun(self.redis, _locking.extending(self, additional_time, replace_ttl))

    async def do_reacquire(self) -> Literal[True]:
        """``GOBLIN.EXTEND ... REPLACE``: the lease starts over at ``timeout``."""
        return await arun(self.redis, _locking.reacquiring(self))


class Semaphore(_locking.Permits):
    """:class:`goblin_redis.lock.Semaphore` on redis-py's asyncio client (``redis.asyncio.Redis``
    or its cluster client): the same constructor, checks and errors, its methods awaited, and
    ``async with``. A task cancelled while it waits for a permit leaves the line, and a permit
    granted as the cancellation lands is given back."""

    async def acquire(self, blocking: bool | None = None, blocking_timeout: float | None = None) -> bool:
        """:meth:`goblin_redis.lock.Semaphore.acquire`, awaited."""
        return await arun(self.redis, self._acquiring(blocking, blocking_timeout, _cancellation()))

    async def renew(self) -> None:
        """:meth:`goblin_redis.lock.Semaphore.renew`, awaited."""
        await arun(self.redis, self._renewing())

    async def release(self) -> None:
        """:meth:`goblin_redis.lock.Semaphore.release`, awaited."""
        await arun(self.redis, self._releasing())

    async def __aenter__(self) -> Semaphore:
        if await self.acquire():
            return self
        raise _locking.lock_error("Unable to acquire a permit within the time specified", self.name)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.release()


class ReadWriteLock(_locking.ReadersWriter):
    """:class:`goblin_redis.lock.ReadWriteLock` on redis-py's asyncio client: the same
    constructor, checks, rules and errors, its methods awaited, and ``async with
    rw.read_lock()`` / ``rw.write_lock()``. A task cancelled while it waits in line leaves the
    line; a lease granted as the cancellation lands is given back (the whole hold, for a
    holder that was switching modes). Not shared between tasks: each needs an object of its
    own."""

    def __init__(
        self,
        client: object,
        name: str,
        timeout: float = 30.0,
        *,
        blocking: bool = True,
        blocking_timeout: float | None = None,
    ) -> None:
        super().__init__(client, name, timeout, blocking=blocking, blocking_timeout=blocking_timeout)
        self._read = ReadLock(self, "read")
        self._write = WriteLock(self, "write")

    def read_lock(self) -> ReadLock:
        return self._read

    def write_lock(self) -> WriteLock:
        return self._write

    async def acquire(
        self, mode: _locking.Mode, blocking: bool | None = None, blocking_timeout: float | None = None
    ) -> bool:
        """:meth:`goblin_redis.lock.ReadWriteLock.acquire`, awaited."""
        return await arun(self.redis, self._acquiring(mode, blocking, blocking_timeout, _cancellation()))

    async def release(self) -> None:
        """:meth:`goblin_redis.lock.ReadWriteLock.release`, awaited."""
        await arun(self.redis, self._releasing())

    async def extend(self, additional_time: Number, replace_ttl: bool = False) -> Literal[True]:
        """:meth:`goblin_redis.lock.ReadWriteLock.extend`, awaited."""
        return await arun(self.redis, self._extending_by(additional_time, replace_ttl))

    async def reacquire(self) -> Literal[True]:
        """:meth:`goblin_redis.lock.ReadWriteLock.reacquire`, awaited."""
        return await arun(self.redis, self._reacquiring())

    async def held(self) -> _locking.Mode | None:
        """:meth:`goblin_redis.lock.ReadWriteLock.held`, awaited."""
        return await arun(self.redis, self._asking_held())

    async def owned(self) -> bool:
        return await self.held() is not None

    async def locked(self) -> bool:
        return await arun(self.redis, self._asking_locked())


Side = TypeVar("Side", bound="_Side")


class _Side:
    """One mode of a :class:`ReadWriteLock`, awaited."""

    def __init__(self, lock: ReadWriteLock, mode: _locking.Mode) -> None:
        self.lock = lock
        self.mode: _locking.Mode = mode

    async def acquire(self, blocking: bool | None = None, blocking_timeout: float | None = None) -> bool:
        return await self.lock.acquire(self.mode, blocking, blocking_timeout)

    async def release(self) -> None:
        await self.lock.release()

    async def __aenter__(self: Side) -> Side:
        if await self.acquire():
            return self
        raise _locking.lock_error("Unable to acquire lock within the time specified", self.lock.name)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.release()


class ReadLock(_Side):
    """The read side of a :class:`ReadWriteLock`."""


class WriteLock(_Side):
    """The write side of a :class:`ReadWriteLock`."""
