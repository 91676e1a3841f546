"""What the storages send and what they read back: one Goblin command per decision, its
arguments checked before anything is sent, its reply turned into what limits expects. Shared
by the sync and the async storages; no client library is imported here."""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Mapping, Sequence

from limits.errors import ConfigurationError

from .. import __module_version__

#: An argument of a command, as the client libraries send it.
Arg = str | int

#: The default prefix of every key the storages write: not limits' own ("LIMITS"), so that a
#: storage switched from ``redis://`` to ``goblin://`` never meets a key of the other kind
#: (limits' moving window is a list, Goblin's a sorted set).
PREFIX = "GOBLIN"

#: The moving window's ``window`` is ``expiry`` itself: Goblin evicts the entries at or below
#: ``now - window``, so an entry counts while it is younger than ``expiry`` on the server's
#: millisecond clock. (limits' own script, on the client's microsecond clock, also counts one
#: exactly ``expiry`` old. On a millisecond clock that boundary is a whole millisecond wide:
#: kept, as ``expiry + 0.0005`` would keep it, the window lasts up to 1 ms longer than ``expiry``,
#: and limits' ``test_moving_window_huge_cost``, which waits 2 s by the client's clock and then
#: expects the first entry gone, fails when that wait ends within the millisecond.)


class GoblinModuleError(ConfigurationError):
    """The server has no Goblin module, or one too old for this package: a configuration error
    of the server, raised at the first call instead of a bare "unknown command"."""


def missing_module_message(what: str) -> str:
    """``what``: the command the server did not know, or how we learnt it lacks Goblin."""
    return (
        f"the server has no {what}: load the Goblin module (loadmodule "
        "/path/to/libgoblin.so in its config file, or MODULE LOAD /path/to/libgoblin.so); "
        f"goblin_redis needs Goblin version {__module_version__} or later"
    )


def too_old_message(version: int) -> str:
    return (
        f"the server's Goblin module is version {version}; goblin_redis needs version "
        f"{__module_version__} or later: load a newer libgoblin.so (MODULE UNLOAD needs the "
        "module's allow-unload argument, so restart the server with the new loadmodule)"
    )


def module_error(command: str, error: BaseException) -> GoblinModuleError | None:
    """What a client library's error about a Goblin command says of the module, if anything:
    the server lacks the command (its ``unknown command`` reply, or redis-py's cluster client,
    which looks every command up in the server's ``COMMAND`` table before it sends it), or its
    Goblin takes other arguments than these (checked here before they were sent): an older
    module."""
    text = str(error).lower()
    if "unknown command" in text or "doesn't exist in redis commands" in text:
        return GoblinModuleError(missing_module_message(command))
    if "wrong number of arguments" in text:
        return GoblinModuleError(
            f"the server's {command} does not take these arguments: its Goblin module is older than "
            f"goblin_redis needs (version {__module_version__} or later, with COST, GOBLIN.ZWSTATS, "
            "GOBLIN.SWINDOW and GOBLIN.SWSTATS): load a newer libgoblin.so"
        )
    return None


# ----------------------------------------------------------------------- the module's version
def module_version(reply: object) -> int | None:
    """Goblin's version in a ``MODULE LIST`` reply, RESP2 (flat arrays) or RESP3 (maps), bytes
    or text; ``None`` when Goblin is not loaded."""
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


# ----------------------------------------------------------------------------------- checks
def check_key(key: object) -> str:
    if not isinstance(key, str):
        raise ValueError(f"a rate limit key is a str, not {type(key).__name__}: {key!r}")
    return key


def check_whole(name: str, value: object, minimum: int) -> int:
    """An integer argument of limits' storage API (``expiry``, ``limit``, ``amount``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, not {type(value).__name__}: {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    return value


def check_decision(limit: object, expiry: object, amount: object) -> tuple[int, int, int]:
    """``limit`` may be anything limits allows (a cost above it is refused without a call);
    ``expiry`` is a positive number of seconds; ``amount``, the cost, at least 1."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise ValueError(f"limit must be an int, not {type(limit).__name__}: {limit!r}")
    return limit, check_whole("expiry", expiry, 1), check_whole("amount", amount, 1)


