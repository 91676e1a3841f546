"""Goblin's command vocabulary, written once: every Goblin command the package sends, built as a
tuple of arguments; every reply it reads, parsed; and the module check (``MODULE LIST``, once
per client) with the package's one error for it, :class:`GoblinModuleError`.

The storages (``goblin_redis.limits``), the locks and semaphores (``goblin_redis.lock``,
``goblin_redis.asyncio.lock``) and the policy sets (``goblin_redis.ratelimit``) are shells over
it. Each of their operations is a *plan*: a generator, with no I/O of its own, that yields the
commands to send (through :func:`send`) and is sent each reply back. :func:`run` carries a plan
out on a sync client and :func:`arun` on an asyncio one. No client library is imported here.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
import weakref
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar

from . import __module_version__

if TYPE_CHECKING:
    from limits.errors import ConfigurationError as _ModuleErrorBase
else:
    try:
        from limits.errors import ConfigurationError as _ModuleErrorBase
    except ImportError:  # limits is an extra (goblin-redis[limits]); the locks do without it
        _ModuleErrorBase = Exception

#: A key: what redis-py's clients encode (a lock's name may be any of these, as redis-py's).
Key: TypeAlias = str | bytes | memoryview
#: An argument of a command, as the client libraries send it.
Arg: TypeAlias = str | bytes | memoryview | int
Command: TypeAlias = tuple[Arg, ...]

T = TypeVar("T")

#: An operation: yields the commands to send, is sent each one's reply (a :class:`Failed` for
#: an error, which :func:`send` raises), and returns the operation's result.
Plan: TypeAlias = Generator[Command, object, T]

#: The largest integer the server reads (a signed 64-bit integer).
I64_MAX = 2**63 - 1


class GoblinModuleError(_ModuleErrorBase):
    """The server has no Goblin module, or one older than this package needs: what every entry
    point of the package raises (the storages, locks, semaphores and policy sets, sync and
    asyncio) instead of the server's bare ``unknown command``. Where limits is installed it is
    a ``limits.errors.ConfigurationError``: a server that cannot serve the storage."""


# ------------------------------------------------------------------------------ running plans
@dataclass(slots=True)
class Failed:
    """A command's error, sent back to the plan that yielded the command (:func:`send` raises it)."""

    error: Exception


@dataclass(slots=True)
class Done(Generic[T]):
    """A plan's result: the last step the drivers are handed."""

    value: T


def send(command: Command) -> Plan[object]:
    """One command of a plan: its reply, or its error raised; an error that says the server
    lacks this Goblin command (behind an ACL that refused ``MODULE LIST``, or on a cluster node
    the check did not ask) is raised as :class:`GoblinModuleError`."""
    reply = yield command
    if isinstance(reply, Failed):
        explained = module_error(str(command[0]), reply.error)
        if explained is None:
            raise reply.error
        raise explained from reply.error
    return reply


def run(client: Any, plan: Plan[T]) -> T:  # noqa: ANN401 (any client with redis-py's execute_command)
    """Carries ``plan`` out on a sync client: redis-py's ``Redis`` or ``RedisCluster``."""
    steps = _checked(_identity(client), plan)
    step = next(steps)
    while not isinstance(step, Done):
        step = steps.send(_outcome(client.execute_command, step))
    return step.value


async def arun(client: Any, plan: Plan[T], execute: Callable[..., Awaitable[object]] | None = None) -> T:  # noqa: ANN401
    """Carries ``plan`` out on an asyncio client: redis-py's, or any through ``execute`` (a
    coredis adapter), ``client`` then naming the connections the module check is kept for.

    A task cancelled while a command's reply is on its way: the cancellation is raised in the
    plan where it sent that command (an acquire gives back what the lost reply may have granted),
    and whatever the plan sends then is carried out shielded from a further cancellation, until
    the plan raises; the task's cancellation goes on from there."""
    steps = _checked(_identity(client), plan)
    step, execute_command = next(steps), execute or client.execute_command
    cancelled: asyncio.CancelledError | None = None
    while not isinstance(step, Done):
        if cancelled is not None:
            step = steps.send(await asyncio.shield(_awaited_outcome(execute_command, step)))
            continue
        try:
            outcome = await _awaited_outcome(execute_command, step)
        except asyncio.CancelledError as error:
            cancelled = error
            step = steps.throw(error)
            continue
        step = steps.send(outcome)
    if cancelled is not None:
        raise cancelled
    return step.value


