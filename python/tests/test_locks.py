"""goblin_redis's locks, beyond what redis-py's own lock suite asks (tests/python_locks.rs runs
both): every operation is one Goblin command and no script; a blocking acquire waits inside the
server in slices shorter than the socket timeout, so a wait longer than the socket timeout is
neither cut short nor retried into a TimeoutError; a short blocking_timeout is not "for ever";
the line is first come, first served and a non-blocking acquire never passes it; a cancelled
asyncio waiter gives up its place; and the Semaphore, sync and asyncio: its permits, leases,
renewals and releases. Every constructor argument out of bounds is a ValueError before anything
is sent, and a server without Goblin is a GoblinModuleError from every entry point, the module
asked for once per client.

    GOBLIN_TEST_SERVER=127.0.0.1:PORT GOBLIN_TEST_BARE=127.0.0.1:PORT pytest python/tests/test_locks.py

(``GOBLIN_TEST_BARE``: a server without the module.)
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
import redis
import redis.asyncio
import redis.asyncio.retry
from redis.backoff import NoBackoff
from redis.exceptions import LockError, LockNotOwnedError, ResponseError
from redis.retry import Retry
from servers import BARE, SERVER, connect, connect_async, host_port

import goblin_redis.asyncio.lock
from goblin_redis import GoblinModuleError
from goblin_redis._locking import Claim, take
from goblin_redis.asyncio.lock import Lock as AsyncLock
from goblin_redis.asyncio.lock import Semaphore as AsyncSemaphore
from goblin_redis.lock import Lock, Semaphore


def no_retries() -> Retry:
    """A client that retries nothing: a socket timeout would be a TimeoutError, not hidden."""
    return Retry(NoBackoff(), 0)


@pytest.fixture
def r() -> Iterator[Any]:
    """The server with Goblin, emptied before and after: not conftest's ``server``, which resets
    its statistics, since tests/python_locks.rs reads the whole run's afterwards."""
    connection = connect()
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
    # Neither waits at all: each is one GOBLIN.LOCK, which never blocks, and no GOBLIN.BLOCK.
    before = calls(r)
    assert not Lock(r, "lk", timeout=5).acquire(blocking_timeout=0)
    assert not Lock(r, "lk", timeout=5).acquire(blocking=False, blocking_timeout=10)
    sent = {name: n for name, n in delta(before, calls(r)).items() if name.startswith("goblin.")}
    assert sent == {"goblin.lock": 2}, sent


def test_a_wait_longer_than_the_socket_timeout_is_sliced(r: Any) -> None:
    """socket_timeout 0.5 s, no retries: a 2 s wait is GOBLIN.BLOCKs of 0.125 s each (each
    answered on the server's next tick), not a TimeoutError."""
    holder = Lock(r, "lk", timeout=30)
    assert holder.acquire()
    short = connect(socket_timeout=0.5, retry=no_retries())
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
        lock = Lock(connect(), "lk", timeout=30, thread_local=False)

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
    waiter = Lock(connect(), "lk", timeout=5)
    assert waiter.acquire(blocking_timeout=3)
    assert 0.2 < time.monotonic() - started < 1.5
    assert waiter.owned()


async def cancelled_in_line(r: Any, make_waiter: Callable[[], Any]) -> AsyncIterator[Any]:
    """Eight waiters from ``make_waiter``, one at a time, each cancelled while it waits in line,
    the cancellation landing at another point of its slice (0.125 s) each time; each is yielded
    once it has raised CancelledError and the server's line is empty again."""
    for phase in range(8):
        waiter = make_waiter()
        task = asyncio.create_task(waiter.acquire(blocking_timeout=10))
        assert await asyncio.to_thread(wait_until, lambda: waiting(r) == 1)
        await asyncio.sleep(phase * 0.017)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(wait_until, lambda: waiting(r) == 0)
        yield waiter


def test_asyncio_lock(r: Any) -> None:
    async def main() -> None:
        short = connect_async(socket_timeout=0.5, retry=redis.asyncio.retry.Retry(NoBackoff(), 0))
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
        def lock_waiter() -> Any:
            return goblin_redis.asyncio.lock.Lock(short, "lk", timeout=30)

        async for _waiter in cancelled_in_line(r, lock_waiter):
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
        sem = Semaphore(connect(socket_timeout=0.5, retry=no_retries()), "sem", limit=2, lease=30)

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
    waiter = Semaphore(connect(), "sem", limit=1, lease=5)
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


# The asyncio Semaphore: the sync one's tests, awaited.


def on_async_client(test: Callable[[Any, Any], Awaitable[None]]) -> Callable[[Any], None]:
    """``async def test_...(r, connection)`` as a sync test taking the ``r`` fixture: run in its
    own event loop, on an asyncio client opened for it and closed after."""

    def run(r: Any) -> None:
        async def main() -> None:
            connection = connect_async()
            try:
                await test(r, connection)
            finally:
                await connection.aclose()

        asyncio.run(main())

    run.__name__, run.__doc__ = test.__name__, test.__doc__
    return run


