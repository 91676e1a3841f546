"""goblin_redis's locks, beyond what redis-py's own lock suite asks (tests/python_locks.rs runs
both): every operation is one Goblin command and no script; a blocking acquire waits inside the
server in slices shorter than the socket timeout, so a wait longer than the socket timeout is
neither cut short nor retried into a TimeoutError; a short blocking_timeout is not "for ever";
the line is first come, first served and a non-blocking acquire never passes it; a cancelled
asyncio waiter gives up its place; and the Semaphore: its permits, leases, renewals and
releases.

    GOBLIN_TEST_SERVER=127.0.0.1:PORT pytest python/tests/test_locks.py
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import redis.asyncio
import redis.asyncio.retry
from redis.backoff import NoBackoff
from redis.exceptions import LockError, LockNotOwnedError, ResponseError
from redis.retry import Retry

import goblin_redis.asyncio.lock
from goblin_redis.lock import Lock, Semaphore

SERVER = os.environ.get("GOBLIN_TEST_SERVER", "127.0.0.1:6379")
HOST, PORT = SERVER.rsplit(":", 1)


def client(**options: Any) -> Any:
    return redis.Redis(host=HOST, port=int(PORT), **options)


def no_retries() -> Retry:
    """A client that retries nothing: a socket timeout would be a TimeoutError, not hidden."""
    return Retry(NoBackoff(), 0)


@pytest.fixture
def r() -> Iterator[Any]:
    connection = client()
    connection.flushdb()
    yield connection
    connection.flushdb()
    connection.close()


def calls(connection: Any) -> dict[str, int]:
    """INFO commandstats: calls by command (lowercase)."""
    stats = connection.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {name: n - before.get(name, 0) for name, n in after.items() if n != before.get(name, 0)}


def waiting(connection: Any) -> int:
    return int(connection.info("goblin")["goblin_waiting"])


def wait_until(condition: object, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.005)
    return False


SCRIPTS = ("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "script|load")


def test_every_operation_is_one_goblin_command(r: Any) -> None:
    before = calls(r)
    lock = r.lock("lk", timeout=10, lock_class=Lock)
    assert lock.acquire(blocking=False)
    assert lock.acquire.__self__ is lock
    assert lock.extend(5)
    assert lock.reacquire()
    lock.release()
    assert lock.acquire(blocking_timeout=1)
    lock.release()
    used = delta(before, calls(r))
    assert not any(name in used for name in SCRIPTS), used
    # Goblin's commands only (a replica's REPLCONF, the INFO that counts, are not the lock's).
    used = {name: n for name, n in used.items() if name.startswith("goblin.") or name in ("set", "del", "pexpire")}
    assert used == {
        "goblin.lock": 1,
        "goblin.extend": 2,
        "goblin.cad": 2,
        "goblin.block": 1,
    }, used
    # No script object was made for this class (redis-py's register_scripts sets them on it).
    assert not {"lua_release", "lua_extend", "lua_reacquire"} & set(Lock.__dict__)


def test_no_lease_without_a_timeout(r: Any) -> None:
    lock = Lock(r, "lk")
    assert lock.acquire()
    assert r.pttl("lk") == -1
    with pytest.raises(LockError, match="no timeout"):
        lock.extend(1)
    lock.release()
    assert r.exists("lk") == 0


def test_a_tiny_timeout_is_still_a_lease(r: Any) -> None:
    """timeout=0.0004 would be PX 0 (redis-py: an error; GOBLIN.LOCK: no lease): 1 ms."""
    lock = Lock(r, "lk", timeout=0.0004)
    assert lock.acquire(blocking=False)
    assert wait_until(lambda: r.exists("lk") == 0, 1.0)


def test_extend_by_nothing_is_refused_and_keeps_the_lock(r: Any) -> None:
    lock = Lock(r, "lk", timeout=10)
    assert lock.acquire()
    for bad in (0, -20):
        with pytest.raises(ResponseError, match="invalid expire time"):
            lock.extend(bad)
        with pytest.raises(ResponseError, match="invalid expire time"):
            lock.extend(bad, replace_ttl=True)
    assert lock.owned()
    assert 9000 < r.pttl("lk") <= 10000


def test_a_short_blocking_timeout_is_not_for_ever(r: Any) -> None:
    r.set("lk", "someone")
    for bt in (0.1, 0.0001, 0.25):
        started = time.monotonic()
        assert not Lock(r, "lk", timeout=5).acquire(blocking_timeout=bt)
        took = time.monotonic() - started
        assert bt <= took + 0.002 < bt + 1.0, (bt, took)
    started = time.monotonic()
    assert not Lock(r, "lk", timeout=5).acquire(blocking_timeout=0)
    assert not Lock(r, "lk", timeout=5).acquire(blocking=False, blocking_timeout=10)
    assert time.monotonic() - started < 0.1


def test_a_wait_longer_than_the_socket_timeout_is_sliced(r: Any) -> None:
    """socket_timeout 0.5 s, no retries: a 2 s wait is GOBLIN.BLOCKs of 0.125 s each (each
    answered on the server's next tick), not a TimeoutError."""
    holder = Lock(r, "lk", timeout=30)
    assert holder.acquire()
    short = client(socket_timeout=0.5, retry=no_retries())
    before = calls(r)
    started = time.monotonic()
    assert not Lock(short, "lk", timeout=5).acquire(blocking_timeout=2.0)
    took = time.monotonic() - started
    blocks = delta(before, calls(r)).get("goblin.block", 0)
    assert 2.0 <= took + 0.002 < 3.5, took
    assert blocks >= 4, blocks
    # And the lock released mid-wait is taken at once, by the waiter's current slice.
    waiter = Lock(short, "lk", timeout=5, thread_local=False)
    got: list[float] = []
    thread = threading.Thread(
        target=lambda: got.append(time.monotonic()) if waiter.acquire(blocking_timeout=5) else None
    )
    thread.start()
    time.sleep(0.35)
    released = time.monotonic()
    holder.release()
    thread.join(5)
    assert got
    assert got[0] - released < 0.5, got
    assert r.get("lk") == waiter.local.token
    short.close()


def test_the_line_is_first_come_first_served(r: Any) -> None:
    holder = Lock(r, "lk", timeout=30)
    assert holder.acquire()
    order: list[int] = []
    waiters = []
    for n in range(5):
        lock = Lock(client(), "lk", timeout=30, thread_local=False)

        def wait(lock: Lock = lock, n: int = n) -> None:
            assert lock.acquire(blocking_timeout=10)
            order.append(n)
            lock.release()

        thread = threading.Thread(target=wait)
        thread.start()
        waiters.append(thread)
        assert wait_until(lambda n=n: waiting(r) == n + 1)
    # Nobody passes the line: a non-blocking acquire is refused while they wait, even once the
    # lock is free for the next in line.
    assert not Lock(r, "lk", timeout=30).acquire(blocking=False)
    holder.release()
    for thread in waiters:
        thread.join(10)
    assert order == [0, 1, 2, 3, 4]
    assert r.exists("lk") == 0


def test_an_expired_holder_hands_over_at_its_deadline(r: Any) -> None:
    assert Lock(r, "lk", timeout=0.3).acquire()
    started = time.monotonic()
    waiter = Lock(client(), "lk", timeout=5)
    assert waiter.acquire(blocking_timeout=3)
    assert 0.2 < time.monotonic() - started < 1.5
    assert waiter.owned()


def test_asyncio_lock(r: Any) -> None:
    async def main() -> None:
        short = redis.asyncio.Redis(
            host=HOST, port=int(PORT), socket_timeout=0.5, retry=redis.asyncio.retry.Retry(NoBackoff(), 0)
        )
        holder = goblin_redis.asyncio.lock.Lock(short, "lk", timeout=30)
        assert await holder.acquire()
        before = calls(r)
        started = time.monotonic()
        assert not await goblin_redis.asyncio.lock.Lock(short, "lk").acquire(blocking_timeout=0.8)
        assert 0.8 <= time.monotonic() - started + 0.002 < 2.5
        assert delta(before, calls(r)).get("goblin.block", 0) >= 2
        # A waiter cancelled in line gives up its place, and never holds the lock, wherever in
        # its slice (0.125 s) the cancellation lands: redis-py's read can lose one that lands
        # as a reply arrives, and the lock must notice.
        for phase in range(8):
            waiter = goblin_redis.asyncio.lock.Lock(short, "lk", timeout=30)
            task = asyncio.create_task(waiter.acquire(blocking_timeout=10))
            assert await asyncio.to_thread(wait_until, lambda: waiting(r) == 1)
            await asyncio.sleep(phase * 0.017)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await asyncio.to_thread(wait_until, lambda: waiting(r) == 0)
            assert r.get("lk") == holder.local.token
        await holder.release()
        assert r.exists("lk") == 0
        # The hand-off, and extend / reacquire as one command each.
        assert await holder.acquire()
        second = goblin_redis.asyncio.lock.Lock(short, "lk", timeout=30)
        pending = asyncio.create_task(second.acquire(blocking_timeout=5))
        assert await asyncio.to_thread(wait_until, lambda: waiting(r) == 1)
        await holder.release()
        assert await pending
        assert await second.extend(5)
        assert 30000 < r.pttl("lk") <= 35000
        assert await second.reacquire()
        assert 29000 < r.pttl("lk") <= 30000
        r.set("lk", "other")
        with pytest.raises(LockNotOwnedError):
            await second.release()
        assert second.local.token is None
        await short.aclose()

    before = calls(r)
    asyncio.run(main())
    assert not any(name in delta(before, calls(r)) for name in SCRIPTS)


# The Semaphore.


def test_semaphore_permits(r: Any) -> None:
    one, two, three = (Semaphore(r, "sem", limit=2, lease=10) for _ in range(3))
    assert one.acquire()
    assert two.acquire(blocking=False)
    assert r.zcard("sem") == 2
    assert not three.acquire(blocking=False)
    started = time.monotonic()
    assert not three.acquire(blocking_timeout=0.2)
    assert 0.2 <= time.monotonic() - started + 0.002 < 1.2
    assert three.token is None
    with pytest.raises(LockError, match="already holds"):
        one.acquire()
    one.release()
    assert three.acquire(blocking=False)
    assert r.zscore("sem", three.token or b"") is not None
    two.release()
    three.release()
    assert r.exists("sem") == 0
    with pytest.raises(LockError, match="not held"):
        three.release()
    with pytest.raises(LockError, match="not held"):
        three.renew()


def test_semaphore_hands_a_released_permit_to_the_first_waiter(r: Any) -> None:
    holders = [Semaphore(r, "sem", limit=2, lease=30) for _ in range(2)]
    for holder in holders:
        assert holder.acquire()
    order: list[int] = []
    threads = []
    for n in range(3):
        sem = Semaphore(client(socket_timeout=0.5, retry=no_retries()), "sem", limit=2, lease=30)

        def wait(sem: Semaphore = sem, n: int = n) -> None:
            assert sem.acquire(blocking_timeout=10)
            order.append(n)
            time.sleep(0.05)
            sem.release()

        thread = threading.Thread(target=wait)
        thread.start()
        threads.append(thread)
        assert wait_until(lambda n=n: waiting(r) == n + 1)
    assert not Semaphore(r, "sem", limit=2).acquire(blocking=False)
    holders[0].release()
    for thread in threads:
        thread.join(10)
    assert order == [0, 1, 2]
    holders[1].release()
    assert r.exists("sem") == 0


def test_semaphore_leases_renewals_and_loss(r: Any) -> None:
    sem = Semaphore(r, "sem", limit=1, lease=1.0)
    assert sem.acquire()
    for _ in range(4):
        time.sleep(0.3)
        sem.renew()  # kept past its first lease
    before = calls(r)
    sem.renew()
    assert delta(before, calls(r)).get("goblin.zwindow") == 1
    time.sleep(1.3)  # not renewed: the permit ages out
    with pytest.raises(LockNotOwnedError):
        sem.renew()
    assert sem.token is None
    # A crashed holder's permit goes to a waiter when its lease runs out, not later.
    assert Semaphore(r, "sem", limit=1, lease=0.5).acquire()
    started = time.monotonic()
    waiter = Semaphore(client(), "sem", limit=1, lease=5)
    assert waiter.acquire(blocking_timeout=5)
    assert 0.4 < time.monotonic() - started < 1.5
    # A permit lost before its release: LockNotOwnedError.
    r.zrem("sem", waiter.token or b"")
    with pytest.raises(LockNotOwnedError):
        waiter.release()


def test_semaphore_context_manager(r: Any) -> None:
    with Semaphore(r, "sem", limit=1, lease=5) as sem:
        assert r.zcard("sem") == 1
        with pytest.raises(LockError, match="Unable to acquire"), Semaphore(r, "sem", 1, blocking_timeout=0.05):
            pass
        assert sem.token is not None
    assert r.exists("sem") == 0


def test_semaphore_arguments() -> None:
    with pytest.raises(ValueError, match="at least one permit"):
        Semaphore(None, "sem", limit=0)
    with pytest.raises(ValueError, match="positive"):
        Semaphore(None, "sem", limit=1, lease=0)
