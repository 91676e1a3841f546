"""`make bench`'s Python part: Goblin beneath limits against limits' own Redis storage, side by
side in one run, on servers with the Goblin module loaded (which serve both storages).

1. The server's CPU per decision, for each strategy at cost 1 and at cost 100: the same
   workload through limits' strategies on ``goblin://`` and on ``redis://`` (limits' Lua
   scripts), interleaved round by round, and commandstats' ``usec`` of the commands that made
   the decisions (Goblin's, or EVALSHA and EVAL: a script's time includes the commands it
   calls) over the number of decisions; the client's time per ``hit()`` beside it. On every
   server given.
2. limits' own benchmarks (``tests/benchmarks`` of its pinned sdist, pytest-benchmark), whose
   parametrization our pytest plugin extends with the Goblin storages: ``hit()``, ``test()``
   and ``get_window_stats()`` on ``goblin://`` and ``async+goblin://`` against the suite's own
   ``redis://`` and ``async+redis://``, on the first server given (it listens on
   127.0.0.1:7379, where the suite's ``redis://`` storage expects its server).

Writes a markdown fragment (``--out``, bench/results/python.md). Run with the Python of
.servers/venv-limits:

    bench.py --module target/release/libgoblin.so --server "Valkey 9.1=PATH" ... [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import redis
from limits import RateLimitItemPerMinute
from limits.storage import storage_from_string
from limits.strategies import STRATEGIES

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "python" / "src"), str(ROOT / "python" / "tests")]

import goblin_redis.limits  # noqa: E402,F401  (registers goblin://)

SUITE_PORT = 7379
#: limits' strategies (STRATEGIES), how the report names them, and the benchmarks' ids of them.
STRATEGY_NAMES = {
    "fixed-window": "fixed window",
    "moving-window": "moving window",
    "sliding-window-counter": "sliding window counter",
}
BENCH_IDS = {
    "fixed-window": "fixed-window",
    "moving-window": "moving-window",
    "sliding-window-counter": "sliding-window",
}
DECISION_COMMANDS = {
    "goblin": {"goblin.increx", "goblin.zwindow", "goblin.swindow"},
    "redis": {"evalsha", "eval"},
}


# ---------------------------------------------------------------------------------- servers
class RunningServer:
    def __init__(self, binary: str, module: str, port: int) -> None:
        self.port = port
        self.dir = tempfile.TemporaryDirectory(prefix="goblin-bench-python-")
        self.process = subprocess.Popen(
            [
                *(binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
                *("--dir", self.dir.name, "--logfile", "server.log", "--loadmodule", module),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.client = redis.Redis(port=port)
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.client.ping():
                    break
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = Path(self.dir.name, "server.log")
                    text = log.read_text() if log.exists() else ""
                    raise SystemExit(f"{binary} did not start on {port}: {text}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        self.client.close()
        self.process.terminate()
        self.process.wait(timeout=10)
        self.dir.cleanup()


# ------------------------------------------------------------------- 1. CPU per decision
@dataclass
class Sample:
    usec_per_decision: float
    client_us_per_hit: float
    admitted: int


@dataclass
class Row:
    server: str
    strategy: str
    cost: int
    lua: list[Sample] = field(default_factory=list)
    goblin: list[Sample] = field(default_factory=list)


def decision_usec(client: redis.Redis, kind: str) -> tuple[int, int]:
    """(usec, calls) of the commands that make decisions, from INFO commandstats."""
    stats = cast(dict[str, dict[str, Any]], client.info("commandstats"))
    usec = calls = 0
    for name, values in stats.items():
        if name.removeprefix("cmdstat_") in DECISION_COMMANDS[kind]:
            usec += int(values["usec"])
            calls += int(values["calls"])
    return usec, calls


def one_round(server: RunningServer, kind: str, strategy: str, cost: int, users: int, hits: int) -> Sample:
    """``users`` keys, ``hits`` decisions each, all admitted: the limit is exactly hits x cost."""
    client = server.client
    client.flushall()
    uri = f"{kind}://127.0.0.1:{server.port}"
    limiter = STRATEGIES[strategy](storage_from_string(uri))
    item = RateLimitItemPerMinute(hits * cost)
    limiter.hit(RateLimitItemPerMinute(10), "warm-up")  # loads limits' scripts
    client.config_resetstat()
    admitted = 0
    started = time.perf_counter()
    for _ in range(hits):
        for user in range(users):
            admitted += limiter.hit(item, f"user{user}", cost=cost)
    elapsed = time.perf_counter() - started
    usec, calls = decision_usec(client, kind)
    decisions = users * hits
    if calls != decisions:
        raise SystemExit(f"{kind} {strategy} cost {cost}: {calls} decision commands for {decisions} decisions")
    return Sample(usec / decisions, elapsed / decisions * 1e6, admitted)


def cpu_per_decision(label: str, server: RunningServer, rounds: int, users: int, hits: int) -> list[Row]:
    rows = []
    for strategy in STRATEGY_NAMES:
        for cost in (1, 100):
            row = Row(label, strategy, cost)
            for _ in range(rounds):  # interleaved: Lua, Goblin, Lua, Goblin, ...
                row.lua.append(one_round(server, "redis", strategy, cost, users, hits))
                row.goblin.append(one_round(server, "goblin", strategy, cost, users, hits))
            rows.append(row)
            print(f"bench.py: {label} {strategy} cost {cost}: {summary(row)}", flush=True)
    return rows


def median(samples: list[Sample], attribute: str) -> float:
    return float(statistics.median(getattr(sample, attribute) for sample in samples))


def summary(row: Row) -> str:
    lua, goblin = median(row.lua, "usec_per_decision"), median(row.goblin, "usec_per_decision")
    return f"server {lua:.2f} -> {goblin:.2f} us/decision ({goblin / lua:.2f}x)"


# --------------------------------------------------------------- 2. limits' own benchmarks
def limits_benchmarks(quick: bool) -> dict[str, object]:
    """Runs the suite's benchmarks for Goblin's and the suite's own Redis storages; their JSON."""
    with tempfile.TemporaryDirectory(prefix="goblin-bench-json-") as scratch:
        out = Path(scratch) / "benchmarks.json"
        env = {
            **os.environ,
            "GOBLIN_SUITE_SERVER": f"127.0.0.1:{SUITE_PORT}",
            "GOBLIN_SUITE_SERVICES": f"redis-basic=127.0.0.1:{SUITE_PORT}",
        }
        # Goblin's parameters and the suite's own Redis ones (redis_basic, and "redis" async).
        select = "goblin or redis" if not quick else "(goblin or redis) and 500 and 50"
        # -m benchmark (after the runner's own "-m goblin and benchmark": the last one wins).
        extra = ["-q", "-m", "benchmark", "-k", select, f"--benchmark-json={out}"]
        extra += [f"--benchmark-storage=file://{scratch}/storage", "-p", "no:flaky"]
        command = [sys.executable, str(ROOT / "python" / "tests" / "limits_suite.py"), "benchmarks", *extra]
        status = subprocess.call(command, env=env)
        if status != 0:
            raise SystemExit(f"bench.py: limits' benchmarks failed ({status})")
        data: dict[str, object] = json.loads(out.read_text())
        return data


