"""The async storages: ``async+goblin://`` and ``async+goblin+cluster://``, on coredis (limits'
default) or on redis-py's asyncio client (``implementation="redispy"``), as limits offers both."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, cast

from limits.aio.storage import MovingWindowSupport, SlidingWindowCounterSupport, Storage
from limits.errors import ConfigurationError
from limits.storage.base import TimestampedSlidingWindow

from . import _wire as wire

if TYPE_CHECKING:
    import coredis
    import redis.asyncio

Implementation = Literal["coredis", "redispy"]


class _Backend(Protocol):
    """One client library, one server or a cluster: the few things the storage asks of it."""

    @property
    def base_exceptions(self) -> tuple[type[Exception], ...]: ...

    @property
    def response_error(self) -> type[Exception]: ...

    async def execute(self, key: str | None, *args: wire.Arg) -> object:
        """A command about ``key`` (routed to the node that holds it), or about none."""

    async def module_list(self) -> object: ...

    async def delete(self, keys: list[str]) -> int: ...

    def scan(self, pattern: str) -> AsyncIterator[str | bytes]: ...


# ----------------------------------------------------------------------------------- coredis
class _Coredis:
    """coredis: a command it does not know (every Goblin one) is sent as a ``RedisCommand``; on
    a cluster, with the key as coredis' ``keys`` execution option, which it routes by (its own
    command table finds no key in a module's command), following ``MOVED`` like any command."""

    def __init__(self, client: coredis.Redis[bytes] | coredis.RedisCluster[bytes], cluster: bool) -> None:
        import coredis.exceptions
        import coredis.typing

        self.client = client
        self.cluster = cluster
        self._command = coredis.typing.RedisCommand
        self._exceptions = coredis.exceptions

    @property
    def base_exceptions(self) -> tuple[type[Exception], ...]:
        return (self._exceptions.RedisError,)

    @property
    def response_error(self) -> type[Exception]:
        return self._exceptions.ResponseError

    async def execute(self, key: str | None, *args: wire.Arg) -> object:
        command = self._command(str(args[0]).encode(), tuple(args[1:]))
        execute = cast(Callable[..., Awaitable[object]], self.client.execute_command)
        if self.cluster and key is not None:
            return await execute(command, keys=(key,))
        return await execute(command)

    async def module_list(self) -> object:
        return await self.execute(None, "MODULE", "LIST")

    async def delete(self, keys: list[str]) -> int:
        if not self.cluster:
            return await self.client.delete(tuple(keys))
        # Keys of many slots: one DEL each, routed by its key.
        return sum(await asyncio.gather(*(self.client.delete([key]) for key in keys)))

    async def scan(self, pattern: str) -> AsyncIterator[str | bytes]:
        async for key in self.client.scan_iter(match=pattern, count=1000):
            yield key


# ------------------------------------------------------------------------- redis-py asyncio
class _Executes(Protocol):
    async def execute_command(self, *args: wire.Arg, **options: Any) -> Any: ...  # noqa: ANN401


class _Scans(Protocol):
    def scan_iter(self, match: str, count: int) -> AsyncIterator[str | bytes]: ...


class _Redispy:
    """redis-py's asyncio client; its cluster client routes Goblin's commands by the keys the
    module declares (``COMMAND``), as it routes any command."""

    def __init__(self, client: redis.asyncio.Redis | redis.asyncio.RedisCluster, cluster: bool) -> None:
        import redis.exceptions

        self.client = client
        self.cluster = cluster
        self._exceptions = redis.exceptions

    @property
    def base_exceptions(self) -> tuple[type[Exception], ...]:
        return (self._exceptions.RedisError,)

    @property
    def response_error(self) -> type[Exception]:
        return self._exceptions.ResponseError

    async def execute(self, key: str | None, *args: wire.Arg) -> object:
        return await cast(_Executes, self.client).execute_command(*args)

    async def module_list(self) -> object:
        # One name, as redis-py's cluster client looks up where to send it ("MODULE LIST").
        return await self.execute(None, "MODULE LIST")

    async def delete(self, keys: list[str]) -> int:
        client = cast(_Executes, self.client)
        if not self.cluster:
            return wire.as_int(await client.execute_command("DEL", *keys))
        replies = await asyncio.gather(*(client.execute_command("DEL", key) for key in keys))
        return sum(wire.as_int(reply) for reply in replies)

    async def scan(self, pattern: str) -> AsyncIterator[str | bytes]:
        async for key in cast(_Scans, self.client).scan_iter(match=pattern, count=1000):
            yield key