@on_async_client
async def test_asyncio_semaphore_permits(r: Any, connection: Any) -> None:
    one, two, three = (AsyncSemaphore(connection, "sem", limit=2, lease=10) for _ in range(3))
    assert await one.acquire()
    assert await two.acquire(blocking=False)
    assert r.zcard("sem") == 2
    assert not await three.acquire(blocking=False)
    started = time.monotonic()
    assert not await three.acquire(blocking_timeout=0.2)
    assert 0.2 <= time.monotonic() - started + 0.002 < 1.2
    assert three.token is None
    with pytest.raises(LockError, match="already holds"):
        await one.acquire()
    await one.release()
    assert await three.acquire(blocking=False)
    assert r.zscore("sem", three.token or b"") is not None
    await two.release()
    await three.release()
    assert r.exists("sem") == 0
    with pytest.raises(LockError, match="not held"):
        await three.release()
    with pytest.raises(LockError, match="not held"):
        await three.renew()


@on_async_client
async def test_asyncio_semaphore_hands_a_released_permit_to_the_first_waiter(r: Any, connection: Any) -> None:
    holders = [AsyncSemaphore(connection, "sem", limit=2, lease=30) for _ in range(2)]
    for holder in holders:
        assert await holder.acquire()
    order: list[int] = []
    short = connect_async(socket_timeout=0.5, retry=redis.asyncio.retry.Retry(NoBackoff(), 0))

    async def wait(n: int) -> None:
        sem = AsyncSemaphore(short, "sem", limit=2, lease=30)
        assert await sem.acquire(blocking_timeout=10)
        order.append(n)
        await asyncio.sleep(0.05)
        await sem.release()

    tasks = []
    for n in range(3):
        tasks.append(asyncio.create_task(wait(n)))
        assert await asyncio.to_thread(wait_until, lambda n=n: waiting(r) == n + 1)
    assert not await AsyncSemaphore(connection, "sem", limit=2).acquire(blocking=False)
    await holders[0].release()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2]
    await holders[1].release()
    assert r.exists("sem") == 0
    await short.aclose()


@on_async_client
async def test_asyncio_semaphore_leases_renewals_and_loss(r: Any, connection: Any) -> None:
    sem = AsyncSemaphore(connection, "sem", limit=1, lease=1.0)
    assert await sem.acquire()
    for _ in range(4):
        await asyncio.sleep(0.3)
        await sem.renew()  # kept past its first lease
    before = calls(r)
    await sem.renew()
    assert delta(before, calls(r)).get("goblin.zwindow") == 1
    await asyncio.sleep(1.3)  # not renewed: the permit ages out
    with pytest.raises(LockNotOwnedError):
        await sem.renew()
    assert sem.token is None
    # A crashed holder's permit goes to a waiter when its lease runs out, not later.
    assert await AsyncSemaphore(connection, "sem", limit=1, lease=0.5).acquire()
    started = time.monotonic()
    waiter = AsyncSemaphore(connection, "sem", limit=1, lease=5)
    assert await waiter.acquire(blocking_timeout=5)
    assert 0.4 < time.monotonic() - started < 1.5
    # A permit lost before its release: LockNotOwnedError, and the member is forgotten.
    r.zrem("sem", waiter.token or b"")
    with pytest.raises(LockNotOwnedError):
        await waiter.release()
    assert waiter.token is None


@on_async_client
async def test_asyncio_semaphore_context_manager(r: Any, connection: Any) -> None:
    async with AsyncSemaphore(connection, "sem", limit=1, lease=5) as sem:
        assert r.zcard("sem") == 1
        with pytest.raises(LockError, match="Unable to acquire"):
            async with AsyncSemaphore(connection, "sem", 1, blocking_timeout=0.05):
                pass
        assert sem.token is not None
    assert r.exists("sem") == 0


def test_asyncio_semaphore_waiter_cancelled_in_line(r: Any) -> None:
    """As the asyncio lock's: a waiter cancelled anywhere in its slice (0.125 s) leaves the line
    and never holds a permit."""

    async def main() -> None:
        short = connect_async(socket_timeout=0.5, retry=redis.asyncio.retry.Retry(NoBackoff(), 0))
        holder = AsyncSemaphore(short, "sem", limit=1, lease=30)
        assert await holder.acquire()

        def semaphore_waiter() -> Any:
            return AsyncSemaphore(short, "sem", limit=1, lease=30)

        async for waiter in cancelled_in_line(r, semaphore_waiter):
            assert r.zrange("sem", 0, -1) == [holder.token]
            assert waiter.token is None
        await holder.release()
        assert r.exists("sem") == 0
        await short.aclose()

    asyncio.run(main())


# A cancellation at each moment of an acquire, placed by a relay that holds the server's replies
# back: the test decides when a reply in flight arrives.


