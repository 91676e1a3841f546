"""goblin_redis.limits' own tests, beside limits' suite: what the suite does not ask. Bad input
is a ValueError before anything is sent, and writes nothing; a cost above the limit is refused
without a call; a server without Goblin is a clear GoblinModuleError at the first call; a
server that refuses MODULE LIST still serves; reset() deletes its own keys only; the client's
errors wrap as limits' StorageError when asked. Sync, and async on coredis and on redis-py.

    GOBLIN_TEST_SERVER=127.0.0.1:PORT GOBLIN_TEST_BARE=127.0.0.1:PORT pytest python/tests/test_storages.py

(``GOBLIN_TEST_BARE``: a server without the module.)
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import coredis.exceptions
import limits.aio.strategies
import pytest
import redis
from limits import RateLimitItemPerMinute
from limits.errors import ConfigurationError, StorageError
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter
from servers import BARE, SERVER

import goblin_redis
import goblin_redis.limits as goblin
from goblin_redis import _commands as commands
from goblin_redis.limits import _shared as shared

KINDS = ["sync", "coredis", "redispy"]


def _storage(kind: str, address: str = SERVER, **options: Any) -> Any:
    if kind == "sync":
        return storage_from_string(f"goblin://{address}", **options)
    return storage_from_string(f"async+goblin://{address}", implementation=kind, **options)


#: One event loop for every async call of the tests: a client's connections belong to the loop
#: that opened them, as in an application.
LOOP = asyncio.new_event_loop()


def _call(result: Any) -> Any:
    """A storage method's result, awaited for the async storages."""
    if inspect.isawaitable(result):
        return LOOP.run_until_complete(result)
    return result


def _goblin_calls(client: redis.Redis) -> int:
    stats: dict[str, dict[str, Any]] = client.info("commandstats")  # type: ignore[assignment]
    return sum(int(v["calls"]) for k, v in stats.items() if k.startswith("cmdstat_goblin."))


BAD: list[tuple[str, Callable[[Any], Any]]] = [
    ("expiry 0", lambda s: s.incr("k", 0)),
    ("expiry -1", lambda s: s.incr("k", -1)),
    ("expiry 1.5", lambda s: s.incr("k", 1.5)),
    ("expiry text", lambda s: s.incr("k", "10")),
    ("amount 0", lambda s: s.incr("k", 10, amount=0)),
    ("amount -3", lambda s: s.incr("k", 10, amount=-3)),
    ("amount True", lambda s: s.incr("k", 10, amount=True)),
    ("key bytes", lambda s: s.incr(b"k", 10)),
    ("moving amount 0", lambda s: s.acquire_entry("k", 10, 60, amount=0)),
    ("moving limit 2.5", lambda s: s.acquire_entry("k", 2.5, 60)),
    ("moving expiry 0", lambda s: s.acquire_entry("k", 10, 0)),
    ("moving stats expiry 0", lambda s: s.get_moving_window("k", 10, 0)),
    ("sliding amount 0", lambda s: s.acquire_sliding_window_entry("k", 10, 60, amount=0)),
    ("sliding expiry -1", lambda s: s.acquire_sliding_window_entry("k", 10, -1)),
    ("sliding stats expiry 0", lambda s: s.get_sliding_window("k", 0)),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("what", "call"), BAD, ids=[what for what, _ in BAD])
def test_bad_input_is_a_value_error_and_writes_nothing(
    server: redis.Redis, kind: str, what: str, call: Callable[[Any], Any]
) -> None:
    storage = _storage(kind)
    with pytest.raises(ValueError):  # noqa: PT011 (each message names the argument)
        _call(call(storage))
    assert server.dbsize() == 0
    assert _goblin_calls(server) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_cost_above_the_limit_is_refused_without_a_call(server: redis.Redis, kind: str) -> None:
    storage = _storage(kind)
    assert _call(storage.acquire_entry("k", 5, 60, amount=6)) is False
    assert _call(storage.acquire_sliding_window_entry("k", 5, 60, amount=6)) is False
    assert server.dbsize() == 0
    assert _goblin_calls(server) == 0
    # At the limit, it is admitted, and once full nothing more is.
    assert _call(storage.acquire_entry("k", 5, 60, amount=5)) is True
    assert _call(storage.acquire_entry("k", 5, 60, amount=1)) is False
    assert _call(storage.acquire_sliding_window_entry("s", 5, 60, amount=5)) is True
    assert _call(storage.acquire_sliding_window_entry("s", 5, 60, amount=1)) is False


