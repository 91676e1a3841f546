"""Locks that wait in line inside the server, for redis-py: :class:`Lock`, a drop-in for
``redis.lock.Lock``, :class:`Semaphore`, N permits with leases, and :class:`ReadWriteLock`, a
readers-writer lock (Redisson's ``RReadWriteLock``'s shape).

Every operation is one Goblin command, with no Lua and no client sleep loop::

    import redis
    from goblin_redis.lock import Lock

    r = redis.Redis()
    with r.lock("lock:report", timeout=30, blocking_timeout=5, lock_class=Lock):
        ...  # held; waiters are served first come, first served

=============================  =======================================================
redis-py's ``Lock``            :class:`Lock`
=============================  =======================================================
``acquire(blocking=False)``    ``GOBLIN.LOCK key token ms FENCE`` (``SET NX PX`` that
                               never passes a waiter)
``acquire()``: ``SET NX PX``   ``GOBLIN.BLOCK key token ms timeout FENCE``: the caller
and ``sleep`` in a loop        waits in the server's line, and holds the lock the
                               moment it is released or expires
``release()``: a script        ``GOBLIN.CAD key token``
``extend()``: a script         ``GOBLIN.EXTEND key token ms [REPLACE] FENCE``
``reacquire()``: a script      ``GOBLIN.EXTEND key token ms REPLACE FENCE``
(none)                         ``fencing_token``: the grant's, larger than every earlier
                               grant's of the lock, for the resource to check
=============================  =======================================================

The key is the lock's name, a plain string holding the token with a PX lease, as redis-py
keeps it: ``locked()`` and ``owned()`` are redis-py's own ``GET``. ``sleep`` is accepted and
stored, and unused: nothing polls. A server without Goblin (or with one older than this package)
is a :class:`goblin_redis.GoblinModuleError` at the first call, ``MODULE LIST`` being asked once
per client. Each operation is a plan of ``goblin_redis._locking`` over the commands of
``goblin_redis._commands``; this module carries them out on redis-py's sync client.
"""

from __future__ import annotations

from types import TracebackType
from typing import Literal, TypeVar

import redis.lock
from redis.typing import Number

from . import _locking
from ._commands import run

__all__ = ["DeadlockError", "Lock", "ReadLock", "ReadWriteLock", "Semaphore", "WriteLock"]

DeadlockError = _locking.DeadlockError


class Lock(redis.lock.Lock):
    """``redis.lock.Lock`` on Goblin's lock commands: the same constructor, attributes,
    methods, exceptions and key, for ``r.lock(name, ..., lock_class=Lock)``.

    A blocking :meth:`acquire` waits inside the server (``GOBLIN.BLOCK``), first come, first
    served, in slices a margin shorter than the connection's socket timeout (re-sending the same
    token is idempotent: the holder's own token re-arms), so redis-py's socket timeout and
    retries never cut a wait short. ``blocking_timeout`` is honoured to the millisecond.

    The constructor's ``timeout`` (None or 0 for no lease, else a number of seconds below 1e12),
    ``sleep`` (a finite number, 0 or more) and ``blocking_timeout`` (None or a number, not NaN)
    are checked when the lock is made: anything else is a ValueError, before any command. So is
    a name the server cannot keep a fencing token beside (one holding a ``}`` without a hash
    tag, or an empty one).
    """

    @property
    def fencing_token(self) -> int | None:
        """The fencing token of this grant: an integer larger than every earlier grant's of the
        lock, even across a restart or a failover (see docs/fencing.md), for the resource the
        lock guards to refuse a holder whose lease ran out. Set on acquire, kept by
        :meth:`extend` and :meth:`reacquire`, None once released (or in a thread that does not
        hold the lock, with ``thread_local``)."""
        return _locking.fencing_token(self)

    def register_scripts(self) -> None:
        """redis-py's constructor calls this last, to register its Lua scripts: there are none
        here (no operation runs a script), and the constructor's arguments are checked instead,
        so that the constructor itself stays redis-py's own."""
        _locking.check_lock(self)

    def acquire(
        self,
        sleep: Number | None = None,
        blocking: bool | None = None,
        blocking_timeout: Number | None = None,
        token: str | bytes | None = None,
    ) -> bool:
        """Take the lock; True once held. ``blocking`` False (or a ``blocking_timeout`` of
        0 or less): one ``GOBLIN.LOCK``, which never passes a caller waiting in line.
        Otherwise wait in line, up to ``blocking_timeout`` seconds (None: for ever).
        ``sleep`` is unused (nothing polls); it keeps redis-py's positional order."""
        del sleep
        return run(self.redis, _locking.acquiring(self, blocking, blocking_timeout, token))

    def do_acquire(self, token: str | bytes) -> bool:
        """One attempt that does not wait (``GOBLIN.LOCK``)."""
        return run(self.redis, _locking.attempting(self, token))

    def do_release(self, expected_token: str | bytes) -> None:
        run(self.redis, _locking.releasing(self, expected_token))

    def do_extend(self, additional_time: Number, replace_ttl: bool) -> Literal[True]:
        """``GOBLIN.EXTEND``: adds ``additional_time`` to the lease (or, with ``replace_ttl``,
        makes it the lease). A time that is not positive is the server's ResponseError: an
        extend never deletes the lock."""
        return run(self.redis, _locking.extending(self, additional_time, replace_ttl))

    def do_reacquire(self) -> Literal[True]:
        """``GOBLIN.EXTEND ... REPLACE``: the lease starts over at ``timeout``."""
        return run(self.redis, _locking.reacquiring(self))