class Link:
    """One connection through the :class:`Relay`: what its client sent, the replies held back."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.sent = bytearray()
        self.held: list[bytes] = []
        self.holding = False
        self.closed = False
        self.writer = writer

    def count(self, name: bytes) -> int:
        """How many times the client sent the command ``name`` (as RESP writes it)."""
        return self.sent.lower().count(b"$%d\r\n%s\r\n" % (len(name), name.lower()))


class Relay:
    """Between the asyncio clients and the test server, on a port of its own: ``hold(pick)``
    holds the replies of every link ``pick`` picks (asked as each reply comes) until
    ``release()``, which delivers them in order. A side that closes closes the other."""

    def __init__(self) -> None:
        self.links: list[Link] = []
        self.pick: Callable[[Link], bool] = lambda _link: False
        self.changed = asyncio.Event()
        self.port = 0
        self.server: asyncio.Server | None = None
        self.serving: list[asyncio.Future[Any]] = []

    async def __aenter__(self) -> Relay:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: object) -> None:
        self.release()
        if self.server is not None:
            self.server.close()
        for link in self.links:
            link.writer.close()
        await asyncio.gather(*self.serving)

    def client(self, **options: Any) -> Any:
        return redis.asyncio.Redis(host="127.0.0.1", port=self.port, **options)

    def change(self) -> None:
        self.changed.set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*host_port(SERVER))
        link = Link(writer)
        self.links.append(link)
        finished: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.serving.append(finished)

        async def upward() -> None:
            while data := await reader.read(65536):
                link.sent += data
                up_writer.write(data)
                self.change()

        async def downward() -> None:
            while data := await up_reader.read(65536):
                if link.holding or self.pick(link):
                    link.holding = True
                    link.held.append(data)
                else:
                    writer.write(data)
                self.change()

        directions = [asyncio.ensure_future(upward()), asyncio.ensure_future(downward())]
        try:
            await asyncio.wait(directions, return_when=asyncio.FIRST_COMPLETED)
        finally:
            link.closed = True
            link.held.clear()
            for end in (writer, up_writer):
                end.close()
            for direction in directions:
                direction.cancel()
            await asyncio.gather(*directions, return_exceptions=True)
            finished.set_result(None)
            self.change()

    def hold(self, pick: Callable[[Link], bool]) -> None:
        self.pick = pick

    def release(self) -> None:
        self.pick = lambda _link: False
        for link in self.links:
            link.holding = False
            held, link.held = link.held, []
            if not link.closed:
                for data in held:
                    link.writer.write(data)

    async def until(self, condition: Callable[[], bool], what: str) -> None:
        """Returns once ``condition()`` holds, asked again at each byte through the relay (a
        guard names what never came rather than hang)."""
        async with asyncio.timeout(20):
            while not condition():
                self.changed.clear()
                await self.changed.wait()
        assert condition(), what


class Kind:
    """An asyncio lock class under test: a holder and a waiter made alike, and how the server
    records a holder."""

    def __init__(self, name: str) -> None:
        self.name = name

    def make(self, connection: Any) -> Any:
        if self.name == "lock":
            return AsyncLock(connection, "lk", timeout=30)
        return AsyncSemaphore(connection, "sem", limit=1, lease=30)

    def sync_holder(self, r: Any) -> Any:
        if self.name == "lock":  # released from another thread than it was taken on
            return Lock(r, "lk", timeout=30, thread_local=False)
        return Semaphore(r, "sem", limit=1, lease=30)

    def holders(self, r: Any) -> list[bytes]:
        """Who holds it, on the server."""
        if self.name == "lock":
            value = r.get("lk")
            return [] if value is None else [value]
        return list(r.zrange("sem", 0, -1))

    @property
    def first(self) -> bytes:
        return b"GOBLIN.LOCK" if self.name == "lock" else b"GOBLIN.ZWINDOW"

    @property
    def wait(self) -> bytes:
        return b"GOBLIN.BLOCK" if self.name == "lock" else b"GOBLIN.BZWINDOW"


KINDS = [Kind("lock"), Kind("semaphore")]


def on_relay(test: Callable[[Any, Relay, Kind, int], Awaitable[None]]) -> Callable[[Any, Kind, int], None]:
    """``async def test_...(r, relay, kind, protocol)`` run for each asyncio lock class and
    protocol, in its own event loop, with a relay before the test server."""

    def run(r: Any, kind: Kind, protocol: int) -> None:
        async def main() -> None:
            async with Relay() as relay:
                await test(r, relay, kind, protocol)

        asyncio.run(main())

    run.__name__, run.__doc__ = test.__name__, test.__doc__
    by_kind = pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.name)
    parametrized: Callable[[Any, Kind, int], None] = pytest.mark.parametrize("protocol", [2, 3])(by_kind(run))
    return parametrized


async def cancelled(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@on_relay
async def test_cancelled_while_connecting_or_checking_the_module_sends_nothing(
    r: Any, relay: Relay, kind: Kind, protocol: int
) -> None:
    """Cancelled while its connection is set up (the first reply held back, whatever it is) or
    while its module check is under way: nothing that could grant is sent."""
    picks: list[Callable[[Link], bool]] = [lambda _link: True, lambda link: link.count(b"MODULE") > 0]
    for pick in picks:
        connection = relay.client(protocol=protocol)
        since = len(relay.links)
        relay.hold(pick)
        task = asyncio.create_task(kind.make(connection).acquire(blocking_timeout=5))

        def held_back(since: int = since) -> bool:
            return any(link.held for link in relay.links[since:])

        await relay.until(held_back, "a reply held back")
        await cancelled(task)
        relay.release()
        await connection.ping()
        await connection.ping()
        assert sum(link.count(kind.first) + link.count(kind.wait) for link in relay.links[since:]) == 0
        assert kind.holders(r) == []
        await connection.aclose()


@on_relay
async def test_cancelled_with_a_first_try_granted_in_flight_gives_it_back(
    r: Any, relay: Relay, kind: Kind, protocol: int
) -> None:
    """A non-blocking acquire cancelled while its grant's reply is on its way: given back."""
    connection = relay.client(protocol=protocol)
    await connection.ping()
    waiter = kind.make(connection)
    relay.hold(lambda link: link.count(kind.first) > 0)
    task = asyncio.create_task(waiter.acquire(blocking=False))
    await relay.until(lambda: any(link.held for link in relay.links), "the first try's reply")
    assert len(await asyncio.to_thread(kind.holders, r)) == 1  # granted: its reply held back
    await cancelled(task)
    relay.release()
    assert await asyncio.to_thread(kind.holders, r) == []
    await connection.aclose()


