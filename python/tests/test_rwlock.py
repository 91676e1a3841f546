"""goblin_redis's ReadWriteLock, sync and asyncio (tests/python_locks.rs runs it on every
server): every operation is one Goblin command and no script; readers share, a writer waits for
them and later readers wait behind it; a holder is promoted, demoted and renewed, and a second
reader waiting to write is a DeadlockError; the context managers; a wait longer than the socket
timeout is sliced; extends, releases and lost leases; fencing tokens; the constructor's
ValueErrors; a cancelled asyncio waiter gives up its place; and a server without Goblin is a
GoblinModuleError from every entry point.

    GOBLIN_TEST_SERVER=127.0.0.1:PORT GOBLIN_TEST_BARE=127.0.0.1:PORT pytest python/tests/test_rwlock.py
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
import redis.asyncio
import redis.asyncio.retry
from redis.backoff import NoBackoff
from redis.exceptions import LockError, LockNotOwnedError, ResponseError
from redis.retry import Retry

from goblin_redis import GoblinModuleError
from goblin_redis.asyncio.lock import ReadWriteLock as AsyncReadWriteLock
from goblin_redis.lock import DeadlockError, ReadWriteLock

SERVER = os.environ.get("GOBLIN_TEST_SERVER", "127.0.0.1:6379")
HOST, PORT = SERVER.rsplit(":", 1)
BARE = os.environ.get("GOBLIN_TEST_BARE", "")


def client(**options: Any) -> Any:
    return redis.Redis(host=HOST, port=int(PORT), **options)


@pytest.fixture
def r() -> Iterator[Any]:
    connection = client()
    connection.flushdb()
    yield connection
    connection.flushdb()
    connection.close()


def calls(connection: Any) -> dict[str, int]:
    stats = connection.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {name: n - before.get(name, 0) for name, n in after.items() if n != before.get(name, 0)}


def waiting(connection: Any) -> int:
    return int(connection.info("goblin")["goblin_waiting"])


def wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return False


def in_thread(call: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    """``call`` in a thread of its own; what it returned (or raised) lands in the list."""
    result: list[object] = []

    def run() -> None:
        try:
            result.append(call())
        except Exception as error:  # noqa: BLE001 (handed to the test)
            result.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def readers(r: Any) -> list[bytes]:
    return sorted(r.zrange("doc", 0, -1))


def test_every_operation_is_one_goblin_command_and_no_script(r: Any) -> None:
    before = calls(r)
    rw = ReadWriteLock(r, "doc", timeout=10)
    assert rw.read_lock().acquire(blocking=False)
    assert rw.held() == "read"
    assert rw.write_lock().acquire(blocking=False), "the only reader: promoted"
    assert rw.held() == "write"
    assert rw.mode == "write"
    assert rw.extend(5)
    assert rw.reacquire()
    assert rw.read_lock().acquire(blocking_timeout=1), "demoted"
    assert rw.locked()
    assert rw.owned()
    rw.release()
    assert not rw.locked()
    with rw.write_lock():
        assert r.get("doc") == rw.token
    used = delta(before, calls(r))
    assert not any(name.startswith(("eval", "fcall", "script")) for name in used), used
    used = {name: n for name, n in used.items() if name.startswith("goblin.")}
    assert used == {
        "goblin.rlock": 1,
        "goblin.wlock": 1,
        "goblin.brlock": 1,
        "goblin.bwlock": 1,
        "goblin.rwextend": 2,
        "goblin.rwunlock": 2,
        "goblin.rwheld": 3,
    }, used


def test_readers_share_a_writer_waits_and_later_readers_wait_behind_it(r: Any) -> None:
    first = ReadWriteLock(r, "doc", timeout=30)
    assert first.read_lock().acquire()
    second = ReadWriteLock(client(), "doc", timeout=30)
    assert second.read_lock().acquire(blocking=False), "readers share"
    writer = ReadWriteLock(client(), "doc", timeout=30)
    order: list[str] = []

    def taking(rw: ReadWriteLock, mode: str, name: str) -> None:
        side = rw.read_lock() if mode == "read" else rw.write_lock()
        if side.acquire(blocking_timeout=10):
            order.append(name)

    thread, _ = in_thread(lambda: taking(writer, "write", "w"))
    assert wait_until(lambda: waiting(r) == 1)
    late = ReadWriteLock(client(), "doc", timeout=30)
    assert not late.read_lock().acquire(blocking=False), "a writer waits: no reader passes it"
    late_thread, _ = in_thread(lambda: taking(late, "read", "late"))
    assert wait_until(lambda: waiting(r) == 2)
    first.release()
    assert not order
    second.release()
    thread.join(10)
    assert order == ["w"]
    assert r.get("doc") == writer.token
    writer.release()
    late_thread.join(10)
    assert order == ["w", "late"]
    assert readers(r) == [late.token]


def test_a_reader_is_promoted_once_alone_and_a_second_reader_waiting_to_write_is_a_deadlock(r: Any) -> None:
    a = ReadWriteLock(client(), "doc", timeout=30)
    b = ReadWriteLock(r, "doc", timeout=30)
    assert a.read_lock().acquire()
    assert b.read_lock().acquire()
    read_token = a.fencing_token
    assert read_token is not None
    thread, result = in_thread(lambda: a.write_lock().acquire(blocking_timeout=10))
    assert wait_until(lambda: waiting(r) == 1)
    with pytest.raises(DeadlockError, match="each would wait for the other"):
        b.write_lock().acquire(blocking_timeout=10)
    assert issubclass(DeadlockError, LockError)
    assert b.held() == "read", "b keeps its read lease"
    b.release()
    thread.join(10)
    assert result == [True]
    assert a.held() == "write"
    assert r.get("doc") == a.token
    assert a.fencing_token is not None
    assert a.fencing_token > read_token, "a new grant, a new token"


def test_a_writer_is_demoted_and_the_readers_waiting_join_it(r: Any) -> None:
    w = ReadWriteLock(r, "doc", timeout=30)
    assert w.write_lock().acquire()
    reader = ReadWriteLock(client(), "doc", timeout=30)
    thread, result = in_thread(lambda: reader.read_lock().acquire(blocking_timeout=10))
    assert wait_until(lambda: waiting(r) == 1)
    assert w.read_lock().acquire(blocking=False)
    thread.join(10)
    assert result == [True]
    assert w.token is not None
    assert reader.token is not None
    assert readers(r) == sorted([w.token, reader.token])


def test_the_context_managers_hold_and_release(r: Any) -> None:
    rw = ReadWriteLock(r, "doc", timeout=30, blocking_timeout=0.2)
    with rw.read_lock() as side:
        assert side.mode == "read"
        assert readers(r) == [rw.token]
    assert not rw.locked()
    assert rw.token is None
    with rw.write_lock():
        assert r.get("doc") == rw.token
        other = ReadWriteLock(client(), "doc", timeout=30, blocking_timeout=0.2)
        with pytest.raises(LockError, match="Unable to acquire"), other.read_lock():
            pass
    # Inside a write, a read acquire demotes; the inner exit releases the hold.
    with rw.write_lock():
        with rw.read_lock():
            assert rw.held() == "read"
        assert rw.held() is None
        with pytest.raises(LockError, match="unlocked"):
            rw.release()
        assert rw.write_lock().acquire()


def test_a_wait_longer_than_the_socket_timeout_is_sliced(r: Any) -> None:
    holder = ReadWriteLock(r, "doc", timeout=30)
    assert holder.write_lock().acquire()
    short = client(socket_timeout=0.5, retry=Retry(NoBackoff(), 0))
    before = calls(r)
    started = time.monotonic()
    assert not ReadWriteLock(short, "doc", timeout=5).read_lock().acquire(blocking_timeout=1.5)
    took = time.monotonic() - started
    assert 1.5 <= took + 0.002 < 3.0, took
    assert delta(before, calls(r)).get("goblin.brlock", 0) >= 3
    short.close()


def test_extends_keep_the_token_and_a_lost_lease_is_not_owned(r: Any) -> None:
    rw = ReadWriteLock(r, "doc", timeout=10)
    assert rw.read_lock().acquire()
    token = rw.fencing_token
    assert rw.extend(5)
    assert rw.fencing_token == token
    score = r.zscore("doc", rw.token)
    assert rw.extend(20, replace_ttl=True)
    assert r.zscore("doc", rw.token) > score
    for bad in (0, -1):
        with pytest.raises(ResponseError, match="invalid expire time"):
            rw.extend(bad)
    assert rw.held() == "read"
    r.delete("doc")
    with pytest.raises(LockNotOwnedError):
        rw.reacquire()
    assert rw.token is None
    assert rw.fencing_token is None
    with pytest.raises(LockError, match="unlocked"):
        rw.extend(1)
    short = ReadWriteLock(r, "doc", timeout=0.05)
    assert short.write_lock().acquire()
    assert wait_until(lambda: not short.locked(), 2.0)
    with pytest.raises(LockNotOwnedError):
        short.release()


@pytest.mark.parametrize("lock_class", [ReadWriteLock, AsyncReadWriteLock], ids=["sync", "asyncio"])
def test_the_constructor_checks_its_arguments(lock_class: Any) -> None:
    for timeout in (None, 0, -1, 0.0001, math.nan, math.inf, True, "30", 1e12):
        with pytest.raises(ValueError, match=r"lease|number of seconds"):
            lock_class(None, "doc", timeout)
    with pytest.raises(ValueError, match="NaN"):
        lock_class(None, "doc", blocking_timeout=math.nan)
    for name in ("a}b", ""):
        with pytest.raises(ValueError, match="hash tag"):
            lock_class(None, name)
    rw = lock_class(None, "{a}b}", 0.001, blocking=False, blocking_timeout=2)
    assert (rw.timeout, rw.blocking, rw.blocking_timeout, rw.mode) == (0.001, False, 2, None)


def test_asyncio_readers_writers_and_a_cancelled_waiter(r: Any) -> None:
    async def main() -> None:
        short = redis.asyncio.Redis(
            host=HOST, port=int(PORT), socket_timeout=0.5, retry=redis.asyncio.retry.Retry(NoBackoff(), 0)
        )
        reader = AsyncReadWriteLock(short, "doc", timeout=30)
        async with reader.read_lock():
            assert await reader.held() == "read"
            writer = AsyncReadWriteLock(short, "doc", timeout=30)
            task = asyncio.create_task(writer.write_lock().acquire(blocking_timeout=10))
            assert await asyncio.to_thread(wait_until, lambda: waiting(r) == 1)
            late = AsyncReadWriteLock(short, "doc", timeout=30)
            assert not await late.read_lock().acquire(blocking=False)
            # Promoted ahead of the waiting writer, then demoted again.
            assert await reader.write_lock().acquire(blocking=False)
            assert await reader.read_lock().acquire(blocking=False)
        assert await task
        assert r.get("doc") == writer.token
        # A waiter cancelled in line gives up its place and never holds the lock.
        for phase in range(4):
            waiter = AsyncReadWriteLock(short, "doc", timeout=30)
            task = asyncio.create_task(waiter.read_lock().acquire(blocking_timeout=10))
            assert await asyncio.to_thread(wait_until, lambda: waiting(r) == 1)
            await asyncio.sleep(phase * 0.031)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await asyncio.to_thread(wait_until, lambda: waiting(r) == 0)
            assert r.get("doc") == writer.token
        await writer.extend(1)
        await writer.release()
        assert not await writer.locked()
        await short.aclose()

    asyncio.run(main())


def bare_calls(bare: Any) -> set[str]:
    return set(calls(bare))


@pytest.mark.skipif(not BARE, reason="GOBLIN_TEST_BARE is not set")
def test_a_server_without_goblin_is_a_clear_error_from_every_entry_point() -> None:
    host, _, port = BARE.rpartition(":")

    def holding(rw: Any) -> Any:
        rw.token = b"token"
        return rw

    def entry_points(c: Any, lock_class: Any) -> list[Callable[[], Any]]:
        return [
            lambda: lock_class(c, "doc").read_lock().acquire(blocking_timeout=1),
            lambda: lock_class(c, "doc").write_lock().acquire(blocking=False),
            lambda: holding(lock_class(c, "doc")).release(),
            lambda: holding(lock_class(c, "doc")).extend(1),
            lambda: holding(lock_class(c, "doc")).reacquire(),
            lambda: holding(lock_class(c, "doc")).held(),
        ]

    bare = redis.Redis(host=host, port=int(port))
    bare.config_resetstat()
    for call in entry_points(bare, ReadWriteLock):
        with pytest.raises(GoblinModuleError, match="MODULE LOAD"):
            call()

    async def main() -> None:
        abare: Any = redis.asyncio.Redis(host=host, port=int(port))
        for call in entry_points(abare, AsyncReadWriteLock):
            with pytest.raises(GoblinModuleError, match="MODULE LOAD"):
                await call()
        await abare.aclose()

    asyncio.run(main())
    assert bare_calls(bare) <= {"module|list", "config|resetstat", "info", "hello", "client|setinfo"}, calls(bare)
    bare.close()