def _check_implementation(implementation: object) -> Implementation:
    if implementation not in ("coredis", "redispy"):
        raise ConfigurationError(
            f"async+goblin:// runs on coredis or redispy, not {implementation!r} "
            "(implementation='coredis', the default, or 'redispy')"
        )
    return implementation


def _basic_backend(implementation: Implementation, url: str, options: dict[str, Any]) -> _Backend:
    pool = options.pop("connection_pool", None)
    if implementation == "coredis":
        coredis = _import("coredis", "coredis")
        client = coredis.Redis(connection_pool=pool, **options) if pool else coredis.Redis.from_url(url, **options)
        return _Coredis(client, cluster=False)
    redis_asyncio = _import("redis.asyncio", "redis")
    if pool:
        return _Redispy(redis_asyncio.Redis(connection_pool=pool, **options), cluster=False)
    return _Redispy(redis_asyncio.Redis.from_url(url, **options), cluster=False)


def _cluster_backend(implementation: Implementation, uri: str, options: dict[str, Any]) -> _Backend:
    nodes, auth = wire.cluster_nodes(uri)
    merged: dict[str, Any] = {"max_connections": 1000, **auth, **options}
    if implementation == "coredis":
        coredis = _import("coredis", "coredis")
        startup = [{"host": host, "port": port} for host, port in nodes]
        return _Coredis(coredis.RedisCluster(startup_nodes=startup, **merged), cluster=True)
    redis_asyncio = _import("redis.asyncio", "redis")
    startup_nodes = [redis_asyncio.cluster.ClusterNode(host=host, port=port) for host, port in nodes]
    return _Redispy(redis_asyncio.RedisCluster(startup_nodes=startup_nodes, **merged), cluster=True)


def _import(module: str, package: str) -> Any:  # noqa: ANN401
    import importlib

    try:
        imported = importlib.import_module(module)
        if module == "redis.asyncio":
            importlib.import_module("redis.asyncio.cluster")
        return imported
    except ImportError as exc:
        raise ConfigurationError(f"async+goblin:// on {package} needs it installed (pip install {package})") from exc


