"""The sync storages, on redis-py: ``goblin://`` (one server) and ``goblin+cluster://``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, cast

from limits.errors import ConfigurationError
from limits.storage import MovingWindowSupport, SlidingWindowCounterSupport, Storage
from limits.storage.base import TimestampedSlidingWindow

from .._commands import Plan, as_int, module_check, run
from . import _shared as shared

if TYPE_CHECKING:
    import redis
    import redis.cluster

T = TypeVar("T")


class _Executes(Protocol):
    """What ``reset`` uses of a redis-py client (its ``execute_command`` is untyped)."""

    def execute_command(self, *args: str | int, **options: Any) -> Any: ...  # noqa: ANN401


class _Pipeline(_Executes, Protocol):
    def execute(self) -> list[Any]: ...


class _Node(_Executes, Protocol):
    def pipeline(self, transaction: bool = ...) -> _Pipeline: ...


def _import_redis() -> Any:  # noqa: ANN401
    try:
        import redis
        import redis.cluster
    except ImportError as exc:
        raise ConfigurationError("goblin:// needs redis-py (pip install redis), as limits' redis:// does") from exc
    return redis


class GoblinStorage(Storage, MovingWindowSupport, SlidingWindowCounterSupport, TimestampedSlidingWindow):
    """limits' storage on one Redis or Valkey server with the Goblin module loaded.

    Every decision is one Goblin command: ``incr`` is ``GOBLIN.INCREX``, ``acquire_entry``
    ``GOBLIN.ZWINDOW`` and ``acquire_sliding_window_entry`` ``GOBLIN.SWINDOW``, all on the
    server's clock. Reads are ``GET``, ``PTTL``, ``GOBLIN.ZWSTATS`` and ``GOBLIN.SWSTATS``.

    :param uri: ``goblin://[:password]@host:port[/db]``, ``goblins://`` (TLS) or
     ``goblin+unix:///path/to/socket``: redis-py's URL with ``goblin`` for ``redis``.
    :param connection_pool: a redis-py connection pool to use instead of the URI's.
    :param key_prefix: the prefix of every key written (``GOBLIN``).
    :param wrap_exceptions: raise redis-py's errors as :class:`limits.errors.StorageError`.
    :param options: passed to :func:`redis.from_url` (or :class:`redis.Redis`).
    """

    STORAGE_SCHEME = ["goblin", "goblins", "goblin+unix"]
    PREFIX = shared.PREFIX
    _SCHEMES: ClassVar[dict[str, str]] = {"goblin": "redis", "goblins": "rediss", "goblin+unix": "unix"}

    storage: redis.Redis | redis.cluster.RedisCluster

    def __init__(
        self,
        uri: str,
        connection_pool: redis.ConnectionPool | None = None,
        key_prefix: str = PREFIX,
        wrap_exceptions: bool = False,
        **options: Any,  # noqa: ANN401
    ) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._setup(key_prefix)
        if connection_pool is not None:
            self.storage = self._redis.Redis(connection_pool=connection_pool, **options)
        else:
            self.storage = self._redis.from_url(shared.redis_url(uri, self._SCHEMES), **options)

    def _setup(self, key_prefix: str) -> None:
        self._redis = _import_redis()
        self.key_prefix = key_prefix

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return cast(type[Exception], self._redis.RedisError)

    def _run(self, plan: Plan[T]) -> T:
        """One operation on the server; before the first of the client's connections, ``MODULE
        LIST`` must list Goblin, recent enough (a :class:`GoblinModuleError` otherwise)."""
        return run(self.storage, plan)

    def _key(self, key: str) -> str:
        return shared.prefixed(self.key_prefix, key)

    def _sliding_key(self, key: str) -> str:
        return shared.sliding_key(self.key_prefix, key)

    # ------------------------------------------------------------------- fixed window
    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """``GOBLIN.INCREX``: adds ``amount``; arms the ``expiry`` when the result equals it."""
        return self._run(shared.incr(self._key(key), expiry, amount))

    def get(self, key: str) -> int:
        return self._run(shared.get(self._key(key)))

    def get_expiry(self, key: str) -> float:
        return self._run(shared.get_expiry(self._key(key)))

    def clear(self, key: str) -> None:
        self._run(shared.delete(self._key(key)))

    def check(self) -> bool:
        try:
            return self._run(shared.ping())
        except Exception:  # noqa: BLE001 (limits' check: any failure is "not healthy")
            return False

    def reset(self) -> int | None:
        """Deletes every key under the prefix (``SCAN`` and ``DEL``); returns how many."""
        self._run(module_check(self.storage))
        return _reset_node(cast(_Node, self.storage), shared.scan_pattern(self.key_prefix), one_by_one=False)

    # ------------------------------------------------------------------- moving window
    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        """``GOBLIN.ZWINDOW``: one entry of cost ``amount``, if the window holds room for it."""
        return self._run(shared.acquire_entry(self._key(key), limit, expiry, amount))

    def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        return self._run(shared.get_moving_window(self._key(key), limit, expiry))

    # --------------------------------------------------------- sliding window counter
    def acquire_sliding_window_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        """``GOBLIN.SWINDOW``: windows aligned to multiples of ``expiry`` on the server's clock."""
        return self._run(shared.acquire_sliding_window_entry(self._sliding_key(key), limit, expiry, amount))

    def get_sliding_window(self, key: str, expiry: int) -> tuple[int, float, int, float]:
        return self._run(shared.get_sliding_window(self._sliding_key(key), expiry))

    def clear_sliding_window(self, key: str, expiry: int) -> None:
        self._run(shared.delete(self._sliding_key(key)))