@dataclass(frozen=True)
class BenchKey:
    test: str
    strategy: str
    limit: str
    full: int


def storage_of(params: dict[str, object]) -> str:
    uri = str(params["uri"])
    args = params.get("args") or {}
    implementation = args.get("implementation", "coredis") if isinstance(args, dict) else "coredis"
    scheme = uri.partition("://")[0]
    return f"{scheme}/{implementation}" if scheme.startswith("async+") else scheme


def bench_table(data: dict[str, object]) -> dict[BenchKey, dict[str, float]]:
    table: dict[BenchKey, dict[str, float]] = {}
    for bench in cast(list[dict[str, Any]], data["benchmarks"]):
        params = bench["params"]
        # test_hit and test_hit_async are one row: the storage says which is which.
        test = bench["name"].split("[")[0].removesuffix("_async")
        key = BenchKey(test, params["strategy"], params["limit"], int(params["percentage_full"]))
        table.setdefault(key, {})[storage_of(params)] = bench["stats"]["mean"] * 1e6
    return table


# ---------------------------------------------------------------------------------- report
def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def report(
    rows: list[Row], table: dict[BenchKey, dict[str, float]], suite_server: str, args: argparse.Namespace
) -> str:
    lines = [
        "## Goblin beneath limits (Python)",
        "",
        f"`make bench` (bench/python/bench.py), {time.strftime('%Y-%m-%d')}, {platform.machine()} with "
        f"{os.cpu_count()} cores; limits 5.8.0, redis-py 7.0.1, coredis 5.6.0. Each decision is one "
        "Goblin command (`goblin://`) against one of limits' Lua scripts (`redis://`), on the same server.",
        "",
        "### The server's CPU per decision",
        "",
        f"{args.users} keys x {args.hits} decisions each through limits' strategy, all admitted (the limit is "
        f"{args.hits} x the cost a minute); `usec` of the decision commands in `INFO commandstats` over the "
        f"decisions, median of {args.rounds} interleaved rounds; the client's time per `hit()` (redis-py, sync, "
        "one connection) beside it.",
        "",
        "| server | strategy | cost | limits' Lua, us | Goblin, us | Goblin / Lua | hit(), Lua, us "
        "| hit(), Goblin, us |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lua, goblin = median(row.lua, "usec_per_decision"), median(row.goblin, "usec_per_decision")
        hit_lua, hit_goblin = median(row.lua, "client_us_per_hit"), median(row.goblin, "client_us_per_hit")
        lines.append(
            f"| {row.server} | {STRATEGY_NAMES[row.strategy]} | {row.cost} | {lua:.2f} | {goblin:.2f} | "
            f"{goblin / lua:.2f} | {hit_lua:.0f} | {hit_goblin:.0f} |"
        )
    ratios = [median(r.goblin, "usec_per_decision") / median(r.lua, "usec_per_decision") for r in rows]
    over = [
        f"{r.server} {STRATEGY_NAMES[r.strategy]} at cost {r.cost} ({ratio:.2f})"
        for r, ratio in zip(rows, ratios, strict=True)
        if ratio > 0.5
    ]
    lines += [
        "",
        "Goal, at most half the server's CPU per decision: "
        + (
            "met in every row"
            if not over
            else f"met in {len(rows) - len(over)} rows of {len(rows)}; not in {', '.join(over)}"
        )
        + f" (the geometric mean of Goblin / Lua is {geomean(ratios):.2f}).",
        "",
        "### limits' own benchmarks",
        "",
        f"limits' `tests/benchmarks` (pytest-benchmark), unmodified, on {suite_server}: mean time per call in us "
        "for 100 keys seeded to the given fill, `redis://` and `async+redis://` (coredis) being limits' own "
        "Redis storage and its Lua scripts.",
        "",
        "| strategy | limit | full | `redis://` | `goblin://` | ratio | `async+redis://` | `async+goblin://` | ratio |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    hit_ratios: dict[str, list[float]] = {}
    for key in sorted(table, key=lambda k: (k.test, k.strategy, k.limit, k.full)):
        if key.test != "test_hit":
            continue
        means = table[key]
        sync = (means.get("redis"), means.get("goblin"))
        aio = (means.get("async+redis/coredis"), means.get("async+goblin/coredis"))
        cells = []
        for base, ours in (sync, aio):
            if base and ours:
                cells += [f"{base:.0f}", f"{ours:.0f}", f"{ours / base:.2f}"]
                hit_ratios.setdefault(key.strategy, []).append(ours / base)
            else:
                cells += ["-", "-", "-"]
        lines.append(f"| {key.strategy} | {key.limit} | {key.full}% | " + " | ".join(cells) + " |")
    lines += ["", "Geometric means of Goblin / Redis over every limit and fill, sync and async:", ""]
    lines += ["| call | " + " | ".join(STRATEGY_NAMES[s] for s in STRATEGY_NAMES) + " |", "|---|---:|---:|---:|"]
    for test in ("test_hit", "test_test", "test_get_window_stats"):
        cells = []
        for strategy in STRATEGY_NAMES:
            ratios = []
            for key, means in table.items():
                if key.test != test or key.strategy != BENCH_IDS[strategy]:
                    continue
                for theirs, mine in (("redis", "goblin"), ("async+redis/coredis", "async+goblin/coredis")):
                    if means.get(theirs) and means.get(mine):
                        ratios.append(means[mine] / means[theirs])
            cells.append(f"{geomean(ratios):.2f}")
        lines.append(f"| `{test.removeprefix('test_')}()` | " + " | ".join(cells) + " |")
    all_hits = [r for values in hit_ratios.values() for r in values]
    means = {strategy: geomean(values) for strategy, values in hit_ratios.items()}
    slower = [f"{strategy} ({mean:.2f})" for strategy, mean in means.items() if mean > 1.0]
    lines += [
        "",
        "Goal, no slower in `hit()` than limits' Redis storage, each strategy's geometric mean of Goblin / Redis "
        "over its rows: "
        + ("met for every strategy" if not slower else f"not met for {', '.join(slower)}")
        + " ("
        + ", ".join(f"{strategy} {mean:.2f}" for strategy, mean in means.items())
        + f"; single rows range from {min(all_hits, default=math.nan):.2f} to {max(all_hits, default=math.nan):.2f}: "
        "each is one mean, and a single mean moves by up to a quarter between runs on this 2-core machine).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--module", required=True)
    parser.add_argument("--server", action="append", required=True, help="LABEL=BINARY (the first runs part 2)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "python.md"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--hits", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="a tiny run that only checks the harness works")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.users, args.hits = 1, 5, 3
    rows: list[Row] = []
    table: dict[BenchKey, dict[str, float]] = {}
    for number, spec in enumerate(args.server):
        label, _, binary = spec.partition("=")
        server = RunningServer(binary, str(Path(args.module).resolve()), SUITE_PORT)
        try:
            rows += cpu_per_decision(label, server, args.rounds, args.users, args.hits)
            if number == 0:
                table = bench_table(limits_benchmarks(args.quick))
                suite_server = label
        finally:
            server.stop()
    text = report(rows, table, suite_server, args)
    Path(args.out).write_text(text)
    print(f"bench.py: wrote {args.out}")


if __name__ == "__main__":
    main()
