"""Locks that wait in line inside the server, for redis-py: :class:`Lock`, a drop-in for
``redis.lock.Lock``, and :class:`Semaphore`, N permits with leases.

Every operation is one Goblin command, with no Lua and no client sleep loop::

    import redis
    from goblin_redis.lock import Lock

    r = redis.Redis()
    with r.lock("lock:report", timeout=30, blocking_timeout=5, lock_class=Lock):
        ...  # held; waiters are served first come, first served

=============================  =======================================================
redis-py's ``Lock``            :class:`Lock`
=============================  =======================================================
``acquire(blocking=False)``    ``GOBLIN.LOCK key token ms`` (``SET NX PX`` that never
                               passes a waiter)
``acquire()``: ``SET NX PX``   ``GOBLIN.BLOCK key token ms timeout``: the caller waits
and ``sleep`` in a loop        in the server's line, and holds the lock the moment it
                               is released or expires
``release()``: a script        ``GOBLIN.CAD key token``
``extend()``: a script         ``GOBLIN.EXTEND key token ms [REPLACE]``
``reacquire()``: a script      ``GOBLIN.EXTEND key token ms REPLACE``
=============================  =======================================================

The key is the lock's name, a plain string holding the token with a PX lease, as redis-py
keeps it: ``locked()`` and ``owned()`` are redis-py's own ``GET``. ``sleep`` is accepted and
stored, and unused: nothing polls.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any, Literal

import redis.lock
from redis.typing import Number

from . import _locking

__all__ = ["Lock", "Semaphore"]


class Lock(redis.lock.Lock):
    """``redis.lock.Lock`` on Goblin's lock commands: the same constructor, attributes,
    methods, exceptions and key, for ``r.lock(name, ..., lock_class=Lock)``.

    A blocking :meth:`acquire` waits inside the server (``GOBLIN.BLOCK``), first come, first
    served, in slices a margin shorter than the connection's socket timeout (re-sending the same token
    is idempotent: the holder's own token re-arms), so redis-py's socket timeout and retries
    never cut a wait short. ``blocking_timeout`` is honoured to the millisecond.
    """

    def register_scripts(self) -> None:
        """Nothing to register: no operation runs a script."""

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
        encoded = _locking.new_token() if token is None else self.redis.get_encoder().encode(token)
        if blocking is None:
            blocking = self.blocking
        if blocking_timeout is None:
            blocking_timeout = self.blocking_timeout
        if self._take(encoded, blocking, blocking_timeout):
            self.local.token = encoded
            return True
        return False

    def _take(self, token: bytes, blocking: bool, blocking_timeout: Number | None) -> bool:
        ms = _locking.lease_ms(self.timeout)
        if not blocking or (blocking_timeout is not None and blocking_timeout <= 0):
            return _locking.granted(self.redis.execute_command("GOBLIN.LOCK", self.name, token, ms))
        deadline = None if blocking_timeout is None else time.monotonic() + float(blocking_timeout)
        slice_length = _locking.slice_length(self.redis)
        while True:
            wait = slice_length
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                wait = min(wait, remaining)
            reply = self.redis.execute_command("GOBLIN.BLOCK", self.name, token, ms, _locking.wait_argument(wait))
            if _locking.granted(reply):
                return True

    def do_acquire(self, token: str | bytes) -> bool:
        """One attempt that does not wait (``GOBLIN.LOCK``)."""
        encoded = self.redis.get_encoder().encode(token)
        return self._take(encoded, False, None)

    def do_release(self, expected_token: str | bytes) -> None:
        if not int(self.redis.execute_command("GOBLIN.CAD", self.name, expected_token)):
            raise _locking.not_owned("Cannot release a lock that's no longer owned", self.name)

    def do_extend(self, additional_time: Number, replace_ttl: bool) -> Literal[True]:
        """``GOBLIN.EXTEND``: adds ``additional_time`` to the lease (or, with ``replace_ttl``,
        makes it the lease). A time that is not positive is the server's ResponseError: an
        extend never deletes the lock."""
        args: list[Any] = [self.name, self.local.token, _locking.positive_ms(additional_time)]
        if replace_ttl:
            args.append("REPLACE")
        if not int(self.redis.execute_command("GOBLIN.EXTEND", *args)):
            raise _locking.not_owned("Cannot extend a lock that's no longer owned", self.name)
        return True

    def do_reacquire(self) -> Literal[True]:
        """``GOBLIN.EXTEND ... REPLACE``: the lease starts over at ``timeout``."""
        assert self.timeout is not None  # reacquire() checked it
        ms = _locking.lease_ms(self.timeout)
        if not int(self.redis.execute_command("GOBLIN.EXTEND", self.name, self.local.token, ms, "REPLACE")):
            raise _locking.not_owned("Cannot reacquire a lock that's no longer owned", self.name)
        return True


class Semaphore:
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
    :param limit: how many permits there are (every holder must use the same).
    :param lease: seconds a permit lasts without a renewal (a float; the key's TTL too).
    :param blocking: whether :meth:`acquire` waits by default.
    :param blocking_timeout: the longest :meth:`acquire` waits by default (None: for ever).
    """

    def __init__(
        self,
        client: Any,  # noqa: ANN401
        name: str,
        limit: int,
        lease: float = 30.0,
        *,
        blocking: bool = True,
        blocking_timeout: float | None = None,
    ) -> None:
        if int(limit) < 1:
            raise ValueError(f"a semaphore needs at least one permit, not {limit!r}")
        if not lease > 0:
            raise ValueError(f"a permit's lease must be positive, not {lease!r}")
        self.redis = client
        self.name = name
        self.limit = int(limit)
        self.lease = float(lease)
        self.blocking = blocking
        self.blocking_timeout = blocking_timeout
        #: The member this holder's permit is recorded as, while it holds one.
        self.token: bytes | None = None

    def acquire(self, blocking: bool | None = None, blocking_timeout: float | None = None) -> bool:
        """Take a permit; True once held. Not blocking (or a ``blocking_timeout`` of 0 or
        less): one ``GOBLIN.ZWINDOW``, refused while anyone waits in line. Blocking:
        ``GOBLIN.BZWINDOW``, waiting in line inside the server up to ``blocking_timeout``
        seconds (None: for ever), in slices shorter than the socket timeout."""
        if self.token is not None:
            raise _locking.lock_error("This semaphore object already holds a permit", self.name)
        if blocking is None:
            blocking = self.blocking
        if blocking_timeout is None:
            blocking_timeout = self.blocking_timeout
        token = _locking.new_token()
        if self._take(token, blocking, blocking_timeout):
            self.token = token
            return True
        return False

    def _take(self, token: bytes, blocking: bool, blocking_timeout: float | None) -> bool:
        lease = repr(self.lease)
        if not blocking or (blocking_timeout is not None and blocking_timeout <= 0):
            reply = self.redis.execute_command("GOBLIN.ZWINDOW", self.name, "*", lease, self.limit, token)
            return bool(int(reply))
        deadline = None if blocking_timeout is None else time.monotonic() + blocking_timeout
        slice_length = _locking.slice_length(self.redis)
        while True:
            wait = slice_length
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                wait = min(wait, remaining)
            reply = self.redis.execute_command(
                "GOBLIN.BZWINDOW", self.name, lease, self.limit, token, _locking.wait_argument(wait)
            )
            if reply is not None and int(reply):
                return True

    def renew(self) -> None:
        """Start the permit's lease over (``GOBLIN.ZWINDOW ... XX``, which never admits).
        :class:`~redis.exceptions.LockNotOwnedError` if the permit was lost (its lease ran
        out, or it was released): this object then holds none."""
        token = self._held("renew")
        reply = self.redis.execute_command("GOBLIN.ZWINDOW", self.name, "*", repr(self.lease), self.limit, token, "XX")
        if not int(reply):
            self.token = None
            raise _locking.not_owned("Cannot renew a permit that's no longer held", self.name)

    def release(self) -> None:
        """Give the permit back (``GOBLIN.CAD key member``); the first waiter takes it at once.
        :class:`~redis.exceptions.LockNotOwnedError` if it had been lost already."""
        token = self._held("release")
        self.token = None
        if not int(self.redis.execute_command("GOBLIN.CAD", self.name, token)):
            raise _locking.not_owned("Cannot release a permit that's no longer held", self.name)

    def _held(self, what: str) -> bytes:
        if self.token is None:
            raise _locking.lock_error(f"Cannot {what} a permit that is not held", self.name)
        return self.token

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
