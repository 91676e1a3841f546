"""Clients of a Valkey cluster whose slots move under them (``CLUSTER MIGRATESLOTS``), for
tests/slot_migration.rs: every writing Goblin command through redis-py's ``RedisCluster``, in a
loop, each reply checked against what the calls before it make the next one (a counter one more,
a window one fuller, a throttle one token lower, a fencing token larger), so that an increment
lost or applied twice across a migration is seen at the call it happens; and, parked across the
migrations, ``goblin_redis.lock``'s ``Lock`` and ``Semaphore``: a holder and a waiter on each.

It prints ``ready`` once the holders hold and the waiters have sent their waits, then runs until
the file ``GOBLIN_STOP`` exists; then it checks the holders (still held, their expiry unmoved,
refused to a contender), releases them, checks that each waiter is granted then and not before,
with a larger fencing token, and prints what it found, a line each: ``rounds N``, ``model KEY
COUNT`` for each key it counted, ``failure TEXT`` for each check that failed, and ``done``.

Environment: ``GOBLIN_TEST_CLUSTER`` (``host:port,...``), ``GOBLIN_TAG`` (the hash tag of every
key), ``GOBLIN_STOP``.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, cast

from redis.cluster import ClusterNode, RedisCluster

from goblin_redis.lock import Lock, Semaphore

TAG = os.environ["GOBLIN_TAG"]
STOP = os.environ["GOBLIN_STOP"]
#: redis-py's cluster classes are untyped: every call into them goes through ``Any``.
NODES = [
    cast(Any, ClusterNode)(host, int(port))
    for host, port in (a.split(":") for a in os.environ["GOBLIN_TEST_CLUSTER"].split(","))
]

failures: list[str] = []


def key(name: str) -> str:
    return f"{{{TAG}}}:{name}"


def fail(what: str) -> None:
    failures.append(what)


def call(r: Any, *args: Any) -> Any:
    return r.execute_command(*args)


class Loop:
    """One round of every writing command, each reply checked against the rounds before."""

    def __init__(self, r: Any) -> None:
        self.r = r
        self.rounds = 0
        self.incr = 0
        self.standin = 0
        self.fwindow = 0
        self.mfwindow = 0
        self.zwindow = 0
        self.swindow = 0
        self.gcra: int | None = None
        self.mgcra: int | None = None
        self.lock_token = 0
        self.bzwindow_token = 0

    def round(self) -> None:
        r, i = self.r, self.rounds
        self.rounds += 1
        value = int(call(r, "GOBLIN.INCREX", key("incr"), 100000))
        self.expect("GOBLIN.INCREX", value, self.incr + 1)
        self.incr = value
        value = int(call(r, "INCREX", key("standin"), "BYINT", 1, "EX", 100000)[0])
        self.expect("INCREX", value, self.standin + 1)
        self.standin = value
        count = int(call(r, "GOBLIN.FWINDOW", key("fwindow"), 10**9)[0])
        self.expect("GOBLIN.FWINDOW", count, self.fwindow + 1)
        self.fwindow = count
        reply = call(r, "GOBLIN.MFWINDOW", 2, key("mf:a"), 10**9, 10**9, key("mf:b"), 10**9, 10**9)
        count = int(reply[2][0])
        self.expect(
            "GOBLIN.MFWINDOW", (int(reply[0]), count, int(reply[3][0])), (0, self.mfwindow + 1, self.mfwindow + 1)
        )
        self.mfwindow = count
        self.expect("GOBLIN.ZWINDOW", int(call(r, "GOBLIN.ZWINDOW", key("zwindow"), "*", 10**6, 10**9, f"m{i}")), 1)
        self.zwindow += 1
        reply = call(r, "GOBLIN.SWINDOW", key("swindow"), 10**6, 10**9)
        current = int(reply[3])
        # A window of a million seconds: its counter only grows, unless the window turns over.
        if not (
            int(reply[0]) == 1 and (current == self.swindow + 1 or (current == 1 and int(reply[1]) == self.swindow))
        ):
            fail(f"GOBLIN.SWINDOW after {self.swindow}: {reply!r}")
        self.swindow = current
        # One token an emission interval of a thousand seconds: each allowed call takes one, and
        # no time the test takes gives one back.
        remaining = int(call(r, "GOBLIN.GCRA", key("gcra"), 10**6, 1, 1000)[2])
        if self.gcra is not None:
            self.expect("GOBLIN.GCRA", remaining, self.gcra - 1)
        self.gcra = remaining
        reply = call(r, "GOBLIN.MGCRA", 2, key("mg:a"), 10**6, 1, 1000, key("mg:b"), 10**6, 1, 1000)
        remaining = int(reply[2][2])
        if self.mgcra is not None:
            self.expect(
                "GOBLIN.MGCRA", (int(reply[0]), remaining, int(reply[3][2])), (0, self.mgcra - 1, self.mgcra - 1)
            )
        self.mgcra = remaining
        token = f"t{i}"
        fenced = int(call(r, "GOBLIN.LOCK", key("lock"), token, 60000, "FENCE"))
        if fenced <= self.lock_token:
            fail(f"GOBLIN.LOCK: token {fenced} after {self.lock_token}")
        self.lock_token = fenced
        self.expect("GOBLIN.EXTEND", int(call(r, "GOBLIN.EXTEND", key("lock"), token, 60000, "FENCE")), fenced)
        self.expect("GOBLIN.CAD", int(call(r, "GOBLIN.CAD", key("lock"), token)), 1)
        self.expect("GOBLIN.BLOCK", call(r, "GOBLIN.BLOCK", key("block"), token, 60000, 5), b"OK")
        self.expect("GOBLIN.CAD", int(call(r, "GOBLIN.CAD", key("block"), token)), 1)
        fenced = int(call(r, "GOBLIN.BZWINDOW", key("bzwindow"), 60, 1, token, 5, "FENCE"))
        if fenced <= self.bzwindow_token:
            fail(f"GOBLIN.BZWINDOW: token {fenced} after {self.bzwindow_token}")
        self.bzwindow_token = fenced
        self.expect("GOBLIN.CAD", int(call(r, "GOBLIN.CAD", key("bzwindow"), token)), 1)
        call(r, "SET", key("delex"), token)
        self.expect("DELEX", int(call(r, "DELEX", key("delex"), "IFEQ", token)), 1)

    def expect(self, what: str, got: object, wanted: object) -> None:
        if got != wanted:
            fail(f"{what} in round {self.rounds}: {got!r}, where {wanted!r} was due")

    def model(self) -> dict[str, int]:
        """What the keys hold after the last round, for the test to read on the owner."""
        return {
            key("incr"): self.incr,
            key("standin"): self.standin,
            key("fwindow"): self.fwindow,
            key("mf:a"): self.mfwindow,
            key("zwindow"): self.zwindow,
        }


class Parked:
    """A holder and a waiter on one lock or semaphore, parked across the migrations."""

    def __init__(self, r: Any, what: str, holder: Any, waiter: Any, contender: Any) -> None:
        self.r, self.what = r, what
        self.holder, self.waiter, self.contender = holder, waiter, contender
        if not holder.acquire(blocking=False):
            fail(f"{what}: the holder did not take it")
        self.expiry = int(r.execute_command("PEXPIRETIME", holder.name))
        self.released = threading.Event()
        self.granted_before_release = False
        self.granted: bool | None = None
        self.thread = threading.Thread(target=self.wait, daemon=True)
        self.thread.start()

    def wait(self) -> None:
        try:
            self.granted = self.waiter.acquire(blocking=True, blocking_timeout=120)
        except Exception as error:  # noqa: BLE001 (reported)
            fail(f"{self.what}: the waiter's acquire raised {error!r}")
            return
        self.granted_before_release = not self.released.is_set()

    def finish(self) -> None:
        still = int(self.r.execute_command("PEXPIRETIME", self.holder.name))
        if still != self.expiry:
            fail(f"{self.what}: its expiry moved from {self.expiry} to {still}")
        if self.contender.acquire(blocking=False):
            fail(f"{self.what}: a contender was granted it while held")
        holder_token = self.holder.fencing_token
        self.released.set()
        self.holder.release()
        self.thread.join(timeout=30)
        if self.thread.is_alive() or not self.granted:
            fail(f"{self.what}: the waiter was not granted after the release ({self.granted!r})")
        if self.granted_before_release:
            fail(f"{self.what}: the waiter was granted while the holder held it")
        waiter_token = self.waiter.fencing_token
        if not (isinstance(waiter_token, int) and isinstance(holder_token, int) and waiter_token > holder_token):
            fail(f"{self.what}: the waiter's token {waiter_token} is not above the holder's {holder_token}")
        if self.granted:
            self.waiter.release()


def main() -> None:
    r: Any = RedisCluster(startup_nodes=NODES)
    waiting: Any = RedisCluster(startup_nodes=NODES)
    mutex = Parked(
        r,
        "Lock",
        # Not thread-local: the waiter acquires in its thread, and is checked and released here.
        Lock(r, key("mutex"), timeout=600, thread_local=False),
        Lock(waiting, key("mutex"), timeout=600, thread_local=False),
        Lock(r, key("mutex"), timeout=600, thread_local=False),
    )
    semaphore = Parked(
        r,
        "Semaphore",
        Semaphore(r, key("sem"), limit=1, lease=600),
        Semaphore(waiting, key("sem"), limit=1, lease=600),
        Semaphore(r, key("sem"), limit=1, lease=600),
    )
    loop = Loop(r)
    loop.round()
    print("ready", flush=True)
    while not os.path.exists(STOP) and not failures:
        loop.round()
    mutex.finish()
    semaphore.finish()
    report(loop)


def report(loop: Loop | None) -> None:
    if loop is not None:
        print(f"rounds {loop.rounds}")
        for name, count in loop.model().items():
            print(f"model {name} {count}")
    for failure in failures:
        print("failure " + " ".join(failure.split()))
    print("done", flush=True)


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # noqa: BLE001 (reported)
        fail(f"raised {type(error).__name__}: {error}")
        report(None)
        sys.exit(1)