# --------------------------------------------------------------------------------- commands
def incr(key: str, expiry: object, amount: object) -> tuple[Arg, ...]:
    """limits' ``incr``: ``GOBLIN.INCREX key expiry [COST amount]``, the TTL armed when the
    result equals ``amount`` (a new key, or one at 0), as limits' ``incr_expire.lua``."""
    seconds = check_whole("expiry", expiry, 1)
    cost = check_whole("amount", amount, 1)
    if cost == 1:
        return ("GOBLIN.INCREX", key, seconds)
    return ("GOBLIN.INCREX", key, seconds, "COST", cost)


def window(expiry: int) -> int:
    return expiry


def acquire_entry(key: str, limit: int, expiry: int, amount: int) -> tuple[Arg, ...]:
    """The moving window: one entry of cost ``amount`` on the server's clock. The member is
    empty: with COST, Goblin makes each entry's member unique itself."""
    return ("GOBLIN.ZWINDOW", key, "*", window(expiry), limit, "", "COST", amount)


def moving_window(key: str, expiry: int) -> tuple[Arg, ...]:
    return ("GOBLIN.ZWSTATS", key, "*", window(expiry))


def acquire_sliding(key: str, limit: int, expiry: int, amount: int) -> tuple[Arg, ...]:
    if amount == 1:
        return ("GOBLIN.SWINDOW", key, expiry, limit)
    return ("GOBLIN.SWINDOW", key, expiry, limit, "COST", amount)


def sliding_window(key: str, expiry: int) -> tuple[Arg, ...]:
    return ("GOBLIN.SWSTATS", key, expiry)


# ---------------------------------------------------------------------------------- replies
def as_int(reply: object) -> int:
    if isinstance(reply, int):
        return reply
    if isinstance(reply, (bytes, str)):
        return int(reply)
    raise TypeError(f"expected an integer reply, got {reply!r}")


def moving_window_reply(reply: object, limit: int) -> tuple[float, int]:
    """``GOBLIN.ZWSTATS`` -> ``[units, oldest]``: limits' ``(window start, count)``; an empty
    window starts now. The count is capped at the limit, as limits' own script caps it (a limit
    lowered since the entries were admitted)."""
    units, oldest = _pair(reply)
    count = max(0, min(as_int(units), limit))
    if oldest is None or count == 0:
        return time.time(), 0
    return float(_text(oldest)), count


def sliding_window_reply(reply: object) -> tuple[int, float, int, float]:
    """``GOBLIN.SWSTATS`` (or the last four fields of ``GOBLIN.SWINDOW``) -> limits'
    ``(previous count, previous TTL s, current count, current TTL s)``."""
    if not isinstance(reply, Sequence) or len(reply) != 4:
        raise TypeError(f"expected four integers, got {reply!r}")
    previous, previous_ms, current, current_ms = (as_int(field) for field in reply)
    return previous, max(0, previous_ms) / 1000, current, max(0, current_ms) / 1000


def admitted(reply: object) -> bool:
    """``GOBLIN.ZWINDOW``'s 1 or 0, or the first field of ``GOBLIN.SWINDOW``'s reply."""
    if isinstance(reply, Sequence) and not isinstance(reply, (str, bytes)):
        reply = reply[0]
    return as_int(reply) == 1


def expiry_at(pttl: object) -> float:
    """limits' ``get_expiry``: when the key expires, on this machine's clock (now, for a key
    that does not exist or has no TTL)."""
    return time.time() + max(0, as_int(pttl)) / 1000


def _pair(reply: object) -> tuple[object, object]:
    if not isinstance(reply, Sequence) or len(reply) != 2:
        raise TypeError(f"expected [units, oldest], got {reply!r}")
    return reply[0], reply[1]


# ------------------------------------------------------------------------------------- keys
def prefixed(prefix: str, key: str) -> str:
    return f"{prefix}:{key}"


def sliding_key(prefix: str, key: str) -> str:
    """The sliding window counter's one key (both windows live in it): limits' name for its
    current window, so that a key of each strategy never shares a name."""
    return f"{prefix}:{{{key}}}"


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
