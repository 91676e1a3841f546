"""Each example app run as a user runs it (its own process, a real HTTP server on loopback) on a
Goblin server, once per limits strategy, and driven past its limits over HTTP: five requests a
minute pass with their rate-limit headers, the sixth is a 429 with ``Retry-After``; the
endpoint that costs 4 of 10 passes twice, then is a 429.

    GOBLIN_URL=goblin://127.0.0.1:PORT pytest examples/python

``GOBLIN_REDIS_SITE``, when set, is where goblin-redis's wheel was installed: the apps must
import it from there (tests/python_examples.rs builds and installs it).
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import httpx
import pytest
import redis

HERE = Path(__file__).resolve().parent
GOBLIN_URL = os.environ.get("GOBLIN_URL", "goblin://127.0.0.1:6379")
APPS = ["flask_app.py", "slowapi_app.py"]
STRATEGIES = ["fixed-window", "moving-window", "sliding-window-counter"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the app exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"the app never listened on {port}")


@pytest.fixture(params=STRATEGIES)
def strategy(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture(params=APPS)
def app(request: pytest.FixtureRequest, strategy: str) -> Iterator[str]:
    """The app's base URL, on an empty Goblin server."""
    client = redis.Redis.from_url(GOBLIN_URL.replace("goblin://", "redis://", 1))
    client.flushall()
    client.close()
    if strategy == "sliding-window-counter":
        # Its windows are whole minutes of the server's clock: start well inside one, so that
        # no request of the test weighs in the previous minute.
        left = 60 - time.time() % 60
        if left < 5:
            time.sleep(left + 0.1)
    port = _free_port()
    env = {**os.environ, "PORT": str(port), "RATELIMIT_STRATEGY": strategy, "GOBLIN_URL": GOBLIN_URL}
    process = subprocess.Popen([sys.executable, str(HERE / request.param)], env=env)
    try:
        _wait_listening(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_past_the_limit(app: str) -> None:
    with httpx.Client(base_url=app) as client:
        for sent in range(1, 6):
            response = client.get("/")
            assert response.status_code == 200, response.text
            assert response.headers["X-RateLimit-Limit"] == "5"
            assert response.headers["X-RateLimit-Remaining"] == str(5 - sent)
        before = time.time()
        refused = client.get("/")
        assert refused.status_code == 429, refused.text
        assert refused.headers["X-RateLimit-Limit"] == "5"
        assert refused.headers["X-RateLimit-Remaining"] == "0"
        retry_after = int(refused.headers["Retry-After"])
        assert 1 <= retry_after <= 61, refused.headers
        reset = float(refused.headers["X-RateLimit-Reset"])  # slowapi: a float; Flask-Limiter: whole
        assert math.floor(before) <= reset <= before + 61, refused.headers


def test_cost(app: str, strategy: str) -> None:
    with httpx.Client(base_url=app) as client:
        first, second, third = (client.get("/report") for _ in range(3))
        assert (first.status_code, second.status_code, third.status_code) == (200, 200, 429)
        assert first.headers["X-RateLimit-Remaining"] == "6"
        assert second.headers["X-RateLimit-Remaining"] == "2"
        # The refused 4 leaves 2 of 10 in the moving and sliding windows; the fixed window, as
        # limits' own, counts a refused hit too (its counter is at 12).
        assert third.headers["X-RateLimit-Remaining"] == ("0" if strategy == "fixed-window" else "2")


def test_the_wheel_is_what_runs() -> None:
    """goblin_redis from the installed wheel (when there is one), typed (py.typed)."""
    import goblin_redis

    site = os.environ.get("GOBLIN_REDIS_SITE")
    if site:
        assert Path(goblin_redis.__file__).resolve().is_relative_to(Path(site).resolve()), goblin_redis.__file__
    assert resources.files("goblin_redis").joinpath("py.typed").is_file()
    assert goblin_redis.__module_version__ >= 300
