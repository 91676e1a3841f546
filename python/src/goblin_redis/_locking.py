"""What the sync and async lock classes share: tokens, leases in milliseconds, and the slices a
blocking acquire waits in (each shorter than the connection's socket timeout)."""

from __future__ import annotations

import math
import uuid
from typing import Any, cast

from redis.exceptions import LockError, LockNotOwnedError

#: The longest one blocking command waits (when the connection has no socket timeout, say): a
#: waiter still comes back now and then, so a lost connection is noticed within this.
LONGEST_SLICE = 60.0

#: The shortest wait sent to the server: 0 would mean "for ever" to a blocking command.
SHORTEST_WAIT = 0.001


def new_token() -> bytes:
    """A fresh token, as redis-py's Lock makes it."""
    return uuid.uuid1().hex.encode()


def lease_ms(timeout: float | None) -> int:
    """The lease in milliseconds for a lock's ``timeout`` in seconds: 0 for None or 0 (no lease,
    as redis-py's Lock takes it), otherwise ``int(timeout * 1000)`` as redis-py truncates it,
    but at least 1 ms for a positive timeout, so that a tiny lease never becomes no lease."""
    if not timeout:
        return 0
    ms = int(timeout * 1000)
    return max(ms, 1) if timeout > 0 else ms


def positive_ms(seconds: float) -> int:
    """A time in seconds as whole milliseconds, truncated as redis-py does."""
    return int(seconds * 1000)


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
    return max(min(timeout - min(1.0, 0.75 * timeout), LONGEST_SLICE), SHORTEST_WAIT)


def wait_argument(seconds: float) -> str:
    """A blocking command's timeout argument: seconds with microseconds, never below
    ``SHORTEST_WAIT`` (the server rounds up to the millisecond; 0 would wait for ever)."""
    return f"{max(seconds, SHORTEST_WAIT):.6f}"


def granted(reply: Any) -> bool:  # noqa: ANN401
    """GOBLIN.LOCK / GOBLIN.BLOCK's reply: OK (in any protocol or decoding) or nil."""
    return reply is not None and reply is not False


def lock_error(message: str, name: str | None = None) -> LockError:
    """redis-py's ``LockError`` (its constructor is untyped)."""
    error: LockError = cast(Any, LockError)(message, lock_name=name)
    return error


def not_owned(message: str, name: str | None = None) -> LockNotOwnedError:
    """redis-py's ``LockNotOwnedError``: the lock or permit is no longer this holder's."""
    error: LockNotOwnedError = cast(Any, LockNotOwnedError)(message, lock_name=name)
    return error