@on_relay
async def test_cancelled_with_a_grant_in_flight_in_line_gives_it_back(
    r: Any, relay: Relay, kind: Kind, protocol: int
) -> None:
    """A waiter in line cancelled while its grant's reply is on its way: given back."""
    connection = relay.client(protocol=protocol)
    holder = kind.sync_holder(connect())
    assert holder.acquire()
    relay.hold(lambda link: link.count(kind.wait) > 0)
    task = asyncio.create_task(kind.make(connection).acquire(blocking_timeout=10))
    assert await asyncio.to_thread(wait_until, lambda: waiting(r) == 1)
    await asyncio.to_thread(holder.release)  # the server grants the waiter; its reply is held back
    await relay.until(lambda: any(link.held for link in relay.links if link.count(kind.wait)), "the grant")
    assert len(await asyncio.to_thread(kind.holders, r)) == 1
    await cancelled(task)
    relay.release()
    assert await asyncio.to_thread(kind.holders, r) == []
    assert waiting(r) == 0
    await connection.aclose()


@on_relay
async def test_cancelled_between_slices_sends_no_other(r: Any, relay: Relay, kind: Kind, protocol: int) -> None:
    """A waiter cancelled as a slice's nil is on its way (slices of 0.125 s): no slice follows,
    it leaves the line, nothing is granted to it."""
    connection = relay.client(protocol=protocol, socket_timeout=0.5, retry=redis.asyncio.retry.Retry(NoBackoff(), 0))
    holder = kind.sync_holder(connect())
    assert holder.acquire()
    relay.hold(lambda link: link.count(kind.wait) > 0)
    task = asyncio.create_task(kind.make(connection).acquire(blocking_timeout=10))
    await relay.until(lambda: any(link.held for link in relay.links if link.count(kind.wait)), "a slice's end")
    link = next(link for link in relay.links if link.count(kind.wait) and link.held)
    assert b"".join(link.held) in (b"$-1\r\n", b"*-1\r\n", b"_\r\n")
    await cancelled(task)
    relay.release()
    await connection.ping()
    assert link.count(kind.wait) == 1
    assert await asyncio.to_thread(wait_until, lambda: waiting(r) == 0)
    holder.release()
    assert kind.holders(r) == []
    await connection.aclose()


# Arguments: a ValueError when the lock or semaphore is made, before anything is sent.


class Stub:
    """A client whose server lists ``modules`` in MODULE LIST (or refuses it: an exception) and
    answers anything else with ``reply`` (a fencing token, by default, as a grant's); it records
    what it is sent."""

    def __init__(self, modules: object = (), reply: object = 1_700_000_000_000_001) -> None:
        self.modules = modules
        self.reply = reply
        self.sent: list[tuple[Any, ...]] = []

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.sent.append(args)
        if args != ("MODULE LIST",):
            return self.reply
        if isinstance(self.modules, Exception):
            raise self.modules
        return self.modules

    def get_encoder(self) -> Any:
        return connect().get_encoder()