def _outcome(execute: Callable[..., object], command: Command) -> object:
    try:
        return execute(*command)
    except Exception as error:  # noqa: BLE001 (handed to the plan, which raises it)
        return Failed(error)


async def _awaited_outcome(execute: Callable[..., Awaitable[object]], command: Command) -> object:
    try:
        return await execute(*command)
    except Exception as error:  # noqa: BLE001 (handed to the plan, which raises it)
        return Failed(error)


def _checked(identity: object, plan: Plan[T]) -> Generator[Command | Done[T], object, None]:
    """``plan``'s commands, the first after the module check unless the client (its
    ``identity``) has passed it (or the command is the check's own), then its result. The plan
    runs up to its first command before anything is sent, so its arguments are checked first,
    and a plan that sends nothing (a cost above the limit) sends no ``MODULE LIST`` either."""
    passed = identity in _PASSED
    try:
        command = plan.send(None)
        while True:
            if not passed and command != MODULE_LIST:
                yield from _module_check(identity)
                passed = True
            try:
                reply = yield command
            except asyncio.CancelledError as cancelled:  # raised in the plan, where it sent the command
                command = plan.throw(cancelled)
            else:
                command = plan.send(reply)
    except StopIteration as done:
        yield Done(done.value)


# --------------------------------------------------------------------------- the module check
#: One name, as redis-py's cluster client looks it up to route it (to its default node).
MODULE_LIST: Command = ("MODULE LIST",)

#: The connection pools (or clients without one: cluster clients) whose server passed the check.
_PASSED: weakref.WeakSet[object] = weakref.WeakSet()


def _identity(client: object) -> object:
    """What a client's check is kept for: its connection pool, which every client made on it
    shares (``Redis(connection_pool=pool)``), else the client itself (a cluster client)."""
    pool = getattr(client, "connection_pool", None)
    return client if pool is None else pool


def module_check(client: object) -> Plan[None]:
    """The check alone, for an operation of core commands only (a storage's ``reset``)."""
    return _module_check(_identity(client))


def _module_check(identity: object) -> Plan[None]:
    """``MODULE LIST``, unless ``identity`` passed before: Goblin must be loaded, at version
    ``__module_version__`` or later. A server that refuses the command (an ACL, a proxy) is
    taken at its word: a Goblin command it lacks is explained by :func:`send`. A failed check is
    not kept: the next call asks again, and finds a module loaded meanwhile."""
    if identity in _PASSED:
        return
    reply = yield MODULE_LIST
    if isinstance(reply, Failed):
        if not isinstance(reply.error, _error_replies()):
            raise reply.error
    else:
        check_module_list(reply)
    with contextlib.suppress(TypeError):  # a client that cannot be weakly referenced: asked every time
        _PASSED.add(identity)


def _error_replies() -> tuple[type[Exception], ...]:
    """The error-reply classes of the client libraries in use (one of whose clients replied)."""
    names = ("redis.exceptions", "coredis.exceptions", "valkey.exceptions")
    return tuple(module.ResponseError for name in names if (module := sys.modules.get(name)) is not None)


def _version_text(version: int) -> str:
    return f"{version // 10000}.{version // 100 % 100}.{version % 100}"


def missing_module_message(what: str) -> str:
    """``what``: the command the server did not know, or how we learnt it lacks Goblin."""
    return (
        f"the server has no {what}: load the Goblin module (loadmodule /path/to/libgoblin.so in "
        "its config file, or MODULE LOAD /path/to/libgoblin.so; on every node of a cluster); "
        f"goblin_redis needs Goblin {_version_text(__module_version__)} (MODULE LIST's ver "
        f"{__module_version__}) or later"
    )


def too_old_message(version: int) -> str:
    return (
        f"the server's Goblin module is version {version} ({_version_text(version)}); goblin_redis "
        f"needs version {__module_version__} ({_version_text(__module_version__)}) or later: load a "
        "newer libgoblin.so (MODULE UNLOAD needs the module's allow-unload argument, so restart the "
        "server with the new loadmodule)"
    )