class Semaphore(_locking.Permits):
    """N permits with leases on the server's clock, on ``GOBLIN.BZWINDOW`` and
    ``GOBLIN.ZWINDOW``: at most ``limit`` holders of ``name`` at once, served first come,
    first served; a holder that stops renewing loses its permit ``lease`` seconds after it
    took or last renewed it, so a crashed holder never keeps one.

    One object is one holder: :meth:`acquire` gives it a permit (a fresh member of the sorted
    set ``name``), :meth:`renew` starts its lease over, :meth:`release` gives it back::

        sem = Semaphore(r, "sem:db", limit=3, lease=60)
        with sem:                       # waits for one of the 3 permits
            ...                         # renew() before 60 s are up, for long work

    :param client: a redis-py client (``redis.Redis`` or ``redis.cluster.RedisCluster``).
    :param name: the key: a sorted set of the holders, scored by when they took or renewed.
    :param limit: how many permits there are (every holder must use the same): an int, 1 or more.
    :param lease: seconds a permit lasts without a renewal (the key's TTL too): a number from
        0.001 to below 1e12.
    :param blocking: whether :meth:`acquire` waits by default.
    :param blocking_timeout: the longest :meth:`acquire` waits by default (None: for ever).

    An argument out of these bounds (a bool or a float ``limit``, NaN, infinity) is a
    ValueError when the semaphore is made.
    """

    def acquire(self, blocking: bool | None = None, blocking_timeout: float | None = None) -> bool:
        """Take a permit; True once held. Not blocking (or a ``blocking_timeout`` of 0 or
        less): one ``GOBLIN.ZWINDOW``, refused while anyone waits in line. Blocking:
        ``GOBLIN.BZWINDOW``, waiting in line inside the server up to ``blocking_timeout``
        seconds (None: for ever), in slices shorter than the socket timeout."""
        return run(self.redis, self._acquiring(blocking, blocking_timeout))

    def renew(self) -> None:
        """Start the permit's lease over (``GOBLIN.ZWINDOW ... XX``, which never admits).
        :class:`~redis.exceptions.LockNotOwnedError` if the permit was lost (its lease ran
        out, or it was released): this object then holds none."""
        run(self.redis, self._renewing())

    def release(self) -> None:
        """Give the permit back (``GOBLIN.CAD key member``); the first waiter takes it at once.
        :class:`~redis.exceptions.LockNotOwnedError` if it had been lost already."""
        run(self.redis, self._releasing())

    def __enter__(self) -> Semaphore:
        if self.acquire():
            return self
        raise _locking.lock_error("Unable to acquire a permit within the time specified", self.name)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