class AsyncStub(Stub):
    """:class:`Stub` for the asyncio classes."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        return super().execute_command(*args, **options)


LOCK_CLASSES = [Lock, AsyncLock]
LOCK_IDS = ["sync", "asyncio"]

BAD_LOCK_ARGUMENTS: list[dict[str, Any]] = [
    {"timeout": -1},
    {"timeout": -0.001},
    {"timeout": math.nan},
    {"timeout": math.inf},
    {"timeout": 1e12},
    {"timeout": True},
    {"timeout": "10"},
    {"sleep": -0.1},
    {"sleep": math.nan},
    {"sleep": math.inf},
    {"sleep": True},
    {"sleep": None},
    {"blocking_timeout": math.nan},
    {"blocking_timeout": False},
    {"blocking_timeout": "5"},
]

#: What redis-py's Lock takes, and its tests pass: taken as it is.
GOOD_LOCK_ARGUMENTS: list[dict[str, Any]] = [
    {"timeout": None},
    {"timeout": 0},
    {"timeout": 0.0004},
    {"timeout": 9.5},
    {"timeout": 10},
    {"sleep": 0},
    {"sleep": 0.05},
    {"sleep": 60},
    {"blocking_timeout": None},
    {"blocking_timeout": -1},
    {"blocking_timeout": 0},
    {"blocking_timeout": 0.4},
    {"blocking_timeout": math.inf},
    {"blocking": False, "thread_local": False, "raise_on_release_error": False},
]


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [",".join(f"{name}={value!r}" for name, value in case.items()) for case in cases]


@pytest.mark.parametrize("lock_class", LOCK_CLASSES, ids=LOCK_IDS)
@pytest.mark.parametrize("arguments", BAD_LOCK_ARGUMENTS, ids=_ids(BAD_LOCK_ARGUMENTS))
def test_a_lock_refuses_bad_arguments_when_made(lock_class: Any, arguments: dict[str, Any]) -> None:
    (what,) = arguments
    stub = Stub()
    with pytest.raises(ValueError, match=what):
        lock_class(stub, "lk", **arguments)
    with pytest.raises(ValueError, match=what):
        connect().lock("lk", lock_class=lock_class, **arguments)
    assert stub.sent == []


@pytest.mark.parametrize("lock_class", LOCK_CLASSES, ids=LOCK_IDS)
@pytest.mark.parametrize("arguments", GOOD_LOCK_ARGUMENTS, ids=_ids(GOOD_LOCK_ARGUMENTS))
def test_a_lock_takes_what_redis_pys_takes(lock_class: Any, arguments: dict[str, Any]) -> None:
    lock = lock_class(Stub(), "lk", **arguments)
    for name, value in arguments.items():
        assert getattr(lock, name) is value


def test_a_bad_blocking_timeout_at_acquire_sends_nothing() -> None:
    stub: Any = Stub()
    async_stub: Any = AsyncStub()
    bads: list[Any] = [math.nan, True, "1"]
    for bad in bads:
        with pytest.raises(ValueError, match="blocking_timeout"):
            Lock(stub, "lk").acquire(blocking_timeout=bad)
        with pytest.raises(ValueError, match="blocking_timeout"):
            Semaphore(stub, "sem", 1).acquire(blocking_timeout=bad)
        with pytest.raises(ValueError, match="blocking_timeout"):
            asyncio.run(AsyncLock(async_stub, "lk").acquire(blocking_timeout=bad))
        with pytest.raises(ValueError, match="blocking_timeout"):
            asyncio.run(AsyncSemaphore(async_stub, "sem", 1).acquire(blocking_timeout=bad))
    assert stub.sent == async_stub.sent == []


def test_infinity_is_for_ever(r: Any) -> None:
    assert Lock(r, "lk", blocking_timeout=math.inf).acquire()
    assert Semaphore(r, "sem", 1, blocking_timeout=math.inf).acquire()
    lock = Lock(connect(), "lk", timeout=5)
    started = time.monotonic()
    assert not lock.acquire(blocking=False, blocking_timeout=math.inf)
    assert time.monotonic() - started < 0.5


SEMAPHORE_CLASSES = [Semaphore, AsyncSemaphore]

BAD_SEMAPHORE_ARGUMENTS: list[dict[str, Any]] = [
    {"limit": 2.7},
    {"limit": 2.0},
    {"limit": True},
    {"limit": 0},
    {"limit": -1},
    {"limit": 2**63},
    {"limit": "3"},
    {"limit": None},
    {"lease": 0},
    {"lease": -1},
    {"lease": 0.0005},
    {"lease": math.nan},
    {"lease": math.inf},
    {"lease": 1e12},
    {"lease": True},
    {"lease": "30"},
    {"blocking_timeout": math.nan},
    {"blocking_timeout": True},
]


@pytest.mark.parametrize("semaphore_class", SEMAPHORE_CLASSES, ids=LOCK_IDS)
@pytest.mark.parametrize("arguments", BAD_SEMAPHORE_ARGUMENTS, ids=_ids(BAD_SEMAPHORE_ARGUMENTS))
def test_a_semaphore_refuses_bad_arguments_when_made(semaphore_class: Any, arguments: dict[str, Any]) -> None:
    (what,) = arguments
    with pytest.raises(ValueError, match=what):
        semaphore_class(None, "sem", **{"limit": 2, **arguments})


@pytest.mark.parametrize("semaphore_class", SEMAPHORE_CLASSES, ids=LOCK_IDS)
def test_a_semaphore_takes_whole_permits_and_leases_from_a_millisecond(semaphore_class: Any) -> None:
    sem = semaphore_class(None, "sem", 2**63 - 1, 0.001, blocking=False, blocking_timeout=-1)
    assert (sem.limit, sem.lease, sem.blocking, sem.blocking_timeout) == (2**63 - 1, 0.001, False, -1)
    assert semaphore_class(None, "sem", 1, 30).lease == 30.0


# A server without Goblin: GoblinModuleError from every entry point, MODULE LIST once per client.


def assert_only_module_lists_reached(bare: Any) -> None:
    """Nothing but MODULE LIST reached the server: no Goblin command, and no error reply."""
    assert set(calls(bare)) <= {"module|list", "config|resetstat", "info", "hello"}, calls(bare)
    assert bare.info("errorstats") == {}


def entry_points(client: Any, lock: Any, semaphore: Any, enter: Callable[[Any], Any]) -> list[tuple[str, Any]]:
    """Every method of ``lock`` and ``semaphore`` (the sync classes or the asyncio ones) that
    sends a Goblin command, each as a call to make on ``client``; ``enter`` uses a context manager."""

    def held(lock: Any) -> Any:
        lock.local.token = b"token"
        return lock

    def holding(sem: Any) -> Any:
        sem.token = b"member"
        return sem

    return [
        ("Lock.acquire", lambda: lock(client, "lk", timeout=5).acquire(blocking_timeout=1)),
        ("Lock.acquire, not blocking", lambda: lock(client, "lk").acquire(blocking=False)),
        ("Lock.do_acquire", lambda: lock(client, "lk").do_acquire(b"token")),
        ("Lock.release", lambda: held(lock(client, "lk")).release()),
        ("Lock.extend", lambda: held(lock(client, "lk", timeout=5)).extend(1)),
        ("Lock.reacquire", lambda: held(lock(client, "lk", timeout=5)).reacquire()),
        ("with Lock", lambda: enter(lock(client, "lk", blocking_timeout=1))),
        ("Semaphore.acquire", lambda: semaphore(client, "sem", 2).acquire(blocking_timeout=1)),
        ("Semaphore.acquire, not blocking", lambda: semaphore(client, "sem", 2).acquire(blocking=False)),
        ("Semaphore.renew", lambda: holding(semaphore(client, "sem", 2)).renew()),
        ("Semaphore.release", lambda: holding(semaphore(client, "sem", 2)).release()),
        ("with Semaphore", lambda: enter(semaphore(client, "sem", 2))),
    ]


def test_a_server_without_goblin_is_a_clear_error_from_every_entry_point(bare: Any) -> None:

    def enter(manager: Any) -> None:
        with manager:
            pass

    for what, call in entry_points(bare, Lock, Semaphore, enter):
        with pytest.raises(GoblinModuleError, match="MODULE LOAD") as raised:
            call()
        assert "loadmodule" in str(raised.value), what
    assert_only_module_lists_reached(bare)


def test_a_server_without_goblin_is_a_clear_error_from_every_asyncio_entry_point(bare: Any) -> None:
    async def enter(manager: Any) -> None:
        async with manager:
            pass

    async def main() -> None:
        client = connect_async(BARE)
        await client.ping()  # its connection made (CLIENT SETINFO and the like) before the count starts
        bare.config_resetstat()
        for what, call in entry_points(client, AsyncLock, AsyncSemaphore, enter):
            with pytest.raises(GoblinModuleError, match="MODULE LOAD") as raised:
                await call()
            assert "loadmodule" in str(raised.value), what
        await client.aclose()

    asyncio.run(main())
    assert_only_module_lists_reached(bare)


def test_the_module_is_asked_for_once_per_client(r: Any) -> None:
    """Once per client (by its connection pool) in RESP2 and RESP3, decoded or not, sync and
    asyncio; not once per call."""

    def module_lists() -> int:
        return calls(r).get("module|list", 0)

    for protocol in (2, 3):
        for decode in (False, True):
            before = module_lists()
            connection = connect(protocol=protocol, decode_responses=decode)
            for _ in range(3):
                lock = Lock(connection, "lk", timeout=5)
                assert lock.acquire(blocking=False)
                assert lock.extend(1)
                lock.release()
                sem = Semaphore(connection, "sem", 1)
                assert sem.acquire()
                sem.renew()
                sem.release()
            assert module_lists() - before == 1, (protocol, decode)
            connection.close()
    # Clients made on one connection pool share its check.
    host, port = host_port(SERVER)
    pool = redis.ConnectionPool(host=host, port=port)
    before = module_lists()
    for _ in range(3):
        assert Lock(redis.Redis(connection_pool=pool), "lk").acquire(blocking=False)
        r.delete("lk")
    assert module_lists() - before == 1
    pool.disconnect()

    async def main() -> None:
        connection = connect_async(protocol=3, decode_responses=True)
        for _ in range(3):
            lock = AsyncLock(connection, "lk")
            assert await lock.acquire(blocking_timeout=1)
            await lock.release()
            sem = AsyncSemaphore(connection, "sem", 1)
            assert await sem.acquire(blocking=False)
            await sem.release()
        await connection.aclose()

    before = module_lists()
    asyncio.run(main())
    assert module_lists() - before == 1


def test_a_module_too_old_is_a_clear_error_and_asked_again() -> None:
    needed = goblin_redis.__module_version__
    older = needed - 1
    shown = f"{older // 10000}.{older // 100 % 100}.{older % 100}".replace(".", r"\.")
    old = Stub([{"name": "goblin", "ver": older}])
    with pytest.raises(GoblinModuleError, match=rf"version {older} \({shown}\); goblin_redis needs version {needed}"):
        Lock(old, "lk").acquire(blocking=False)
    old_async = AsyncStub(old.modules)
    with pytest.raises(GoblinModuleError, match=f"version {older}"):
        asyncio.run(AsyncSemaphore(old_async, "sem", 1).acquire())
    # No Goblin command was sent; a failed check is not kept (a module loaded later is found).
    assert old_async.sent == [("MODULE LIST",)]
    with pytest.raises(GoblinModuleError, match=f"version {older}"):
        Semaphore(old, "sem", 1).acquire()
    assert old.sent == [("MODULE LIST",), ("MODULE LIST",)]
    old.modules = [{b"name": b"goblin", b"ver": needed}]
    assert Lock(old, "lk").acquire(blocking=False)
    assert Lock(old, "lk").acquire(blocking=False)
    assert old.sent[2:] == [("MODULE LIST",), ("GOBLIN.LOCK", "lk", old.sent[3][2], 0, "FENCE"), old.sent[4]]


def test_a_server_that_refuses_module_list_is_taken_at_its_word(r: Any) -> None:
    r.acl_setuser("app", enabled=True, passwords=["+app-secret"], keys=["*"], commands=["+@all", "-module"])
    try:
        app = connect(username="app", password="app-secret")
        lock = Lock(app, "lk", timeout=5)
        assert lock.acquire(blocking=False)
        lock.release()
        sem = Semaphore(app, "sem", 1)
        assert sem.acquire()
        sem.release()
        app.close()
    finally:
        r.acl_deluser("app")


def test_a_server_without_goblin_behind_such_an_acl_is_a_clear_error_too(bare: Any) -> None:
    """MODULE LIST refused, the Goblin command itself is the server's ``unknown command``,
    explained: a GoblinModuleError that names it."""
    bare.acl_setuser("app", enabled=True, passwords=["+app-secret"], keys=["*"], commands=["+@all", "-module"])
    try:
        app = connect(BARE, username="app", password="app-secret")
        with pytest.raises(GoblinModuleError, match=r"no GOBLIN\.LOCK: load the Goblin module") as raised:
            Lock(app, "lk").acquire(blocking=False)
        assert isinstance(raised.value.__cause__, redis.ResponseError)
        with pytest.raises(GoblinModuleError, match=r"no GOBLIN\.BZWINDOW"):
            Semaphore(app, "sem", 1).acquire()
        app.close()
    finally:
        bare.acl_deluser("app")


# The wait itself, planned with no I/O (goblin_redis._locking.take): what it sends, reply by reply.


def claim() -> Claim:
    def waiting(wait: float) -> Any:
        return ("WAIT", wait)

    return Claim(once=("ONCE",), waiting=waiting, give_back=("GIVE BACK",))


def test_the_plan_of_an_acquire_that_does_not_wait() -> None:
    for blocking, blocking_timeout in [(False, None), (False, 10), (True, 0), (True, -1)]:
        for refused in [None, 0]:  # GOBLIN.LOCK's nil, GOBLIN.ZWINDOW's 0
            plan = take(claim(), blocking, blocking_timeout, 4.0)
            assert next(plan) == ("ONCE",)
            with pytest.raises(StopIteration) as done:
                plan.send(refused)
            assert done.value.value is None
    plan = take(claim(), False, None, 4.0)
    assert next(plan) == ("ONCE",)
    with pytest.raises(StopIteration) as done:
        plan.send(b"1700000000000000")  # a fencing token, as a RESP2 client may decode it
    assert done.value.value == 1_700_000_000_000_000


def test_the_plan_of_a_wait_in_slices() -> None:
    plan = take(claim(), True, None, 4.0)  # for ever: slices of 4 s, the same command again and again
    assert [next(plan), plan.send(None), plan.send(None)] == [("WAIT", 4.0)] * 3
    with pytest.raises(StopIteration) as done:
        plan.send(42)
    assert done.value.value == 42
    # A blocking_timeout shorter than a slice: one slice of what is left, then no more.
    plan = take(claim(), True, 0.05, 4.0)
    command: Any = next(plan)
    assert command[0] == "WAIT"
    assert 0.04 < command[1] <= 0.05
    time.sleep(0.06)
    with pytest.raises(StopIteration) as done:
        plan.send(None)
    assert done.value.value is None


def test_a_cancelled_waiter_gives_back_what_it_was_granted() -> None:
    plan = take(claim(), True, None, 4.0, cancelled=lambda: True)
    assert next(plan) == ("WAIT", 4.0)
    assert plan.send(1) == ("GIVE BACK",)  # granted as the cancellation landed
    with pytest.raises(asyncio.CancelledError):
        plan.send(1)
    plan = take(claim(), True, None, 4.0, cancelled=lambda: True)
    next(plan)
    with pytest.raises(asyncio.CancelledError):
        plan.send(None)  # not granted: nothing to give back


# Fencing tokens: each grant's, larger than every earlier grant's of the same lock or semaphore;
# kept by extends and renewals; gone once released.


def fencing(holder: Any) -> int | None:
    """A holder's ``fencing_token``, read afresh (not narrowed by an earlier assert)."""
    token: int | None = holder.fencing_token
    return token