@pytest.mark.parametrize("kind", KINDS)
def test_each_decision_is_one_goblin_command(server: redis.Redis, kind: str) -> None:
    storage = _storage(kind)
    _call(storage.check())  # the first call asks MODULE LIST once
    server.config_resetstat()
    _call(storage.incr("f", 60, amount=3))
    _call(storage.acquire_entry("m", 10, 60, amount=3))
    _call(storage.acquire_sliding_window_entry("s", 10, 60, amount=3))
    stats: dict[str, dict[str, Any]] = server.info("commandstats")  # type: ignore[assignment]
    calls = {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}
    calls.pop("config|resetstat", None)  # the reset itself, on servers that count it
    assert calls == {"goblin.increx": 1, "goblin.zwindow": 1, "goblin.swindow": 1}
    assert _call(storage.get("f")) == 3
    assert _call(storage.get_moving_window("m", 10, 60))[1] == 3
    assert _call(storage.get_sliding_window("s", 60))[2] == 3


@pytest.mark.parametrize("kind", KINDS)
def test_a_server_without_goblin_is_a_clear_error_at_the_first_call(bare: redis.Redis, kind: str) -> None:
    storage = _storage(kind, BARE)
    with pytest.raises(goblin.GoblinModuleError, match="MODULE LOAD") as raised:
        _call(storage.get("k"))
    assert isinstance(raised.value, ConfigurationError)
    assert "loadmodule" in str(raised.value)
    assert _call(_storage(kind, BARE).check()) is False
    every_method: list[Callable[[Any], Any]] = [
        lambda s: s.incr("k", 60),
        lambda s: s.get("k"),
        lambda s: s.get_expiry("k"),
        lambda s: s.clear("k"),
        lambda s: s.reset(),
        lambda s: s.acquire_entry("k", 10, 60),
        lambda s: s.get_moving_window("k", 10, 60),
        lambda s: s.acquire_sliding_window_entry("k", 10, 60),
        lambda s: s.get_sliding_window("k", 60),
        lambda s: s.clear_sliding_window("k", 60),
    ]
    # Only MODULE LIST reaches the server (no Goblin command: no error reply), asked again while
    # it fails. The counts start once the connections are made (CLIENT SETINFO and the like).
    client = storage.storage if kind == "sync" else storage.backend.client
    _call(client.ping())
    bare.config_resetstat()
    for method in every_method:
        with pytest.raises(goblin.GoblinModuleError, match="MODULE LOAD"):
            _call(method(storage))
    stats: dict[str, dict[str, Any]] = bare.info("commandstats")  # type: ignore[assignment]
    assert bare.info("errorstats") == {}
    assert int(stats["cmdstat_module|list"]["calls"]) == len(every_method), stats
    strategy = MovingWindowRateLimiter if kind == "sync" else limits.aio.strategies.MovingWindowRateLimiter
    limiter = strategy(_storage(kind, BARE))
    with pytest.raises(goblin.GoblinModuleError):
        _call(limiter.hit(RateLimitItemPerMinute(5), "user"))


def _connections(client: redis.Redis) -> int:
    stats: dict[str, Any] = client.info("stats")  # type: ignore[assignment]
    return int(stats["total_connections_received"])


@pytest.mark.parametrize("kind", KINDS)
def test_the_module_is_asked_for_once_per_storage(server: redis.Redis, kind: str) -> None:
    """MODULE LIST once per client (its connection pool), before the first call, not per call.
    (coredis asks MODULE LIST itself, once per connection it opens: those are counted apart.)"""
    opened = _connections(server)
    storage = _storage(kind)
    for _ in range(3):
        _call(storage.incr("f", 60))
        _call(storage.get("f"))
        _call(storage.acquire_entry("m", 10, 60))
        _call(storage.get_moving_window("m", 10, 60))
        _call(storage.acquire_sliding_window_entry("s", 10, 60))
        _call(storage.clear("f"))
        _call(storage.reset())
    stats: dict[str, dict[str, Any]] = server.info("commandstats")  # type: ignore[assignment]
    coredis_own = _connections(server) - opened if kind == "coredis" else 0
    assert int(stats["cmdstat_module|list"]["calls"]) == 1 + coredis_own


def test_one_error_class_for_the_whole_package() -> None:
    assert goblin.GoblinModuleError is goblin_redis.GoblinModuleError is commands.GoblinModuleError
    assert issubclass(goblin.GoblinModuleError, ConfigurationError)  # with limits installed


