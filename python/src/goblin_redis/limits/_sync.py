"""The sync storages, on redis-py: ``goblin://`` (one server) and ``goblin+cluster://``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

from limits.errors import ConfigurationError
from limits.storage import MovingWindowSupport, SlidingWindowCounterSupport, Storage
from limits.storage.base import TimestampedSlidingWindow

from . import _wire as wire

if TYPE_CHECKING:
    import redis
    import redis.cluster


class _Executes(Protocol):
    """What the storages use of a redis-py client (its ``execute_command`` is untyped)."""

    def execute_command(self, *args: wire.Arg, **options: Any) -> Any: ...  # noqa: ANN401


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
    PREFIX = wire.PREFIX
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
            self.storage = self._redis.from_url(wire.redis_url(uri, self._SCHEMES), **options)

    def _setup(self, key_prefix: str) -> None:
        self._redis = _import_redis()
        self.key_prefix = key_prefix
        self._module_checked = False

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return cast(type[Exception], self._redis.RedisError)

    # ------------------------------------------------------------------------- the wire
    def _execute(self, *args: wire.Arg) -> object:
        return cast(_Executes, self.storage).execute_command(*args)

    def _goblin(self, *args: wire.Arg) -> object:
        """A Goblin command: a server that lacks it is a :class:`GoblinModuleError`."""
        self._ensure_module()
        try:
            return self._execute(*args)
        except self._redis.RedisError as exc:
            translated = wire.module_error(str(args[0]), exc)
            if translated is not None:
                raise translated from exc
            raise

    def _ensure_module(self) -> None:
        """Once per storage, before its first call: ``MODULE LIST`` must list Goblin, recent
        enough. A server that refuses ``MODULE LIST`` (an ACL, a proxy) is taken at its word
        until a Goblin command fails."""
        if self._module_checked:
            return
        try:
            # One name, as redis-py's cluster client looks up where to send it.
            reply = self._execute("MODULE LIST")
        except self._redis.ResponseError:
            self._module_checked = True
            return
        wire.check_module_list(reply)
        self._module_checked = True

    def _key(self, key: str) -> str:
        return wire.prefixed(self.key_prefix, wire.check_key(key))

    # ------------------------------------------------------------------- fixed window
    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """``GOBLIN.INCREX``: adds ``amount``; arms the ``expiry`` when the result equals it."""
        return wire.as_int(self._goblin(*wire.incr(self._key(key), expiry, amount)))

    def get(self, key: str) -> int:
        self._ensure_module()
        value = self._execute("GET", self._key(key))
        return wire.as_int(value) if value is not None else 0

    def get_expiry(self, key: str) -> float:
        self._ensure_module()
        return wire.expiry_at(self._execute("PTTL", self._key(key)))

    def clear(self, key: str) -> None:
        self._ensure_module()
        self._execute("DEL", self._key(key))

    def check(self) -> bool:
        try:
            self._ensure_module()
            return bool(self._execute("PING"))
        except Exception:  # noqa: BLE001 (limits' check: any failure is "not healthy")
            return False

    def reset(self) -> int | None:
        """Deletes every key under the prefix (``SCAN`` and ``DEL``); returns how many."""
        self._ensure_module()
        return _reset_node(cast(_Node, self.storage), wire.scan_pattern(self.key_prefix), one_by_one=False)

    # ------------------------------------------------------------------- moving window
    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        """``GOBLIN.ZWINDOW``: one entry of cost ``amount``, if the window holds room for it."""
        limit, expiry, amount = wire.check_decision(limit, expiry, amount)
        name = self._key(key)
        if amount > limit:
            return False
        return wire.admitted(self._goblin(*wire.acquire_entry(name, limit, expiry, amount)))

    def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        limit, expiry, _ = wire.check_decision(limit, expiry, 1)
        reply = self._goblin(*wire.moving_window(self._key(key), expiry))
        return wire.moving_window_reply(reply, limit)

    # --------------------------------------------------------- sliding window counter
    def acquire_sliding_window_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        """``GOBLIN.SWINDOW``: windows aligned to multiples of ``expiry`` on the server's clock."""
        limit, expiry, amount = wire.check_decision(limit, expiry, amount)
        name = wire.sliding_key(self.key_prefix, wire.check_key(key))
        if amount > limit:
            return False
        return wire.admitted(self._goblin(*wire.acquire_sliding(name, limit, expiry, amount)))

    def get_sliding_window(self, key: str, expiry: int) -> tuple[int, float, int, float]:
        expiry = wire.check_whole("expiry", expiry, 1)
        name = wire.sliding_key(self.key_prefix, wire.check_key(key))
        return wire.sliding_window_reply(self._goblin(*wire.sliding_window(name, expiry)))

    def clear_sliding_window(self, key: str, expiry: int) -> None:
        self._ensure_module()
        self._execute("DEL", wire.sliding_key(self.key_prefix, wire.check_key(key)))


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
        key_prefix: str = wire.PREFIX,
        wrap_exceptions: bool = False,
        **options: Any,  # noqa: ANN401
    ) -> None:
        Storage.__init__(self, uri, wrap_exceptions=wrap_exceptions, **options)
        self._setup(key_prefix)
        nodes, auth = wire.cluster_nodes(uri)
        cluster = self._redis.cluster
        startup = [cluster.ClusterNode(host, port) for host, port in nodes]
        self.storage = cluster.RedisCluster(**{**self.DEFAULT_OPTIONS, "startup_nodes": startup, **auth, **options})

    def reset(self) -> int | None:
        """Every primary in turn: ``SCAN`` it, ``DEL`` each key (they are in many slots)."""
        self._ensure_module()
        cluster = cast("redis.cluster.RedisCluster", self.storage)
        pattern = wire.scan_pattern(self.key_prefix)
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
        cursor, keys = node.execute_command("SCAN", wire.as_int(cursor), "MATCH", pattern, "COUNT", 1000)
        if keys:
            if one_by_one:
                pipe = node.pipeline(transaction=False)
                for key in keys:
                    pipe.execute_command("DEL", key)
                deleted += sum(wire.as_int(n) for n in pipe.execute())
            else:
                deleted += wire.as_int(node.execute_command("DEL", *keys))
        if wire.as_int(cursor) == 0:
            return deleted