def fence_keys(connection: Any) -> list[bytes]:
    """The keys the server keeps fencing tokens in (a NUL, then ``goblin:fence``)."""
    return sorted(key for key in connection.keys("*") if b"\0goblin:fence\0" in key)


def test_a_lock_carries_a_fencing_token_that_only_grows(r: Any) -> None:
    first = Lock(r, "lk", timeout=10)
    assert fencing(first) is None
    assert first.acquire(blocking=False)
    token = first.fencing_token
    assert isinstance(token, int)
    assert token > 0
    assert first.extend(5)
    assert first.fencing_token == token
    assert first.reacquire()
    assert first.fencing_token == token
    assert fence_keys(r) == [b"{lk}\0goblin:fence\0lk"]
    first.release()
    assert fencing(first) is None
    second = Lock(r, "lk", timeout=10)
    assert second.acquire(blocking=False)
    assert (second.fencing_token or 0) > token
    # A waiter in line gets a larger one still, the moment the lock is handed over.
    third = Lock(r, "lk", timeout=10, thread_local=False)
    taken: list[int | None] = []
    waiter = threading.Thread(
        target=lambda: taken.append(third.fencing_token if third.acquire(blocking_timeout=5) else None)
    )
    waiter.start()
    assert wait_until(lambda: waiting(r) == 1)
    held = second.fencing_token or 0
    second.release()
    waiter.join()
    assert taken[0] is not None
    assert taken[0] > held
    third.release()
    # A lost lock keeps no token: an extend refused forgets nothing it did not have.
    assert fencing(third) is None


