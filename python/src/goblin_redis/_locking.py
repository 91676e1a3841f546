"""What the sync and asyncio locks and semaphores share, with no I/O: their arguments checked,
their tokens, and each of their operations as a plan over the command vocabulary
(``goblin_redis._commands``). Above all the blocking acquire, :func:`take`, written once: a
wait sent in slices shorter than the client's socket timeout, each re-sent with the same token,
ending at ``blocking_timeout`` to the millisecond. ``goblin_redis.lock`` carries the plans out
on a sync client, ``goblin_redis.asyncio.lock`` on an asyncio one."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

from redis.exceptions import LockError, LockNotOwnedError

from . import _commands as commands
from ._commands import Command, Plan, send

#: The longest one blocking command waits (when the connection has no socket timeout, say): a
#: waiter still comes back now and then, so a lost connection is noticed within this.
LONGEST_SLICE = 60.0

#: The longest lease or lock timeout (seconds): GOBLIN.GCRA's bound on a period, far below where
#: the server's clock plus the lease would overflow.
LONGEST_LEASE = 1e12


def new_token() -> bytes:
    """A fresh token, as redis-py's Lock makes it."""
    return uuid.uuid1().hex.encode()


def encoded(client: object, token: str | bytes) -> bytes:
    """A caller's token as bytes, by the client's own encoder (redis-py's Lock does)."""
    encoder = cast(Any, client).get_encoder()
    result: bytes = encoder.encode(token)
    return result


def socket_timeout(client: Any) -> float | None:  # noqa: ANN401
    """The socket timeout of the client's connections (None: unlimited), as redis-py keeps it
    for a client, a single-connection client, or a cluster (sync or asyncio)."""
    pool = getattr(client, "connection_pool", None)
    kwargs = getattr(pool, "connection_kwargs", None)
    if kwargs is None:
        nodes = getattr(client, "nodes_manager", None)
        kwargs = getattr(nodes, "connection_kwargs", None)
    if kwargs is None:
        kwargs = getattr(client, "connection_kwargs", None)
    if isinstance(kwargs, dict):
        value = kwargs.get("socket_timeout")
        return float(value) if value is not None else None
    value = getattr(client, "socket_timeout", None)
    return float(value) if isinstance(value, (int, float)) else None


def slice_length(client: Any) -> float:  # noqa: ANN401
    """How long one blocking command may wait on this client: its socket timeout less a margin
    of a second (less for short timeouts: a quarter of it), so the reply (nil at the slice's
    end) always comes back before the client gives up on the socket and retries. The margin
    covers the server's timer, which meets a blocked client's timeout on its next tick (every
    100 ms at the default ``hz`` 10). ``LONGEST_SLICE`` when the socket has no timeout."""
    timeout = socket_timeout(client)
    if timeout is None or timeout <= 0 or math.isinf(timeout):
        return LONGEST_SLICE
    return max(min(timeout - min(1.0, 0.75 * timeout), LONGEST_SLICE), commands.SHORTEST_WAIT)


def lock_error(message: str, name: object = None) -> LockError:
    """redis-py's ``LockError`` (its constructor is untyped)."""
    error: LockError = cast(Any, LockError)(message, lock_name=name)
    return error


def not_owned(message: str, name: object = None) -> LockNotOwnedError:
    """redis-py's ``LockNotOwnedError``: the lock or permit is no longer this holder's."""
    error: LockNotOwnedError = cast(Any, LockNotOwnedError)(message, lock_name=name)
    return error


# ---------------------------------------------------------------------------------- checks
def check_timeout(timeout: object) -> float | None:
    """A lock's ``timeout``: None or 0, no lease (as redis-py's Lock takes them), or a lease
    of that many seconds (at least a millisecond is kept)."""
    if timeout is None:
        return None
    seconds = commands.number(timeout, "timeout")
    if not 0 <= seconds < LONGEST_LEASE:
        raise ValueError(
            f"timeout must be None or 0 (no lease), or a lease below {LONGEST_LEASE:g} seconds, not {timeout!r}"
        )
    return seconds


