"""What the sync and the async storages share: limits' arguments checked, the keys, the URIs,
and each operation of limits' storage API as a plan over the command vocabulary
(``goblin_redis._commands``): one Goblin command per decision. No client library is imported
here."""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Mapping

from limits.errors import ConfigurationError

from .. import _commands as commands
from .._commands import Plan, send

#: The default prefix of every key the storages write: not limits' own ("LIMITS"), so that a
#: storage switched from ``redis://`` to ``goblin://`` never meets a key of the other kind
#: (limits' moving window is a list, Goblin's a sorted set).
PREFIX = "GOBLIN"


# ----------------------------------------------------------------------------------- checks
def check_key(key: object) -> str:
    if not isinstance(key, str):
        raise ValueError(f"a rate limit key is a str, not {type(key).__name__}: {key!r}")
    return key


def check_decision(limit: object, expiry: object, amount: object) -> tuple[int, int, int]:
    """``limit`` may be anything limits allows (a cost above it is refused without a call);
    ``expiry`` is a positive number of seconds; ``amount``, the cost, at least 1."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise ValueError(f"limit must be an int, not {type(limit).__name__}: {limit!r}")
    return limit, commands.whole(expiry, "expiry", 1), commands.whole(amount, "amount", 1)


# ------------------------------------------------------------------------------- operations
def incr(key: str, expiry: object, amount: object) -> Plan[int]:
    """limits' ``incr``: ``GOBLIN.INCREX``, the TTL armed when the result equals ``amount``."""
    command = commands.increx(key, commands.whole(expiry, "expiry", 1), commands.whole(amount, "amount", 1))
    return commands.as_int((yield from send(command)))


def get(key: str) -> Plan[int]:
    value = yield from send(("GET", key))
    return 0 if value is None else commands.as_int(value)


def get_expiry(key: str) -> Plan[float]:
    """When the key expires, on this machine's clock (now, for a key that does not exist or has
    no TTL), from ``PTTL``: to the millisecond."""
    return time.time() + max(0, commands.as_int((yield from send(("PTTL", key))))) / 1000


def delete(key: str) -> Plan[None]:
    yield from send(("DEL", key))


def ping() -> Plan[bool]:
    return bool((yield from send(("PING",))))


def acquire_entry(key: str, limit: object, expiry: object, amount: object) -> Plan[bool]:
    """The moving window: ``GOBLIN.ZWINDOW``, one entry of cost ``amount`` if the window holds
    room for it; a cost above the limit is refused without a call."""
    limit, expiry, amount = check_decision(limit, expiry, amount)
    if amount > limit:
        return False
    return commands.admitted((yield from send(commands.zwindow_entry(key, limit, expiry, amount))))


def get_moving_window(key: str, limit: object, expiry: object) -> Plan[tuple[float, int]]:
    """``GOBLIN.ZWSTATS`` -> limits' ``(window start, count)``; an empty window starts now. The
    count is capped at the limit, as limits' own script caps it (a limit lowered since the
    entries were admitted)."""
    limit, expiry, _ = check_decision(limit, expiry, 1)
    units, oldest = commands.window_stats((yield from send(commands.zwstats(key, expiry))))
    count = max(0, min(units, limit))
    if oldest is None or count == 0:
        return time.time(), 0
    return float(oldest), count


def acquire_sliding_window_entry(key: str, limit: object, expiry: object, amount: object) -> Plan[bool]:
    """``GOBLIN.SWINDOW``: windows aligned to multiples of ``expiry`` on the server's clock."""
    limit, expiry, amount = check_decision(limit, expiry, amount)
    if amount > limit:
        return False
    return commands.admitted((yield from send(commands.swindow(key, expiry, limit, amount))))


def get_sliding_window(key: str, expiry: object) -> Plan[tuple[int, float, int, float]]:
    """``GOBLIN.SWSTATS`` -> limits' ``(previous count, previous TTL s, current count, current TTL s)``."""
    command = commands.swstats(key, commands.whole(expiry, "expiry", 1))
    previous, previous_ms, current, current_ms = commands.sliding_stats((yield from send(command)))
    return previous, max(0, previous_ms) / 1000, current, max(0, current_ms) / 1000


# ------------------------------------------------------------------------------------- keys
def prefixed(prefix: str, key: object) -> str:
    """The fixed and moving windows' key: ``prefix:key``."""
    return f"{prefix}:{check_key(key)}"


def sliding_key(prefix: str, key: object) -> str:
    """The sliding window counter's one key (both windows live in it): limits' name for its
    current window, so that a key of each strategy never shares a name."""
    return f"{prefix}:{{{check_key(key)}}}"


def scan_pattern(prefix: str) -> str:
    """A SCAN MATCH pattern for every key under ``prefix``, its glob characters escaped."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", prefix) + ":*"


# -------------------------------------------------------------------------------------- URIs
def redis_url(uri: str, schemes: Mapping[str, str]) -> str:
    """``goblin://...`` as the client library's URL: each scheme of ``schemes`` becomes its
    value (``goblin`` -> ``redis``, ``goblins`` -> ``rediss``, ``goblin+unix`` -> ``unix``)."""
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in schemes:
        raise ConfigurationError(f"not a Goblin storage URI (expected {', '.join(schemes)}): {uri}")
    return f"{schemes[scheme]}://{rest}"


def cluster_nodes(uri: str) -> tuple[list[tuple[str, int]], dict[str, str]]:
    """The ``host:port`` list and the credentials of ``goblin+cluster://[user:pass@]h:p,h:p``."""
    parsed = urllib.parse.urlparse(uri)
    netloc = parsed.netloc.rpartition("@")[2]
    nodes: list[tuple[str, int]] = []
    for location in filter(None, (part.strip() for part in netloc.split(","))):
        try:
            sub = urllib.parse.urlparse(f"fake://{location}")
            host, port = sub.hostname, sub.port
        except ValueError as exc:
            raise ConfigurationError(f"cannot parse the location {location!r} of {uri}") from exc
        if host is None or port is None:
            raise ConfigurationError(f"missing host or port in location {location!r} of {uri}")
        nodes.append((host, port))
    if not nodes:
        raise ConfigurationError(f"no cluster node in {uri}")
    auth: dict[str, str] = {}
    if parsed.username:
        auth["username"] = urllib.parse.unquote(parsed.username)
    if parsed.password:
        auth["password"] = urllib.parse.unquote(parsed.password)
    return nodes, auth