def test_a_lock_token_belongs_to_the_thread_that_holds_it(r: Any) -> None:
    lock = Lock(r, "lk", timeout=10, thread_local=True)
    assert lock.acquire(blocking=False)
    seen: list[int | None] = []
    other = threading.Thread(target=lambda: seen.append(lock.fencing_token))
    other.start()
    other.join()
    assert seen == [None]
    assert lock.fencing_token is not None
    lock.release()


def test_a_lock_extend_refused_keeps_the_token_it_had(r: Any) -> None:
    lock = Lock(r, "lk", timeout=10)
    assert lock.acquire(blocking=False)
    token = lock.fencing_token
    r.set("lk", "someone else")
    with pytest.raises(LockNotOwnedError):
        lock.extend(5)
    # The lock is lost, but only a release says it is given up: redis-py keeps its token too.
    assert lock.fencing_token == token
    with pytest.raises(LockNotOwnedError):
        lock.release()
    assert fencing(lock) is None


@pytest.mark.parametrize("lock_class", LOCK_CLASSES, ids=LOCK_IDS)
@pytest.mark.parametrize("name", ["a}b", "", b"x}", "{}}", "{}x"])
def test_a_name_with_no_room_for_a_token_is_refused_when_made(lock_class: Any, name: Any) -> None:
    stub = Stub()
    with pytest.raises(ValueError, match="hash tag"):
        lock_class(stub, name)
    with pytest.raises(ValueError, match="hash tag"):
        Semaphore(stub, name, 1)
    assert stub.sent == []
    for fine in ["{a}b}", "a{b", b"lock:1", "{"]:
        lock_class(stub, fine)