def check_sleep(sleep: object) -> float:
    """A lock's ``sleep``, accepted as redis-py's Lock takes it (and unused: nothing polls)."""
    seconds = commands.number(sleep, "sleep")
    if not 0 <= seconds < math.inf:
        raise ValueError(f"sleep must be a finite number of seconds, 0 or more, not {sleep!r}")
    return seconds


def check_blocking_timeout(blocking_timeout: object) -> float | None:
    """``blocking_timeout``: None or ``inf`` waits for ever; 0 or less tries once, as redis-py's."""
    return None if blocking_timeout is None else commands.number(blocking_timeout, "blocking_timeout")


def check_limit(limit: object) -> int:
    """A semaphore's ``limit``: how many permits, a whole number of at least one."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= commands.I64_MAX:
        raise ValueError(
            f"a semaphore needs at least one permit: limit must be an int from 1 to 2**63 - 1, not {limit!r}"
        )
    return limit


def check_lease(lease: object) -> float:
    """A permit's ``lease``: a positive number of seconds, a millisecond or more (the server
    ages a permit out on its millisecond clock: a shorter lease would be no permit at all)."""
    seconds = commands.number(lease, "lease")
    if not commands.SHORTEST_WAIT <= seconds < LONGEST_LEASE:
        raise ValueError(
            f"a permit's lease must be positive: from 0.001 to below {LONGEST_LEASE:g} seconds, not {lease!r}"
        )
    return float(seconds)


# -------------------------------------------------------------------------------- the wait
def never() -> bool:
    """No cancellation: a sync caller's."""
    return False


@dataclass(slots=True)
class Claim:
    """What taking one lock or permit sends: ``once``, the attempt that does not wait;
    ``waiting(seconds)``, the one that waits in the server's line that long at most; and
    ``give_back``, the release of what a cancelled waiter was granted meanwhile. Either
    attempt's reply is the grant's fencing token, or says nothing was granted."""

    once: Command
    waiting: Callable[[float], Command]
    give_back: Command


def take(
    claim: Claim,
    blocking: bool,
    blocking_timeout: float | None,
    slice_length: float,
    cancelled: Callable[[], bool] = never,
) -> Plan[int | None]:
    """Taking a lock or a permit, planned: the grant's fencing token once held, None if it
    was not. Not blocking (or a ``blocking_timeout`` of 0 or less): ``claim.once`` alone. Blocking: ``claim.waiting`` in
    slices of ``slice_length`` (each re-sent with the same token keeps the caller's place, and
    gets again what a reply lost to a timeout granted), until granted or ``blocking_timeout``
    seconds have passed (None: for ever), the last slice cut to the time left.

    A cancellation (asyncio) at any moment leaves nothing held. One raised where an attempt was
    sent (its reply on the way, lost: redis-py closes the connection, which takes a waiter out of
    the line) gives back what that reply may have granted, owner-checked, before it goes on.
    ``cancelled`` is asked after each reply (the task was cancelled, the cancellation lost on the
    way): then what was granted meanwhile is given back, and the wait ends in
    ``CancelledError``."""
    for command in _attempts(claim, blocking, blocking_timeout, slice_length):
        try:
            reply = yield from send(command)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):  # the server out of reach: the lease ends by itself
                yield from send(claim.give_back)
            raise
        fencing_token = commands.fencing_token(reply)
        if cancelled():
            if fencing_token is not None:
                yield from send(claim.give_back)
            raise asyncio.CancelledError
        if fencing_token is not None:
            return fencing_token
    return None


def _attempts(claim: Claim, blocking: bool, blocking_timeout: float | None, slice_length: float) -> Iterator[Command]:
    """The attempts of one acquire, each asked for once the previous one's reply is in."""
    if not blocking or (blocking_timeout is not None and blocking_timeout <= 0):
        yield claim.once
        return
    deadline = None if blocking_timeout is None else time.monotonic() + blocking_timeout
    while True:
        wait = slice_length
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            wait = min(wait, remaining)
        yield claim.waiting(wait)


