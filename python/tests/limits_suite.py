"""Runs limits 5.8.0's own tests (or its benchmarks) against the Goblin storages: checks the
pinned sdist's sha256, unpacks it afresh into a scratch folder, and runs pytest there with
``limits_suite_plugin``, selecting the Goblin parameters only (``-m goblin``). The sdist's
files are not edited; the run writes nothing into the repository.

    limits_suite.py tests [PYTEST ARGS...]        the storage, strategy and concurrency tests
    limits_suite.py benchmarks [PYTEST ARGS...]   tests/benchmarks (pytest-benchmark)

with ``GOBLIN_SUITE_SERVER`` and/or ``GOBLIN_SUITE_CLUSTER`` set (see the plugin). Run it with
the Python of ``.servers/venv-limits``; exits with pytest's status.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SDIST = ROOT / ".servers" / "sdists" / "limits-5.8.0.tar.gz"
SHA256 = "c9e0d74aed837e8f6f50d1fcebcf5fd8130957287206bc3799adaee5092655da"

#: The suite's files whose storage tests must pass: the sync ones and their async twins.
TESTS = [
    "tests/test_storage.py",
    "tests/test_strategy.py",
    "tests/integration/test_concurrency.py",
    "tests/aio/test_storage.py",
    "tests/aio/test_strategy.py",
]
BENCHMARKS = ["tests/benchmarks/test_storage.py"]


def unpack(into: Path) -> Path:
    """The sdist, checked against its pinned sha256, unpacked into ``into``; its root."""
    if not SDIST.exists():
        sys.exit(f"limits_suite: no {SDIST} (run scripts/python.sh, which downloads it)")
    digest = hashlib.sha256(SDIST.read_bytes()).hexdigest()
    if digest != SHA256:
        sys.exit(f"limits_suite: {SDIST} has sha256 {digest}, not the pinned {SHA256}")
    with tarfile.open(SDIST) as archive:
        archive.extractall(into, filter="data")
    return into / "limits-5.8.0"


def pytest_command(kind: str, extra: list[str]) -> list[str]:
    pytest = Path(sys.executable).with_name("pytest")
    files = TESTS if kind == "tests" else BENCHMARKS
    # The suite's addopts select "not benchmark"; a later -m wins.
    mark = "goblin" if kind == "tests" else "goblin and benchmark"
    return [str(pytest), "-p", "limits_suite_plugin", "-p", "no:cacheprovider", "--no-cov", "-m", mark, *files, *extra]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(ROOT / "python" / "tests"), str(ROOT / "python" / "src")]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("tests", "benchmarks"):
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="goblin-limits-suite-") as scratch:
        root = unpack(Path(scratch))
        command = pytest_command(argv[0], argv[1:])
        print("limits_suite:", " ".join(command), f"(in {root})", flush=True)
        return subprocess.call(command, cwd=root, env=environment())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
