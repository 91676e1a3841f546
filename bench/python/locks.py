"""`make bench`'s lock part: the hand-off latency of Goblin's blocking acquire
(goblin_redis.lock.Lock: GOBLIN.BLOCK, waiting in line in the server) against redis-py's own
Lock (SET NX PX, then sleep and try again) with ``sleep`` 0.1 s and 0.01 s, with 1, 10 and 100
clients waiting, on one server (loopback), and how many commands per second the waiters send
while the lock is held.

The hand-off latency is the time from a holder's release (just before it sends it) to the next
client holding the lock (when its acquire returns), both on this process's clock. Each round:
the driver takes the lock; N waiter threads (one connection each) start waiting (redis-py's each
after a random part of its ``sleep``, so that they do not poll in step); once all wait (Goblin:
``INFO goblin`` shows N waiting; redis-py: after three sleeps) the driver releases; each
waiter that gets the lock notes the latency, holds it 1 ms, releases it and drops out, so a
round gives N samples, with N, then N - 1, ... waiters left. In the first round of each case
the driver first holds the lock 2 s and counts the commands the server receives meanwhile
(commandstats, less the driver's INFO): the waiters' polling.

Ratios and figures side by side only: nothing here passes or fails on time. Run with the Python
of .servers/venv-locks:

    locks.py --module target/release/libgoblin.so --server "Valkey 9.1=PATH" [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
import redis.lock

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "python" / "src")]

from goblin_redis.lock import Lock as GoblinLock  # noqa: E402

KEY = "bench:lock"
HOLD = 0.001
#: How long the driver holds the lock, in the first round of a case, to count the waiters' commands.
COUNT_WINDOW = 2.0
#: The samples wanted per case (rounds = this / clients, at least 2).
SAMPLES = 200


@dataclass(frozen=True)
class Case:
    name: str
    #: None: Goblin's lock (which has no sleep); otherwise redis-py's Lock with this sleep.
    sleep: float | None


CASES = [
    Case("Goblin (GOBLIN.BLOCK)", None),
    Case("redis-py Lock, sleep 0.1", 0.1),
    Case("redis-py Lock, sleep 0.01", 0.01),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class RunningServer:
    def __init__(self, binary: str, module: str) -> None:
        self.port = free_port()
        self.dir = tempfile.TemporaryDirectory(prefix="goblin-bench-locks-")
        self.process = subprocess.Popen(
            [
                *(binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
                *("--dir", self.dir.name, "--logfile", "server.log", "--loadmodule", module, "--maxclients", "1000"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.client.ping():
                    break
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{binary} did not start on {self.port}") from None
                time.sleep(0.05)
        fields = info(self.client, "server")
        self.version = str(fields.get("valkey_version") or fields["redis_version"])

    def stop(self) -> None:
        self.client.close()
        self.process.terminate()
        self.process.wait(timeout=10)
        self.dir.cleanup()


def make_lock(case: Case, client: redis.Redis) -> redis.lock.Lock:
    if case.sleep is None:
        return GoblinLock(client, KEY, timeout=10)
    return redis.lock.Lock(client, KEY, timeout=10, sleep=case.sleep)


def info(client: redis.Redis, section: str) -> dict[str, Any]:
    reply: dict[str, Any] = client.info(section)  # type: ignore[assignment]
    return reply


def total_calls(client: redis.Redis) -> tuple[int, int]:
    """All commands the server has run, and its INFO calls among them."""
    stats = info(client, "commandstats")
    calls = {name: int(value["calls"]) for name, value in stats.items()}
    return sum(calls.values()), calls.get("cmdstat_info", 0)


@dataclass
class Result:
    case: Case
    clients: int
    latencies: list[float]
    waiter_commands_per_second: float


def run_case(server: RunningServer, case: Case, clients: int, rounds: int) -> Result:
    driver = redis.Redis(port=server.port)
    driver_lock = make_lock(case, driver)
    connections = [redis.Redis(port=server.port) for _ in range(clients)]
    for connection in connections:
        connection.ping()
    latencies: list[float] = []
    last_release = [0.0]
    start = threading.Barrier(clients + 1)
    done = threading.Barrier(clients + 1)
    stop = [False]

    def waiter(connection: redis.Redis) -> None:
        lock = make_lock(case, connection)
        while True:
            start.wait()
            if stop[0]:
                return
            if case.sleep is not None:
                # Arrivals at random phases of the polling: waiters that all poll in step would
                # each wait a whole sleep for the next hand-off.
                time.sleep(random.uniform(0, case.sleep))
            assert lock.acquire(blocking=True, blocking_timeout=60)
            got = time.perf_counter()
            latencies.append(got - last_release[0])
            time.sleep(HOLD)
            last_release[0] = time.perf_counter()
            lock.release()
            done.wait()

    threads = [threading.Thread(target=waiter, args=(c,), daemon=True) for c in connections]
    for thread in threads:
        thread.start()
    rate = 0.0
    for number in range(rounds):
        assert driver_lock.acquire(blocking=False)
        start.wait()
        if case.sleep is None:
            deadline = time.monotonic() + 30
            while int(info(driver, "goblin")["goblin_waiting"]) < clients:
                assert time.monotonic() < deadline, "the waiters never all waited"
                time.sleep(0.002)
        else:
            time.sleep(3 * case.sleep + 0.01)
        if number == 0:
            before, info_before = total_calls(driver)
            began = time.perf_counter()
            time.sleep(COUNT_WINDOW)
            after, info_after = total_calls(driver)
            elapsed = time.perf_counter() - began
            # Less the driver's own INFO (and the one that counted).
            rate = ((after - before) - (info_after - info_before)) / elapsed
        last_release[0] = time.perf_counter()
        driver_lock.release()
        done.wait()
    stop[0] = True
    start.wait()
    for thread in threads:
        thread.join(10)
    for connection in connections:
        connection.close()
    driver.close()
    return Result(case, clients, latencies, rate)


def percentile(values: list[float], q: int) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def report(label: str, server: RunningServer, results: list[Result], quick: bool) -> str:
    python = platform.python_version()
    lines = [
        "## Locks: hand-off latency (Python)",
        "",
        f"`make bench` (bench/python/locks.py){' --quick' if quick else ''}, {time.strftime('%Y-%m-%d')}, "
        f"{platform.machine()} with {os.cpu_count()} cores; {label} ({server.version}) "
        f"on loopback; Python {python}, redis-py {redis.__version__}, one thread and one connection per client. "
        "Generated: do not edit.",
        "",
        "The hand-off latency is the time from a holder's release (just before it sends it) to the next client "
        "holding the lock (when its acquire returns). Each round, N clients wait while the lock is held; it is "
        "released, and each client that gets it holds it 1 ms, releases it and drops out (so a round gives N "
        "samples, with N, N - 1, ... clients still waiting). Goblin's lock waits in line in the server "
        "(GOBLIN.BLOCK: granted in the release's own step, first come first served); redis-py's Lock tries "
        "SET NX PX, sleeps `sleep` and tries again (its clients start waiting at random points of a `sleep`, "
        "so that they do not poll in step).",
        "",
        "| clients | lock | samples | p50, ms | p99, ms | p50 / Goblin's | p99 / Goblin's | "
        "waiters' commands/s while held |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    by_clients: dict[int, dict[str, Result]] = {}
    for result in results:
        by_clients.setdefault(result.clients, {})[result.case.name] = result
    for clients, cases in by_clients.items():
        goblin = cases[CASES[0].name]
        g50, g99 = percentile(goblin.latencies, 50), percentile(goblin.latencies, 99)
        for case in CASES:
            result = cases[case.name]
            p50, p99 = percentile(result.latencies, 50), percentile(result.latencies, 99)
            lines.append(
                f"| {clients} | {case.name} | {len(result.latencies)} | {ms(p50)} | {ms(p99)} | "
                f"{p50 / g50:.1f} | {p99 / g99:.1f} | {result.waiter_commands_per_second:.1f} |"
            )
    lines += [
        "",
        f"The commands per second are counted over {COUNT_WINDOW:.0f} s of the first round of each case, while "
        "the driver holds the lock and every client waits (all the commands the server ran, from "
        "`INFO commandstats`, less the driver's INFO). A Goblin waiter sends one GOBLIN.BLOCK and then "
        "nothing until it is served, or until its slice ends: the socket timeout less a second (4 s with "
        "redis-py's default 5 s), when it sends the same GOBLIN.BLOCK again. redis-py's waiters each send "
        "a SET NX PX every `sleep`.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--module", required=True)
    parser.add_argument("--server", required=True, help="LABEL=BINARY")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "locks.md"))
    parser.add_argument("--quick", action="store_true", help="a tiny run that only checks the harness works")
    args = parser.parse_args()
    label, _, binary = args.server.partition("=")
    server = RunningServer(binary, str(Path(args.module).resolve()))
    results: list[Result] = []
    try:
        for clients in (1, 10, 100) if not args.quick else (1, 3):
            rounds = 1 if args.quick else max(SAMPLES // clients, 2)
            for case in CASES:
                server.client.flushall()
                started = time.monotonic()
                result = run_case(server, case, clients, rounds)
                print(
                    f"locks.py: {clients} clients, {case.name}: p50 {ms(percentile(result.latencies, 50))} ms, "
                    f"p99 {ms(percentile(result.latencies, 99))} ms, "
                    f"{result.waiter_commands_per_second:.1f} commands/s while held "
                    f"({time.monotonic() - started:.0f} s)",
                    flush=True,
                )
                results.append(result)
    finally:
        server.stop()
    Path(args.out).write_text(report(label, server, results, args.quick))
    print(f"locks.py: wrote {args.out}")


if __name__ == "__main__":
    main()
