"""The async storages: ``async+goblin://`` and ``async+goblin+cluster://``, on coredis (limits'
default) or on redis-py's asyncio client (``implementation="redispy"``), as limits offers both."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeVar, cast

from limits.aio.storage import MovingWindowSupport, SlidingWindowCounterSupport, Storage
from limits.errors import ConfigurationError
from limits.storage.base import TimestampedSlidingWindow

from .._commands import Arg, Plan, arun, as_int, module_check
from . import _shared as shared

if TYPE_CHECKING:
    import coredis
    import redis.asyncio

Implementation = Literal["coredis", "redispy"]
T = TypeVar("T")


class _Backend(Protocol):
    """One client library, one server or a cluster: the few things the storage asks of it."""

    @property
    def client(self) -> object:
        """The client: what the module check is kept for (by its connection pool, if any)."""

    @property
    def base_exceptions(self) -> tuple[type[Exception], ...]: ...

    async def execute(self, key: str | None, *args: Arg) -> object:
        """A command about ``key`` (routed to the node that holds it), or about none. A
        command's name may be two words (``"MODULE LIST"``), as redis-py takes it."""

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

    async def execute(self, key: str | None, *args: Arg) -> object:
        name, *words = str(args[0]).split()
        command = self._command(name.encode(), cast(tuple[str | bytes | int, ...], (*words, *args[1:])))
        execute = cast(Callable[..., Awaitable[object]], self.client.execute_command)
        if self.cluster and key is not None:
            return await execute(command, keys=(key,))
        return await execute(command)

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
    async def execute_command(self, *args: Arg, **options: Any) -> Any: ...  # noqa: ANN401


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

    async def execute(self, key: str | None, *args: Arg) -> object:
        return await cast(_Executes, self.client).execute_command(*args)

    async def delete(self, keys: list[str]) -> int:
        client = cast(_Executes, self.client)
        if not self.cluster:
            return as_int(await client.execute_command("DEL", *keys))
        replies = await asyncio.gather(*(client.execute_command("DEL", key) for key in keys))
        return sum(as_int(reply) for reply in replies)

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
    nodes, auth = shared.cluster_nodes(uri)
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
    PREFIX = shared.PREFIX
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
        self.key_prefix = key_prefix
        url = shared.redis_url(uri, self._SCHEMES)
        self.backend = _basic_backend(_check_implementation(implementation), url, dict(options))

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return self.backend.base_exceptions

    async def _run(self, key: str | None, plan: Plan[T]) -> T:
        """One operation about ``key`` on the server (see the sync storage's)."""
        return await arun(self.backend.client, plan, functools.partial(self.backend.execute, key))

    def _key(self, key: str) -> str:
        return shared.prefixed(self.key_prefix, key)

    def _sliding_key(self, key: str) -> str:
        return shared.sliding_key(self.key_prefix, key)

    # ------------------------------------------------------------------- fixed window
    async def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        name = self._key(key)
        return await self._run(name, shared.incr(name, expiry, amount))

    async def get(self, key: str) -> int:
        name = self._key(key)
        return await self._run(name, shared.get(name))

    async def get_expiry(self, key: str) -> float:
        name = self._key(key)
        return await self._run(name, shared.get_expiry(name))

    async def clear(self, key: str) -> None:
        name = self._key(key)
        await self._run(name, shared.delete(name))

    async def check(self) -> bool:
        try:
            return await self._run(None, shared.ping())
        except Exception:  # noqa: BLE001 (limits' check: any failure is "not healthy")
            return False

    async def reset(self) -> int | None:
        """Deletes every key under the prefix (``SCAN`` and ``DEL``); returns how many."""
        await self._run(None, module_check(self.backend.client))
        deleted, batch = 0, []
        async for key in self.backend.scan(shared.scan_pattern(self.key_prefix)):
            batch.append(key.decode() if isinstance(key, bytes) else key)
            if len(batch) == 500:
                deleted += await self.backend.delete(batch)
                batch = []
        if batch:
            deleted += await self.backend.delete(batch)
        return deleted

    # ------------------------------------------------------------------- moving window
    async def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        name = self._key(key)
        return await self._run(name, shared.acquire_entry(name, limit, expiry, amount))

    async def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        name = self._key(key)
        return await self._run(name, shared.get_moving_window(name, limit, expiry))

    # --------------------------------------------------------- sliding window counter
    async def acquire_sliding_window_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        name = self._sliding_key(key)
        return await self._run(name, shared.acquire_sliding_window_entry(name, limit, expiry, amount))

    async def get_sliding_window(self, key: str, expiry: int) -> tuple[int, float, int, float]:
        name = self._sliding_key(key)
        return await self._run(name, shared.get_sliding_window(name, expiry))

    async def clear_sliding_window(self, key: str, expiry: int) -> None:
        name = self._sliding_key(key)
        await self._run(name, shared.delete(name))


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
        key_prefix: str = shared.PREFIX,
        **options: Any,  # noqa: ANN401
    ) -> None:
        Storage.__init__(self, uri, wrap_exceptions=wrap_exceptions)
        self.key_prefix = key_prefix
        self.backend = _cluster_backend(_check_implementation(implementation), uri, dict(options))