class _Waiter(Protocol):
    """What an acquire reads of its lock or semaphore: the defaults of its arguments."""

    @property
    def blocking(self) -> object: ...

    @property
    def blocking_timeout(self) -> float | None: ...


def _waiting(owner: _Waiter, blocking: object, blocking_timeout: object) -> tuple[bool, float | None]:
    """An acquire's ``blocking`` and ``blocking_timeout``: the owner's own where None."""
    if blocking is None:
        blocking = owner.blocking
    timeout = owner.blocking_timeout if blocking_timeout is None else check_blocking_timeout(blocking_timeout)
    return bool(blocking), timeout


# ---------------------------------------------------------------------------------- a lock
class LockState(_Waiter, Protocol):
    """What the plans read and write of redis-py's ``Lock`` (sync or asyncio)."""

    @property
    def redis(self) -> Any: ...  # noqa: ANN401

    @property
    def name(self) -> Any: ...  # noqa: ANN401 (redis-py's: str, bytes or memoryview)

    @property
    def timeout(self) -> float | None: ...

    @property
    def sleep(self) -> float: ...

    @property
    def local(self) -> Any: ...  # noqa: ANN401 (a threading.local or a SimpleNamespace, with .token)


def check_lock(lock: LockState) -> None:
    """The arguments of a lock's constructor that redis-py's stores unchecked, checked before
    anything is sent: ``timeout``, ``sleep`` and ``blocking_timeout``; and the name, which must
    have room for a fencing token beside it."""
    check_timeout(lock.timeout)
    check_sleep(lock.sleep)
    check_blocking_timeout(lock.blocking_timeout)
    check_fenceable(lock.name)


def check_fenceable(name: object) -> None:
    """A lock's or semaphore's name, which the server keeps a fencing token beside in the same
    cluster slot: one with a ``}`` needs a hash tag (``{...}``) for it. (A str name is read as
    UTF-8: a ``}`` is the same byte in any ASCII-compatible encoding.)"""
    key = name.encode() if isinstance(name, str) else bytes(cast(Any, name))
    if not commands.fenceable(key):
        raise ValueError(
            f"a lock's name needs a hash tag ({{...}}) when it holds a '}}', and cannot be empty: "
            f"the server keeps its fencing token beside it, in its cluster slot; not {name!r}"
        )


def fencing_token(lock: LockState) -> int | None:
    """The fencing token of the lock's holder, as this thread (or, without ``thread_local``, this
    lock) holds it: its grant's, kept by extends, None once released (or never held)."""
    return cast(int | None, getattr(lock.local, "fencing_token", None))


def _lock_claim(lock: LockState, token: bytes) -> Claim:
    name, timeout = lock.name, lock.timeout
    return Claim(
        once=commands.lock(name, token, timeout),
        waiting=lambda wait: commands.block(name, token, timeout, wait),
        give_back=commands.cad(name, token),
    )


def acquiring(
    lock: LockState,
    blocking: object,
    blocking_timeout: object,
    token: str | bytes | None,
    cancelled: Callable[[], bool] = never,
) -> Plan[bool]:
    """``Lock.acquire``: a fresh token (or the caller's), the lock's own ``blocking`` and
    ``blocking_timeout`` where None; the token, and the grant's fencing token, are the lock's
    once it holds."""
    held = new_token() if token is None else encoded(lock.redis, token)
    wait, timeout = _waiting(lock, blocking, blocking_timeout)
    fencing = yield from take(_lock_claim(lock, held), wait, timeout, slice_length(lock.redis), cancelled)
    if fencing is None:
        return False
    lock.local.token = held
    lock.local.fencing_token = fencing
    return True


def attempting(lock: LockState, token: str | bytes) -> Plan[bool]:
    """``Lock.do_acquire``: one attempt that does not wait (``GOBLIN.LOCK``); its fencing
    token is the lock's if it holds."""
    fencing = yield from take(_lock_claim(lock, encoded(lock.redis, token)), False, None, LONGEST_SLICE)
    if fencing is None:
        return False
    lock.local.fencing_token = fencing
    return True