class GoblinClusterStorage(GoblinStorage):
    """:class:`GoblinStorage` on a Redis or Valkey cluster whose every node loads Goblin;
    redis-py's cluster client routes each command by its key, as the module declares it.

    :param uri: ``goblin+cluster://[:password]@host:port,host:port``
    :param options: passed to :class:`redis.cluster.RedisCluster`.
    """

    STORAGE_SCHEME = ["goblin+cluster"]
    DEFAULT_OPTIONS: ClassVar[dict[str, Any]] = {"max_connections": 1000}

    def __init__(
        self,
        uri: str,
        key_prefix: str = shared.PREFIX,
        wrap_exceptions: bool = False,
        **options: Any,  # noqa: ANN401
    ) -> None:
        Storage.__init__(self, uri, wrap_exceptions=wrap_exceptions, **options)
        self._setup(key_prefix)
        nodes, auth = shared.cluster_nodes(uri)
        cluster = self._redis.cluster
        startup = [cluster.ClusterNode(host, port) for host, port in nodes]
        self.storage = cluster.RedisCluster(**{**self.DEFAULT_OPTIONS, "startup_nodes": startup, **auth, **options})

    def reset(self) -> int | None:
        """Every primary in turn: ``SCAN`` it, ``DEL`` each key (they are in many slots)."""
        self._run(module_check(self.storage))
        cluster = cast("redis.cluster.RedisCluster", self.storage)
        pattern = shared.scan_pattern(self.key_prefix)
        deleted = 0
        for node in cast(list[Any], cluster.get_primaries()):  # type: ignore[no-untyped-call]
            deleted += _reset_node(cast(_Node, cluster.get_redis_connection(node)), pattern, one_by_one=True)
        return deleted


def _reset_node(node: _Node, pattern: str, one_by_one: bool) -> int:
    """``SCAN`` one server for ``pattern`` and delete what it finds: in one ``DEL`` per batch,
    or, on a cluster node, whose keys lie in many slots, one ``DEL`` per key in a pipeline
    (no MULTI)."""
    deleted = 0
    cursor: object = 0
    while True:
        cursor, keys = node.execute_command("SCAN", as_int(cursor), "MATCH", pattern, "COUNT", 1000)
        if keys:
            if one_by_one:
                pipe = node.pipeline(transaction=False)
                for key in keys:
                    pipe.execute_command("DEL", key)
                deleted += sum(as_int(n) for n in pipe.execute())
            else:
                deleted += as_int(node.execute_command("DEL", *keys))
        if as_int(cursor) == 0:
            return deleted