def module_error(command: str, error: BaseException) -> GoblinModuleError | None:
    """What a client library's error about the Goblin command ``command`` says of the module, if
    anything: the server lacks the command (its ``unknown command`` reply, or redis-py's cluster
    client, which looks every command up in the server's ``COMMAND`` table before it sends it),
    or its Goblin takes other arguments than the ones this package sends: an older module."""
    if not command.upper().startswith("GOBLIN."):
        return None
    text = str(error).lower()
    if "unknown command" in text or "doesn't exist in redis commands" in text:
        return GoblinModuleError(missing_module_message(command))
    if "wrong number of arguments" in text:
        return GoblinModuleError(
            f"the server's {command} does not take these arguments: its Goblin module is older than "
            f"goblin_redis needs (version {__module_version__} or later): load a newer libgoblin.so"
        )
    return None


def module_version(reply: object) -> int | None:
    """Goblin's version in a ``MODULE LIST`` reply, RESP2 (flat arrays) or RESP3 (maps), bytes
    or text, raw or as redis-py's callback makes it; ``None`` when Goblin is not loaded."""
    if not isinstance(reply, Sequence) or isinstance(reply, (str, bytes)):
        return None
    for module in reply:
        fields: dict[str, object] = {}
        if isinstance(module, Mapping):
            fields = {_text(k): v for k, v in module.items()}
        elif isinstance(module, Sequence) and not isinstance(module, (str, bytes)):
            fields = {_text(module[i]): module[i + 1] for i in range(0, len(module) - 1, 2)}
        if _text(fields.get("name", "")) == "goblin":
            version = fields.get("ver")
            return int(_text(version)) if version is not None else 0
    return None


def check_module_list(reply: object) -> None:
    """Raises :class:`GoblinModuleError` unless ``MODULE LIST`` lists Goblin, recent enough."""
    version = module_version(reply)
    if version is None:
        raise GoblinModuleError(missing_module_message("Goblin module (MODULE LIST lists none)"))
    if version < __module_version__:
        raise GoblinModuleError(too_old_message(version))


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


# ------------------------------------------------------------------------ checked arguments
def whole(
    value: object, what: str, least: int, most: int | None = None, wrong_type: type[Exception] = ValueError
) -> int:
    """``value`` as a whole number from ``least`` (to ``most``); a bool or a float is
    ``wrong_type`` (a TypeError where Python's own convention is kept), a number out of range a
    ValueError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(f"{what} must be an int, not {type(value).__name__}: {value!r}")
    if most is not None and not least <= value <= most:
        raise ValueError(f"{what} must be between {least} and {most}, not {value}")
    if value < least:
        raise ValueError(f"{what} must be at least {least}, not {value}")
    return value


def number(value: object, what: str, wrong_type: type[Exception] = ValueError) -> float:
    """``value`` as a real number (an int or a float; a bool is ``wrong_type``), not NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise wrong_type(f"{what} must be a number of seconds, not {type(value).__name__}: {value!r}")
    if math.isnan(value):
        raise ValueError(f"{what} must be a number of seconds, not NaN")
    return value


# ----------------------------------------------------------------- rate limits (the storages)
# The moving window's ``window`` is the storage's ``expiry`` itself: Goblin evicts the entries at
# or below ``now - window``, so an entry counts while it is younger than ``expiry`` on the
# server's millisecond clock. (limits' own script, on the client's microsecond clock, also counts
# one exactly ``expiry`` old. On a millisecond clock that boundary is a whole millisecond wide:
# kept, as ``expiry + 0.0005`` would keep it, the window lasts up to 1 ms longer than ``expiry``,
# and limits' ``test_moving_window_huge_cost``, which waits 2 s by the client's clock and then
# expects the first entry gone, fails when that wait ends within the millisecond.)


def increx(key: str, expiry: int, cost: int) -> Command:
    """``GOBLIN.INCREX key expiry [COST cost]``: adds ``cost``, arming the TTL of ``expiry``
    seconds when the result equals ``cost`` (a new key, or one at 0), as limits' ``incr_expire.lua``."""
    if cost == 1:
        return ("GOBLIN.INCREX", key, expiry)
    return ("GOBLIN.INCREX", key, expiry, "COST", cost)