def releasing(lock: LockState, token: str | bytes) -> Plan[None]:
    """``Lock.do_release``: ``GOBLIN.CAD``. The fencing token is forgotten either way: the
    lock is no longer held."""
    lock.local.fencing_token = None
    if not commands.as_int((yield from send(commands.cad(lock.name, token)))):
        raise not_owned("Cannot release a lock that's no longer owned", lock.name)


def extending(lock: LockState, additional_time: float, replace_ttl: bool) -> Plan[Literal[True]]:
    """``Lock.do_extend``: ``GOBLIN.EXTEND``, ``additional_time`` truncated to milliseconds as
    redis-py does; a time that is not positive is the server's ResponseError."""
    return _extending(lock, int(additional_time * 1000), replace_ttl, "extend")


def reacquiring(lock: LockState) -> Plan[Literal[True]]:
    """``Lock.do_reacquire``: ``GOBLIN.EXTEND ... REPLACE``, the lease starts over at ``timeout``."""
    return _extending(lock, commands.lease_ms(lock.timeout), True, "reacquire")


def _extending(lock: LockState, ms: int, replace: bool, what: str) -> Plan[Literal[True]]:
    """``GOBLIN.EXTEND``: the holder keeps its fencing token (the server replies it)."""
    fencing = commands.fencing_token((yield from send(commands.extend(lock.name, lock.local.token, ms, replace))))
    if fencing is None:
        raise not_owned(f"Cannot {what} a lock that's no longer owned", lock.name)
    lock.local.fencing_token = fencing
    return True


# ------------------------------------------------------------------------------ a semaphore
class Permits:
    """What :class:`goblin_redis.lock.Semaphore` and :class:`goblin_redis.asyncio.lock.Semaphore`
    share: the arguments, checked in the constructor; the member of this holder's permit; and
    each operation as a plan.

    :param client: a redis-py client (sync or asyncio, one server or a cluster).
    :param name: the key: a sorted set of the holders, scored by when they took or renewed.
    :param limit: how many permits there are (every holder must use the same): an int, 1 or more.
    :param lease: seconds a permit lasts without a renewal (the key's TTL too): from 0.001.
    :param blocking: whether ``acquire`` waits by default.
    :param blocking_timeout: the longest ``acquire`` waits by default (None: for ever).
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
        self.redis = client
        self.name = name
        self.limit = check_limit(limit)
        self.lease = check_lease(lease)
        self.blocking = blocking
        self.blocking_timeout = check_blocking_timeout(blocking_timeout)
        check_fenceable(name)
        #: The member this holder's permit is recorded as, while it holds one.
        self.token: bytes | None = None
        #: The fencing token of this holder's permit, while it holds one: its grant's, kept by
        #: renewals, None once released or lost.
        self.fencing_token: int | None = None

    def _claim(self, member: bytes) -> Claim:
        name, lease, limit = self.name, self.lease, self.limit
        return Claim(
            once=commands.permit(name, lease, limit, member),
            waiting=lambda wait: commands.bzwindow(name, lease, limit, member, wait),
            give_back=commands.cad(name, member),
        )

    def _acquiring(
        self, blocking: bool | None, blocking_timeout: float | None, cancelled: Callable[[], bool] = never
    ) -> Plan[bool]:
        """Not blocking (or a ``blocking_timeout`` of 0 or less): one ``GOBLIN.ZWINDOW``,
        refused while anyone waits in line. Blocking: ``GOBLIN.BZWINDOW``, waiting in line up
        to ``blocking_timeout`` seconds (None: for ever), in slices shorter than the socket
        timeout."""
        if self.token is not None:
            raise lock_error("This semaphore object already holds a permit", self.name)
        member = new_token()
        wait, timeout = _waiting(self, blocking, blocking_timeout)
        fencing = yield from take(self._claim(member), wait, timeout, slice_length(self.redis), cancelled)
        if fencing is None:
            return False
        self.token, self.fencing_token = member, fencing
        return True

    def _renewing(self) -> Plan[None]:
        """``GOBLIN.ZWINDOW ... XX``, which keeps the permit's fencing token; a permit found
        lost is no longer this object's."""
        member = self._held("renew")
        fencing = commands.fencing_token((yield from send(commands.renewal(self.name, self.lease, self.limit, member))))
        if fencing is None:
            self.token = self.fencing_token = None
            raise not_owned("Cannot renew a permit that's no longer held", self.name)
        self.fencing_token = fencing

    def _releasing(self) -> Plan[None]:
        """``GOBLIN.CAD key member``. The member is forgotten once the server has answered (if
        the call fails on the way, or an asyncio task is cancelled in it, it can be released
        again, as redis-py's asyncio Lock keeps its token)."""
        member = self._held("release")
        released = commands.as_int((yield from send(commands.cad(self.name, member))))
        self.token = self.fencing_token = None
        if not released:
            raise not_owned("Cannot release a permit that's no longer held", self.name)

    def _held(self, what: str) -> bytes:
        if self.token is None:
            raise lock_error(f"Cannot {what} a permit that is not held", self.name)
        return self.token


