"""Runs redis-py 8.1.0's own lock tests against Goblin's locks (``goblin_redis.lock.Lock`` and
``goblin_redis.asyncio.lock.Lock``): checks the pinned sdist's sha256, unpacks it afresh into a
scratch folder, copies our two files in beside the suite's (``tests/test_goblin_lock.py`` and
``tests/test_asyncio/test_goblin_lock.py``, subclasses of its ``TestLock``), and runs pytest at
the sdist's root, on those two files only, with ``redispy_suite_plugin``. The sdist's own files
are not edited; the run writes nothing into the repository.

    GOBLIN_SUITE_SERVER=127.0.0.1:PORT redispy_suite.py [PYTEST ARGS...]   (--protocol=2, ...)

Run it with the Python of ``.servers/venv-locks``; exits with pytest's status. The server must
be on loopback and have the module loaded.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SDIST = ROOT / ".servers" / "sdists" / "redis-8.1.0.tar.gz"
SHA256 = "6e1a19beef9225c83efd689c7e6b7da2d5215b1f42cd13b7fc3714d0a09c7b25"

#: Our files, and where each goes in the unpacked sdist: beside the suite's file it subclasses.
BESIDE = {
    "beside_test_lock.py": "tests/test_goblin_lock.py",
    "beside_test_asyncio_lock.py": "tests/test_asyncio/test_goblin_lock.py",
}


def unpack(into: Path) -> Path:
    """The sdist, checked against its pinned sha256, unpacked into ``into``; its root."""
    if not SDIST.exists():
        sys.exit(f"redispy_suite: no {SDIST} (run scripts/python.sh, which downloads it)")
    digest = hashlib.sha256(SDIST.read_bytes()).hexdigest()
    if digest != SHA256:
        sys.exit(f"redispy_suite: {SDIST} has sha256 {digest}, not the pinned {SHA256}")
    with tarfile.open(SDIST) as archive:
        archive.extractall(into, filter="data")
    root = into / "redis-8.1.0"
    for ours, theirs in BESIDE.items():
        target = root / theirs
        if target.exists():
            sys.exit(f"redispy_suite: the sdist already has {theirs}")
        if not (target.parent / "test_lock.py").exists():
            sys.exit(f"redispy_suite: the sdist has no {target.parent.relative_to(root)}/test_lock.py")
        shutil.copyfile(HERE / ours, target)
    return root


def main(argv: list[str]) -> int:
    server = os.environ.get("GOBLIN_SUITE_SERVER")
    if not server:
        print(__doc__, file=sys.stderr)
        return 2
    host = server.rsplit(":", 1)[0]
    if host not in ("127.0.0.1", "localhost", "::1", "[::1]"):
        sys.exit(f"redispy_suite: {server} is not on loopback")
    with tempfile.TemporaryDirectory(prefix="goblin-redispy-suite-") as scratch:
        root = unpack(Path(scratch))
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "redispy_suite_plugin",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rfExX",
            *BESIDE.values(),
            f"--redis-url=redis://{server}/0",
            # The conftest reads this one too at session start (its default is localhost:6479).
            f"--redis-mod-url=redis://{server}",
            *argv,
        ]
        env = dict(os.environ)
        # RE_CLUSTER=true would make the conftest read its endpoints from a file instead.
        env.pop("RE_CLUSTER", None)
        paths = [str(HERE), str(ROOT / "python" / "src")]
        env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        print("redispy_suite:", " ".join(command), f"(in {root})", flush=True)
        return subprocess.call(command, cwd=root, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