def zwindow_entry(key: str, limit: int, window: int, cost: int) -> Command:
    """The moving window: one entry of cost ``cost`` on the server's clock, if it fits. The
    member is empty: with COST, Goblin makes each entry's member unique itself."""
    return ("GOBLIN.ZWINDOW", key, "*", window, limit, "", "COST", cost)


def zwstats(key: str, window: int) -> Command:
    return ("GOBLIN.ZWSTATS", key, "*", window)


def swindow(key: str, period: int, limit: int, cost: int) -> Command:
    """The sliding window counter: windows aligned to multiples of ``period`` on the server's clock."""
    if cost == 1:
        return ("GOBLIN.SWINDOW", key, period, limit)
    return ("GOBLIN.SWINDOW", key, period, limit, "COST", cost)


def swstats(key: str, period: int) -> Command:
    return ("GOBLIN.SWSTATS", key, period)


def as_int(reply: object) -> int:
    if isinstance(reply, int):
        return reply
    if isinstance(reply, (bytes, str)):
        return int(reply)
    raise TypeError(f"expected an integer reply, got {reply!r}")


def admitted(reply: object) -> bool:
    """``GOBLIN.ZWINDOW``'s 1 or 0, ``GOBLIN.BZWINDOW``'s 1 or nil, or the first field of
    ``GOBLIN.SWINDOW``'s reply."""
    if isinstance(reply, Sequence) and not isinstance(reply, (str, bytes)):
        reply = reply[0]
    return reply is not None and as_int(reply) == 1


def window_stats(reply: object) -> tuple[int, str | None]:
    """``GOBLIN.ZWSTATS`` -> the units inside the window, and the oldest entry's time (seconds,
    as the server wrote it; None for an empty window)."""
    if not isinstance(reply, Sequence) or isinstance(reply, (str, bytes)) or len(reply) != 2:
        raise TypeError(f"expected [units, oldest], got {reply!r}")
    units, oldest = reply
    return as_int(units), None if oldest is None else _text(oldest)


def sliding_stats(reply: object) -> tuple[int, int, int, int]:
    """``GOBLIN.SWSTATS`` (or the last four fields of ``GOBLIN.SWINDOW``): the previous
    window's count and TTL in milliseconds, the current one's count and TTL."""
    if not isinstance(reply, Sequence) or isinstance(reply, (str, bytes)) or len(reply) != 4:
        raise TypeError(f"expected four integers, got {reply!r}")
    previous, previous_ms, current, current_ms = (as_int(field) for field in reply)
    return previous, previous_ms, current, current_ms


# ---------------------------------------------------------------------------------- locks
#: The shortest wait sent to the server: 0 would mean "for ever" to a blocking command.
SHORTEST_WAIT = 0.001


def lease_ms(timeout: float | None) -> int:
    """A lock's lease in milliseconds for its ``timeout`` in seconds: 0 (no lease) for None or
    0, as redis-py's Lock takes them; otherwise ``int(timeout * 1000)``, truncated as redis-py
    does, but at least 1 ms, so that a tiny lease never becomes no lease."""
    if not timeout:
        return 0
    return max(int(timeout * 1000), 1)


def wait_argument(seconds: float) -> str:
    """A blocking command's timeout: seconds with microseconds, never below ``SHORTEST_WAIT``
    (the server rounds up to the millisecond; 0 would wait for ever)."""
    return f"{max(seconds, SHORTEST_WAIT):.6f}"


def fenceable(key: bytes) -> bool:
    """Whether the server can keep a fencing token beside ``key`` (in its cluster slot): the
    key has a hash tag (``{...}``, not empty), or is not empty and holds no ``}``."""
    opening = key.find(b"{")
    if opening >= 0:
        closing = key.find(b"}", opening + 1)
        if closing > opening + 1:
            return True
    return bool(key) and b"}" not in key


def lock(key: Key, token: bytes, timeout: float | None) -> Command:
    """``GOBLIN.LOCK key token ms FENCE``: ``SET NX PX`` that never passes a caller waiting in
    line, replying the grant's fencing token."""
    return ("GOBLIN.LOCK", key, token, lease_ms(timeout), "FENCE")


def block(key: Key, token: bytes, timeout: float | None, wait: float) -> Command:
    """``GOBLIN.BLOCK key token ms wait FENCE``: waits in the server's line, up to ``wait``
    seconds, and holds the lock the moment it is released or expires. Sent again with the same
    token, it keeps the caller's place (the holder's own token re-arms, and keeps its fencing
    token)."""
    return ("GOBLIN.BLOCK", key, token, lease_ms(timeout), wait_argument(wait), "FENCE")