# ------------------------------------------------------------------ a readers-writer lock
#: A readers-writer lock's modes.
Mode = commands.Mode


class DeadlockError(LockError):
    """A reader asked to write, waiting, while another reader of the lock already waits to
    write: each would wait for the other to leave, for ever (``GOBLIN.BWLOCK``'s
    ``-DEADLOCK``). The reader keeps its read lease: release it and ask again, or ask without
    waiting."""


def deadlock_error(name: object) -> DeadlockError:
    error: DeadlockError = cast(Any, DeadlockError)(
        "Another reader already waits to write this lock: each would wait for the other to leave", lock_name=name
    )
    return error


class ReadersWriter:
    """What :class:`goblin_redis.lock.ReadWriteLock` and its asyncio twin share: the arguments,
    checked in the constructor; the holder's token, mode and fencing token; each operation as a
    plan.

    One object is one holder, with one token while it holds: its read and write acquires renew,
    promote and demote that one hold, as the server's rules say (docs/locks.md, Readers and
    writers). Not shared between threads or tasks: each needs an object of its own.

    :param client: a redis-py client (sync or asyncio, one server or a cluster).
    :param name: the key: the readers' sorted set, or the writer's string.
    :param timeout: seconds each lease lasts unless extended: from 0.001 to below 1e12 (there is
        no lease-less mode: a reader that died would keep every writer out for ever).
    :param blocking: whether an acquire waits by default.
    :param blocking_timeout: the longest an acquire waits by default (None: for ever).
    """

    def __init__(
        self,
        client: Any,  # noqa: ANN401
        name: str,
        timeout: float = 30.0,
        *,
        blocking: bool = True,
        blocking_timeout: float | None = None,
    ) -> None:
        self.redis = client
        self.name = name
        self.timeout = check_lease(timeout)
        self.blocking = blocking
        self.blocking_timeout = check_blocking_timeout(blocking_timeout)
        check_fenceable(name)
        #: The token this holder holds the lock with, while it holds it.
        self.token: bytes | None = None
        #: ``"read"`` or ``"write"``: the mode of this holder's lease, as its last grant left it
        #: (None while it holds none). :meth:`held` asks the server.
        self.mode: Mode | None = None
        #: The fencing token of this holder's grant, kept by renewals and extends, new with a
        #: change of mode; None once released or lost.
        self.fencing_token: int | None = None

    def _claim(self, token: bytes, mode: Mode) -> Claim:
        name, ms = self.name, commands.lease_ms(self.timeout)
        return Claim(
            once=commands.rw_lock(name, token, ms, mode),
            waiting=lambda wait: commands.rw_wait(name, token, ms, mode, wait),
            give_back=commands.rw_unlock(name, token),
        )

    def _acquiring(
        self,
        mode: Mode,
        blocking: bool | None,
        blocking_timeout: float | None,
        cancelled: Callable[[], bool] = never,
    ) -> Plan[bool]:
        """The ``mode`` lease: a new hold with a fresh token, or this holder's own renewed,
        promoted or demoted. Not blocking (or a ``blocking_timeout`` of 0 or less): one
        ``GOBLIN.RLOCK`` or ``GOBLIN.WLOCK``. Blocking: ``GOBLIN.BRLOCK`` or ``GOBLIN.BWLOCK``,
        waiting in line up to ``blocking_timeout`` seconds (None: for ever), in slices shorter
        than the socket timeout. :class:`DeadlockError` for a reader whose wait to write would
        never end."""
        token = self.token if self.token is not None else new_token()
        wait, timeout = _waiting(self, blocking, blocking_timeout)
        try:
            fencing = yield from take(self._claim(token, mode), wait, timeout, slice_length(self.redis), cancelled)
        except Exception as error:
            if commands.is_deadlock(error):
                raise deadlock_error(self.name) from error
            raise
        if fencing is None:
            return False
        self.token, self.mode, self.fencing_token = token, mode, fencing
        return True

    def _extending(self, ms: int, replace: bool, what: str) -> Plan[Literal[True]]:
        """``GOBLIN.RWEXTEND``: the holder keeps its fencing token; a lease found lost is no
        longer this holder's."""
        token = self._token(what)
        fencing = commands.fencing_token((yield from send(commands.rw_extend(self.name, token, ms, replace))))
        if fencing is None:
            self._forget()
            raise not_owned(f"Cannot {what} a lock that's no longer owned", self.name)
        self.fencing_token = fencing
        return True

    def _extending_by(self, additional_time: float, replace_ttl: bool) -> Plan[Literal[True]]:
        """``extend``: ``additional_time`` seconds more (truncated to milliseconds, as redis-py's
        Lock does), or the lease ends that long from now with ``replace_ttl``; a time that is
        not positive is the server's ResponseError, never a release."""
        return self._extending(int(number_of(additional_time, "additional_time") * 1000), replace_ttl, "extend")

    def _reacquiring(self) -> Plan[Literal[True]]:
        """``reacquire``: the lease ends ``timeout`` from now."""
        return self._extending(commands.lease_ms(self.timeout), True, "reacquire")

    def _releasing(self) -> Plan[None]:
        """``GOBLIN.RWUNLOCK``, whichever mode this holder holds; the hold is forgotten once the
        server has answered."""
        token = self._token("release")
        released = commands.as_int((yield from send(commands.rw_unlock(self.name, token))))
        self._forget()
        if not released:
            raise not_owned("Cannot release a lock that's no longer owned", self.name)

    def _asking_held(self) -> Plan[Mode | None]:
        """``GOBLIN.RWHELD``: the mode this holder's lease runs in now, None for none."""
        if self.token is None:
            return None
        return commands.held_mode((yield from send(commands.rw_held(self.name, self.token))))

    def _forsaking(self) -> Plan[None]:
        """After a cancelled acquire: the hold forgotten at once, and this holder's lease, in
        whichever mode, given back (``GOBLIN.RWUNLOCK``, owner-checked), since the reply the
        cancellation cut off may have promoted, demoted or renewed it."""
        token = self.token
        self._forget()
        if token is not None:
            yield from send(commands.rw_unlock(self.name, token))

    def _asking_locked(self) -> Plan[bool]:
        """Whether anyone holds the lock: the key expires with its last lease."""
        return bool(commands.as_int((yield from send(("EXISTS", self.name)))))

    def _token(self, what: str) -> bytes:
        if self.token is None:
            raise lock_error(f"Cannot {what} an unlocked lock", self.name)
        return self.token

    def _forget(self) -> None:
        self.token = self.mode = self.fencing_token = None


def number_of(value: object, what: str) -> float:
    """A number of seconds an extend adds (any sign: the server refuses one not positive)."""
    return commands.number(value, what)