@on_async_client
async def test_asyncio_lock_fencing_token(r: Any, connection: Any) -> None:
    lock = AsyncLock(connection, "lk", timeout=10)
    assert await lock.acquire(blocking=False)
    token = lock.fencing_token
    assert token is not None
    assert await lock.extend(1)
    assert lock.fencing_token == token
    assert await lock.reacquire()
    assert lock.fencing_token == token
    await lock.release()
    assert fencing(lock) is None
    assert await lock.acquire(blocking_timeout=1)
    assert (lock.fencing_token or 0) > token
    await lock.release()


def test_semaphore_fencing_tokens(r: Any) -> None:
    one, two = Semaphore(r, "sem", limit=2, lease=10), Semaphore(r, "sem", limit=2, lease=10)
    assert one.acquire(blocking=False)
    assert two.acquire(blocking=False)
    assert one.fencing_token is not None
    assert two.fencing_token is not None
    assert two.fencing_token > one.fencing_token
    token = one.fencing_token
    one.renew()
    assert one.fencing_token == token
    one.release()
    assert fencing(one) is None
    assert one.acquire()
    assert (one.fencing_token or 0) > (two.fencing_token or 0)
    # A permit lost to its lease takes its token with it.
    lost = two.token or b""
    r.zrem("sem", lost)
    with pytest.raises(LockNotOwnedError):
        two.renew()
    assert fencing(two) is None
    one.release()
    # The key's latest token stays until its lease ends (a grant after mints above it); the
    # released holder's own goes with its release, the lost one's at the end of its lease.
    assert fence_keys(r) == sorted([b"{sem}\0goblin:fence\0sem", b"{sem}\0goblin:fence\0sem\0" + lost])
    assert all(0 < r.pttl(key) <= 10_000 for key in fence_keys(r))


@on_async_client
async def test_asyncio_semaphore_fencing_tokens(r: Any, connection: Any) -> None:
    one, two = (
        AsyncSemaphore(connection, "sem", limit=1, lease=10),
        AsyncSemaphore(connection, "sem", limit=1, lease=10),
    )
    assert await one.acquire()
    token = one.fencing_token or 0
    await one.renew()
    assert one.fencing_token == token
    waiter = asyncio.ensure_future(two.acquire(blocking_timeout=5))
    await asyncio.sleep(0.05)
    await one.release()
    assert fencing(one) is None
    assert await waiter
    assert (two.fencing_token or 0) > token
    await two.release()
    assert fencing(two) is None