def cad(key: Key, token: str | bytes) -> Command:
    """``GOBLIN.CAD key token``: releases a lock, or a semaphore's permit, that ``token`` holds."""
    return ("GOBLIN.CAD", key, token)


def extend(key: Key, token: str | bytes, ms: int, replace: bool) -> Command:
    """``GOBLIN.EXTEND key token ms [REPLACE] FENCE``: ``ms`` more on the lease of the lock
    ``token`` holds, or, with ``replace``, the lease from now, replying the holder's fencing
    token (0: not held). A time that is not positive is the server's error: an extend never
    deletes the lock."""
    options = ("REPLACE", "FENCE") if replace else ("FENCE",)
    return ("GOBLIN.EXTEND", key, token, ms, *options)


def fencing_token(reply: object) -> int | None:
    """A grant's fencing token: ``GOBLIN.LOCK`` / ``GOBLIN.BLOCK``'s (nil: not granted),
    ``GOBLIN.ZWINDOW``'s (0: refused), ``GOBLIN.BZWINDOW``'s (nil), or ``GOBLIN.EXTEND``'s (0:
    not held), all with ``FENCE``. None where nothing was granted."""
    if reply is None:
        return None
    token = as_int(reply)
    return token if token > 0 else None


def permit(key: Key, lease: float, limit: int, member: bytes) -> Command:
    """``GOBLIN.ZWINDOW key * lease limit member FENCE``: a semaphore's permit, refused while
    anyone waits in line, replying its fencing token (0: refused)."""
    return ("GOBLIN.ZWINDOW", key, "*", repr(lease), limit, member, "FENCE")


def renewal(key: Key, lease: float, limit: int, member: bytes) -> Command:
    """``GOBLIN.ZWINDOW ... XX FENCE``: the permit's lease starts over, its fencing token kept;
    it never admits."""
    return ("GOBLIN.ZWINDOW", key, "*", repr(lease), limit, member, "XX", "FENCE")


def bzwindow(key: Key, lease: float, limit: int, member: bytes, wait: float) -> Command:
    """``GOBLIN.BZWINDOW key lease limit member wait FENCE``: waits in line for a permit,
    replying its fencing token (nil: the wait ended)."""
    return ("GOBLIN.BZWINDOW", key, repr(lease), limit, member, wait_argument(wait), "FENCE")


# ------------------------------------------------------------------ a readers-writer lock
#: A readers-writer lock's modes, as ``GOBLIN.RWHELD`` names them.
Mode: TypeAlias = Literal["read", "write"]


def rw_lock(key: Key, token: bytes, ms: int, mode: Mode) -> Command:
    """``GOBLIN.RLOCK`` or ``GOBLIN.WLOCK key token ms FENCE``: the read or write lease, if the
    key lets the caller in now (never before a caller waiting in line, unless it holds the key
    already: it renews, is demoted or promoted), replying the grant's fencing token (nil: not
    now)."""
    return ("GOBLIN.RLOCK" if mode == "read" else "GOBLIN.WLOCK", key, token, ms, "FENCE")


def rw_wait(key: Key, token: bytes, ms: int, mode: Mode, wait: float) -> Command:
    """``GOBLIN.BRLOCK`` or ``GOBLIN.BWLOCK key token ms wait FENCE``: waits in the key's one
    line of readers and writers, up to ``wait`` seconds, replying the grant's fencing token
    (nil: the wait ended). A reader asking to write while another reader waits so is refused
    with ``-DEADLOCK``."""
    return ("GOBLIN.BRLOCK" if mode == "read" else "GOBLIN.BWLOCK", key, token, ms, wait_argument(wait), "FENCE")


def rw_extend(key: Key, token: bytes, ms: int, replace: bool) -> Command:
    """``GOBLIN.RWEXTEND key token ms [REPLACE] FENCE``: ``ms`` more on the lease ``token``
    holds, whichever its mode (or, with ``replace``, the lease ends ``ms`` from now), replying
    the holder's fencing token (0: not held)."""
    options = ("REPLACE", "FENCE") if replace else ("FENCE",)
    return ("GOBLIN.RWEXTEND", key, token, ms, *options)