@pytest.mark.parametrize("kind", KINDS)
def test_a_server_that_refuses_module_list_still_serves(server: redis.Redis, kind: str) -> None:
    server.acl_setuser("app", enabled=True, passwords=["+app-secret"], keys=["*"], commands=["+@all", "-module"])
    try:
        storage = _storage(kind, f"app:app-secret@{SERVER}")
        assert _call(storage.incr("k", 60)) == 1
        assert _call(storage.acquire_entry("m", 2, 60)) is True
        assert _call(storage.check()) is True
    finally:
        server.acl_deluser("app")


@pytest.mark.parametrize("kind", KINDS)
def test_reset_deletes_the_prefix_keys_only(server: redis.Redis, kind: str) -> None:
    server.set("other:key", 1)
    server.set("GOBLIN-not-ours", 1)
    odd = _storage(kind, key_prefix="a*b")
    ours = _storage(kind)
    for i in range(7):
        _call(ours.incr(f"k{i}", 60))
    _call(odd.incr("x", 60))
    server.set("aXb:not-ours", 1)  # what an unescaped a*b:* would match
    assert _call(ours.reset()) == 7
    assert _call(odd.reset()) == 1
    left: list[bytes] = server.keys()  # type: ignore[assignment]
    assert sorted(left) == [b"GOBLIN-not-ours", b"aXb:not-ours", b"other:key"]


@pytest.mark.parametrize("kind", KINDS)
def test_errors_wrap_as_storage_error_when_asked(server: redis.Redis, kind: str) -> None:
    server.set("GOBLIN:k", "not a number")
    with pytest.raises(StorageError):
        _call(_storage(kind, wrap_exceptions=True).incr("k", 60))
    with pytest.raises((redis.RedisError, coredis.exceptions.RedisError)):
        _call(_storage(kind).incr("k", 60))


@pytest.mark.parametrize("kind", ["valkey", "anything"])
def test_an_unknown_async_implementation_is_a_configuration_error(kind: str) -> None:
    with pytest.raises(ConfigurationError, match="coredis or redispy"):
        storage_from_string(f"async+goblin://{SERVER}", implementation=kind)


def test_module_list_replies() -> None:
    resp2 = [[b"name", b"lua", b"ver", 1], [b"name", b"goblin", b"ver", 100, b"path", b"/x.so", b"args", []]]
    resp3 = [{b"name": b"goblin", b"ver": 100}]
    parsed = [{"name": "goblin", "ver": 101}]  # redis-py's MODULE LIST callback
    assert [commands.module_version(r) for r in (resp2, resp3, parsed, [], None)] == [100, 100, 101, None, None]
    with pytest.raises(goblin.GoblinModuleError, match="version 99"):
        commands.check_module_list([{"name": "goblin", "ver": 99}])
    with pytest.raises(goblin.GoblinModuleError, match="MODULE LOAD"):
        commands.check_module_list([{"name": "lua", "ver": 1}])
    major, minor, patch = (int(part) for part in goblin_redis.__version__.split("."))
    assert goblin_redis.__module_version__ == major * 10000 + minor * 100 + patch


def test_error_replies_that_mean_an_older_or_no_module() -> None:
    unknown = commands.module_error("GOBLIN.SWINDOW", Exception("unknown command 'GOBLIN.SWINDOW', with args ..."))
    assert unknown is not None
    assert "no GOBLIN.SWINDOW" in str(unknown)
    older = commands.module_error("GOBLIN.ZWINDOW", Exception("wrong number of arguments for 'goblin.zwindow' command"))
    assert older is not None
    assert "older" in str(older)
    assert commands.module_error("GOBLIN.INCREX", Exception("WRONGTYPE Operation against a key")) is None


def test_uris() -> None:
    assert shared.redis_url("goblins://:pw@h:1/2", {"goblins": "rediss"}) == "rediss://:pw@h:1/2"
    with pytest.raises(ConfigurationError):
        shared.redis_url("redis://h:1", {"goblin": "redis"})
    nodes, auth = shared.cluster_nodes("goblin+cluster://u:p%40ss@a:1,b:2/")
    assert (nodes, auth) == ([("a", 1), ("b", 2)], {"username": "u", "password": "p@ss"})
    with pytest.raises(ConfigurationError):
        shared.cluster_nodes("goblin+cluster://a,b:2")
    assert shared.scan_pattern("a*b?[c]\\") == "a\\*b\\?\\[c\\]\\\\:*"
