"""A pytest plugin (``-p redispy_suite_plugin``) for redis-py's lock suite on Goblin's locks:

* marks the four tests that assert redis-py's own polling schedule as strict expected failures
  (an unexpected pass fails the run), and fails the run if any of them is not collected;
* prints one summary line for the Rust test to check:
  ``goblin-locks-suite: passed=N failed=N xfailed=N xpassed=N skipped=N errors=N``.

Why those four fail: each patches redis-py's own clock (``redis.lock.mod_time``; asyncio:
``redis.asyncio.lock.asyncio``) with a fake one, and asserts that the acquire slept ``sleep``
seconds on it, over and over, until ``blocking_timeout``: ``fake.now == approx(0.4)`` and
``fake.sleeps == [0.05] * 8``. Goblin's lock waits inside the server and never touches that
clock, so ``fake.now`` stays 0. The ``assert not lock.acquire()`` before those lines passes.
"""

from __future__ import annotations

import pytest

EXPECTED_FAILURES = {
    "tests/test_goblin_lock.py::TestGoblinLock::test_blocking_timeout",
    "tests/test_goblin_lock.py::TestGoblinLock::test_context_manager_blocking_timeout",
    "tests/test_asyncio/test_goblin_lock.py::TestGoblinLock::test_blocking_timeout[single]",
    "tests/test_asyncio/test_goblin_lock.py::TestGoblinLock::test_blocking_timeout[pool]",
}

REASON = (
    "asserts redis-py's polling schedule on its own patched clock; "
    "Goblin's lock waits inside the server and never sleeps on that clock"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    found = {item.nodeid for item in items} & EXPECTED_FAILURES
    missing = EXPECTED_FAILURES - found
    if missing:
        raise pytest.UsageError(f"redispy_suite_plugin: not collected: {sorted(missing)}")
    for item in items:
        if item.nodeid in EXPECTED_FAILURES:
            item.add_marker(pytest.mark.xfail(strict=True, raises=AssertionError, reason=REASON))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    stats = terminalreporter.stats
    counts = {name: len(stats.get(name, [])) for name in ("passed", "failed", "xfailed", "xpassed", "skipped")}
    counts["errors"] = len(stats.get("error", []))
    terminalreporter.write_line("goblin-locks-suite: " + " ".join(f"{name}={count}" for name, count in counts.items()))
    for report in stats.get("xfailed", []):
        terminalreporter.write_line(f"goblin-locks-suite: xfailed {report.nodeid}")