class ReadWriteLock(_locking.ReadersWriter):
    """A readers-writer lock on Goblin's commands: many readers at once, or one writer; readers
    and writers wait in one line inside the server, first come, first served, so a stream of
    readers never starves a waiting writer. Redisson's ``RReadWriteLock`` has the same shape::

        rw = ReadWriteLock(r, "doc:42", timeout=30)
        with rw.read_lock():            # GOBLIN.BRLOCK: waits while a writer holds or waits
            ...
        with rw.write_lock():           # GOBLIN.BWLOCK: waits for the readers to leave
            ...

    One object is one holder: :meth:`read_lock` and :meth:`write_lock` acquire for it, and a
    holder holds one mode at a time. Asking to write while it reads **promotes** it once the
    other readers have left (waiting ahead of the line; :class:`DeadlockError` if another reader
    already waits so); asking to read while it writes **demotes** it at once; asking again in
    its mode renews the lease. Not reentrant: one :meth:`release` releases, whatever the mode
    (so a ``with rw.read_lock()`` inside a ``with rw.write_lock()`` of the same object demotes,
    and its exit releases the hold). Not for several threads: give each its own object.

    Every operation is one command, with ``FENCE``: ``GOBLIN.RLOCK`` / ``GOBLIN.WLOCK`` (not
    waiting), ``GOBLIN.BRLOCK`` / ``GOBLIN.BWLOCK`` (waiting, in slices shorter than the socket
    timeout), ``GOBLIN.RWEXTEND`` (:meth:`extend`, :meth:`reacquire`), ``GOBLIN.RWUNLOCK``
    (:meth:`release`), ``GOBLIN.RWHELD`` (:meth:`held`). :attr:`fencing_token` is the grant's.

    :param client: a redis-py client (``redis.Redis`` or ``redis.cluster.RedisCluster``).
    :param name: the key: the readers' sorted set (each scored by its lease's end), or the
        writer's string.
    :param timeout: seconds each lease lasts unless extended, 0.001 to below 1e12 (default 30,
        Redisson's watchdog lease); there is no lease-less mode.
    :param blocking: whether an acquire waits by default.
    :param blocking_timeout: the longest an acquire waits by default (None: for ever).

    An argument out of these bounds (NaN, infinity, a bool) is a ValueError when the lock is
    made, as a name the server cannot keep a fencing token beside.
    """

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
        """The read side: ``acquire``, ``release`` and ``with`` for reading."""
        return self._read

    def write_lock(self) -> WriteLock:
        """The write side: ``acquire``, ``release`` and ``with`` for writing."""
        return self._write

    def acquire(self, mode: _locking.Mode, blocking: bool | None = None, blocking_timeout: float | None = None) -> bool:
        """Take the lock in ``mode`` (``"read"`` or ``"write"``); True once held. Not blocking
        (or a ``blocking_timeout`` of 0 or less): one attempt, refused while anyone waits in
        line (unless this holder holds the lock already). Blocking: waits in line up to
        ``blocking_timeout`` seconds (None: for ever)."""
        return run(self.redis, self._acquiring(mode, blocking, blocking_timeout))

    def release(self) -> None:
        """Give the lease back, whichever its mode; the first in line is let in at once.
        :class:`~redis.exceptions.LockNotOwnedError` if it had been lost (its lease ran out)."""
        run(self.redis, self._releasing())

    def extend(self, additional_time: Number, replace_ttl: bool = False) -> Literal[True]:
        """``additional_time`` more seconds on the lease (``replace_ttl``: it ends that long from
        now), as redis-py's ``Lock.extend``; :class:`~redis.exceptions.LockNotOwnedError` if the
        lease was lost. A time that is not positive is the server's ResponseError."""
        return run(self.redis, self._extending_by(additional_time, replace_ttl))

    def reacquire(self) -> Literal[True]:
        """The lease ends ``timeout`` from now (Symfony's ``putOffExpiration``, Redisson's
        watchdog)."""
        return run(self.redis, self._reacquiring())

    def held(self) -> _locking.Mode | None:
        """The mode this holder's lease runs in on the server now: ``"read"``, ``"write"``, or
        None."""
        return run(self.redis, self._asking_held())

    def owned(self) -> bool:
        """Whether this holder holds the lock, in either mode (redis-py's ``Lock.owned``)."""
        return self.held() is not None

    def locked(self) -> bool:
        """Whether anyone holds the lock (redis-py's ``Lock.locked``)."""
        return run(self.redis, self._asking_locked())


Side = TypeVar("Side", bound="_Side")


class _Side:
    """One mode of a :class:`ReadWriteLock`: acquires in it, and releases the holder's lease."""

    def __init__(self, lock: ReadWriteLock, mode: _locking.Mode) -> None:
        self.lock = lock
        self.mode: _locking.Mode = mode

    def acquire(self, blocking: bool | None = None, blocking_timeout: float | None = None) -> bool:
        """:meth:`ReadWriteLock.acquire` in this mode."""
        return self.lock.acquire(self.mode, blocking, blocking_timeout)

    def release(self) -> None:
        """:meth:`ReadWriteLock.release`: the holder's lease, whichever its mode."""
        self.lock.release()

    def __enter__(self: Side) -> Side:
        if self.acquire():
            return self
        raise _locking.lock_error("Unable to acquire lock within the time specified", self.lock.name)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


class ReadLock(_Side):
    """The read side of a :class:`ReadWriteLock` (Redisson's ``readLock()``)."""


class WriteLock(_Side):
    """The write side of a :class:`ReadWriteLock` (Redisson's ``writeLock()``)."""