def rw_unlock(key: Key, token: bytes) -> Command:
    """``GOBLIN.RWUNLOCK key token``: releases the lease ``token`` holds (1), whichever its
    mode; 0 if it holds none."""
    return ("GOBLIN.RWUNLOCK", key, token)


def rw_held(key: Key, token: bytes) -> Command:
    """``GOBLIN.RWHELD key token``: the mode of the lease ``token`` holds now, read only."""
    return ("GOBLIN.RWHELD", key, token)


def held_mode(reply: object) -> Mode | None:
    """``GOBLIN.RWHELD``'s reply: ``read``, ``write``, or None (a status reply, bytes or text)."""
    if reply is None:
        return None
    text = _text(reply)
    if text == "read":
        return "read"
    if text == "write":
        return "write"
    raise TypeError(f"GOBLIN.RWHELD replied {reply!r}")


def is_deadlock(error: BaseException) -> bool:
    """Whether a command's error is ``GOBLIN.BWLOCK``'s ``-DEADLOCK``: another reader of the key
    already waits to write, and each would wait for the other."""
    return str(error).startswith("DEADLOCK ")


# --------------------------------------------------------------------------- policy sets
def period_text(period: float) -> str:
    """A GCRA period as sent: an int as it is, a float as the shortest decimal that reads back
    to the same double."""
    return str(period) if isinstance(period, int) else repr(float(period))


def mgcra_policy(key: str, max_burst: int, tokens_per_period: int, period: float) -> Command:
    """One policy's four arguments of ``GOBLIN.MGCRA``."""
    return (key, max_burst, tokens_per_period, period_text(period))


def mgcra(policies: Sequence[Sequence[Arg]], cost: int, option: str | None) -> Command:
    """``GOBLIN.MGCRA n <policies> TOKENS cost [PEEK | REFUND]``: the :func:`mgcra_policy`
    arguments of each of the ``n`` policies, decided together, all or nothing."""
    arguments = [argument for policy in policies for argument in policy]
    return ("GOBLIN.MGCRA", len(policies), *arguments, "TOKENS", cost, *([option] if option else []))


#: One policy's fields of a GOBLIN.MGCRA reply, as GOBLIN.GCRA (and CL.THROTTLE) gives them:
#: limited (1 or 0), limit, remaining, retry_after and reset_after (seconds; retry_after -1 for
#: none).
PolicyFields: TypeAlias = tuple[int, int, int, int, int]


def mgcra_reply(reply: object, policies: int) -> tuple[int, int, list[PolicyFields]]:
    """``GOBLIN.MGCRA``'s reply for ``policies`` policies: limited (1 or 0), the call's
    retry_after, and each policy's :data:`PolicyFields`."""
    if not isinstance(reply, (list, tuple)) or len(reply) != 2 + policies:
        raise TypeError(f"GOBLIN.MGCRA replied {reply!r}, not {2 + policies} fields")
    states = [policy_fields(fields, "GOBLIN.MGCRA") for fields in reply[2:]]
    return _integer(reply[0], "GOBLIN.MGCRA"), _integer(reply[1], "GOBLIN.MGCRA"), states


def policy_fields(reply: object, command: str) -> PolicyFields:
    """One policy's five fields, as GOBLIN.GCRA, each policy of GOBLIN.MGCRA, and CL.THROTTLE
    reply them."""
    if not isinstance(reply, (list, tuple)) or len(reply) != 5:
        raise TypeError(f"{command} replied {reply!r} for a policy, not 5 fields")
    limited, limit, remaining, retry_after, reset_after = (_integer(value, command) for value in reply)
    return (limited, limit, remaining, retry_after, reset_after)


def cl_throttle(key: Key, max_burst: int, count_per_period: int, period: int, quantity: int) -> Command:
    """``CL.THROTTLE key max_burst count_per_period period quantity``: redis-cell's command,
    Goblin's stand-in where the server has none (``period`` a whole number of seconds; a
    ``quantity`` of 0 looks without taking). Its reply is one policy's :data:`PolicyFields`
    (:func:`policy_fields`)."""
    return ("CL.THROTTLE", key, max_burst, count_per_period, period, quantity)


def _integer(value: object, command: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{command} replied {value!r} where an integer was due")
    return value