class AsyncGoblinStorage(Storage, MovingWindowSupport, SlidingWindowCounterSupport, TimestampedSlidingWindow):
    """limits' async storage on one Redis or Valkey server with the Goblin module loaded: the
    async twin of :class:`goblin_redis.limits.GoblinStorage`, every decision one command.

    :param uri: ``async+goblin://[:password]@host:port[/db]``, ``async+goblins://`` (TLS) or
     ``async+goblin+unix:///path/to/socket``.
    :param implementation: ``coredis`` (limits' default) or ``redispy`` (redis-py's asyncio).
    :param key_prefix: the prefix of every key written (``GOBLIN``).
    :param wrap_exceptions: raise the client's errors as :class:`limits.errors.StorageError`.
    :param options: passed to the client (``from_url``; a ``connection_pool`` is used as is).
    """

    STORAGE_SCHEME = ["async+goblin", "async+goblins", "async+goblin+unix"]
    PREFIX = wire.PREFIX
    _SCHEMES: ClassVar[dict[str, str]] = {
        "async+goblin": "redis",
        "async+goblins": "rediss",
        "async+goblin+unix": "unix",
    }

    def __init__(
        self,
        uri: str,
        wrap_exceptions: bool = False,
        implementation: Implementation = "coredis",
        key_prefix: str = PREFIX,
        **options: Any,  # noqa: ANN401
    ) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions)
        self._setup(key_prefix)
        url = wire.redis_url(uri, self._SCHEMES)
        self.backend = _basic_backend(_check_implementation(implementation), url, dict(options))

    def _setup(self, key_prefix: str) -> None:
        self.key_prefix = key_prefix
        self._module_checked = False

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return self.backend.base_exceptions

    # ------------------------------------------------------------------------- the wire
    async def _goblin(self, key: str, *args: wire.Arg) -> object:
        """A Goblin command about ``key``: a server that lacks it is a GoblinModuleError."""
        await self._ensure_module()
        try:
            return await self.backend.execute(key, *args)
        except self.backend.base_exceptions as exc:
            translated = wire.module_error(str(args[0]), exc)
            if translated is not None:
                raise translated from exc
            raise

    async def _ensure_module(self) -> None:
        """Before the first call: ``MODULE LIST`` must list Goblin, recent enough (see the sync
        storage). Calls that start together may each ask once."""
        if self._module_checked:
            return
        try:
            reply = await self.backend.module_list()
        except self.backend.response_error:
            self._module_checked = True
            return
        wire.check_module_list(reply)
        self._module_checked = True

    async def _plain(self, key: str, *args: wire.Arg) -> object:
        await self._ensure_module()
        return await self.backend.execute(key, *args)

    def _key(self, key: str) -> str:
        return wire.prefixed(self.key_prefix, wire.check_key(key))

    def _sliding_key(self, key: str) -> str:
        return wire.sliding_key(self.key_prefix, wire.check_key(key))

    # ------------------------------------------------------------------- fixed window
    async def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        name = self._key(key)
        return wire.as_int(await self._goblin(name, *wire.incr(name, expiry, amount)))

    async def get(self, key: str) -> int:
        name = self._key(key)
        value = await self._plain(name, "GET", name)
        return wire.as_int(value) if value is not None else 0

    async def get_expiry(self, key: str) -> float:
        name = self._key(key)
        return wire.expiry_at(await self._plain(name, "PTTL", name))

    async def clear(self, key: str) -> None:
        name = self._key(key)
        await self._plain(name, "DEL", name)

    async def check(self) -> bool:
        try:
            await self._ensure_module()
            return bool(await self.backend.execute(None, "PING"))
        except Exception:  # noqa: BLE001 (limits' check: any failure is "not healthy")
            return False

    async def reset(self) -> int | None:
        """Deletes every key under the prefix (``SCAN`` and ``DEL``); returns how many."""
        await self._ensure_module()
        deleted, batch = 0, []
        async for key in self.backend.scan(wire.scan_pattern(self.key_prefix)):
            batch.append(key.decode() if isinstance(key, bytes) else key)
            if len(batch) == 500:
                deleted += await self.backend.delete(batch)
                batch = []
        if batch:
            deleted += await self.backend.delete(batch)
        return deleted

    # ------------------------------------------------------------------- moving window
    async def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        limit, expiry, amount = wire.check_decision(limit, expiry, amount)
        name = self._key(key)
        if amount > limit:
            return False
        return wire.admitted(await self._goblin(name, *wire.acquire_entry(name, limit, expiry, amount)))

    async def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        limit, expiry, _ = wire.check_decision(limit, expiry, 1)
        name = self._key(key)
        return wire.moving_window_reply(await self._goblin(name, *wire.moving_window(name, expiry)), limit)

    # --------------------------------------------------------- sliding window counter
    async def acquire_sliding_window_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        limit, expiry, amount = wire.check_decision(limit, expiry, amount)
        name = self._sliding_key(key)
        if amount > limit:
            return False
        return wire.admitted(await self._goblin(name, *wire.acquire_sliding(name, limit, expiry, amount)))

    async def get_sliding_window(self, key: str, expiry: int) -> tuple[int, float, int, float]:
        expiry = wire.check_whole("expiry", expiry, 1)
        name = self._sliding_key(key)
        return wire.sliding_window_reply(await self._goblin(name, *wire.sliding_window(name, expiry)))

    async def clear_sliding_window(self, key: str, expiry: int) -> None:
        name = self._sliding_key(key)
        await self._plain(name, "DEL", name)


class AsyncGoblinClusterStorage(AsyncGoblinStorage):
    """:class:`AsyncGoblinStorage` on a cluster whose every node loads Goblin.

    :param uri: ``async+goblin+cluster://[:password]@host:port,host:port``
    :param options: passed to ``coredis.RedisCluster`` or ``redis.asyncio.RedisCluster``.
    """

    STORAGE_SCHEME = ["async+goblin+cluster"]

    def __init__(
        self,
        uri: str,
        wrap_exceptions: bool = False,
        implementation: Implementation = "coredis",
        key_prefix: str = wire.PREFIX,
        **options: Any,  # noqa: ANN401
    ) -> None:
        Storage.__init__(self, uri, wrap_exceptions=wrap_exceptions)
        self._setup(key_prefix)
        self.backend = _cluster_backend(_check_implementation(implementation), uri, dict(options))
