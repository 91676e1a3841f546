"""Each example app run as a user runs it (its own process, a real HTTP server on loopback) on a
Goblin server, once per limits strategy, and driven past its limits over HTTP: five requests a
minute pass with their rate-limit headers, the sixth is a 429 with ``Retry-After``; the
endpoint that costs 4 of 10 passes twice, then is a 429. The WSGI app on goblin_redis.ratelimit
answers with the IETF ``RateLimit-Policy`` and ``RateLimit`` fields, exactly, for two policies at
once and for an LLM token budget that reserves, then refunds.

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
from importlib import metadata, resources
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


@pytest.fixture
def wsgi_app() -> Iterator[str]:
    """wsgi_app.py's base URL (goblin_redis.ratelimit, no limits strategy), on an empty server."""
    client = redis.Redis.from_url(GOBLIN_URL.replace("goblin://", "redis://", 1))
    client.flushall()
    client.close()
    port = _free_port()
    env = {**os.environ, "PORT": str(port), "GOBLIN_URL": GOBLIN_URL}
    process = subprocess.Popen([sys.executable, str(HERE / "wsgi_app.py")], env=env)
    try:
        _wait_listening(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_ietf_fields_past_the_limit(wsgi_app: str) -> None:
    """5 a minute (one back every 12 s) and 20 an hour (every 180 s): the sixth request is
    refused by the minute, and the hour is not charged for it."""
    policy = '"minute";q=5;w=60, "hour";q=20;w=3600'
    with httpx.Client(base_url=wsgi_app) as client:
        for sent in range(1, 6):
            response = client.get("/")
            assert response.status_code == 200, response.text
            assert response.headers["RateLimit-Policy"] == policy
            assert (
                response.headers["RateLimit"]
                == f'"minute";r={5 - sent};t={12 * sent}, "hour";r={20 - sent};t={180 * sent}'
            )
            assert "Retry-After" not in response.headers
        refused = client.get("/")
        assert refused.status_code == 429, refused.text
        assert refused.headers["RateLimit-Policy"] == policy
        assert refused.headers["RateLimit"] == '"minute";r=0;t=60, "hour";r=15;t=900'
        assert refused.headers["Retry-After"] == "12"


def test_an_llm_token_budget(wsgi_app: str) -> None:
    """10,000 tokens a day (one back every 8.64 s): reserve 1,000, use 250, 750 come back."""
    policy = '"tokens";q=10000;w=86400'
    with httpx.Client(base_url=wsgi_app) as client:
        settled = client.post("/complete", params={"max_tokens": 1000, "used": 250})
        assert settled.status_code == 200, settled.text
        assert settled.text == "used 250 of 1000 tokens reserved\n"
        assert settled.headers["RateLimit-Policy"] == policy
        # The refund's reply is a peek at cost 1: 9,750 left, less the one token it asks about.
        assert settled.headers["RateLimit"] == '"tokens";r=9749;t=2169'
        # 9,751 is one more than is left: one token comes back in 8.64 s.
        short = client.post("/complete", params={"max_tokens": 9751, "used": 1})
        assert short.status_code == 429, short.text
        assert short.headers["RateLimit"] == '"tokens";r=9750;t=2160'
        assert short.headers["Retry-After"] == "9"
        # More than the whole budget never passes: no Retry-After.
        never = client.post("/complete", params={"max_tokens": 10_001})
        assert never.status_code == 429, never.text
        assert never.headers["RateLimit"] == '"tokens";r=9750;t=2160'
        assert "Retry-After" not in never.headers
        assert client.post("/complete", params={"max_tokens": 0}).status_code == 400


def test_the_wheel_is_what_runs() -> None:
    """goblin_redis from the installed wheel (when there is one), typed (py.typed)."""
    import goblin_redis

    site = os.environ.get("GOBLIN_REDIS_SITE")
    if site:
        assert Path(goblin_redis.__file__).resolve().is_relative_to(Path(site).resolve()), goblin_redis.__file__
    assert resources.files("goblin_redis").joinpath("py.typed").is_file()
    assert goblin_redis.__module_version__ >= 300


def test_the_wheel_needs_no_limits() -> None:
    """``pip install goblin-redis`` installs nothing more (the application has its client
    library, and the locks and policy sets need no other); limits comes with the ``limits``
    extra, and limits' own client extras with ``redis`` and ``async-redis``."""
    if not os.environ.get("GOBLIN_REDIS_SITE"):
        pytest.skip("no wheel installed (tests/python_examples.rs installs one)")
    meta = metadata.metadata("goblin-redis")
    assert sorted(meta.get_all("Provides-Extra") or []) == ["async-redis", "limits", "redis"]
    requires = {
        requirement.partition(";")[2].strip(): requirement.partition(";")[0].strip()
        for requirement in metadata.requires("goblin-redis") or []
    }
    assert requires == {
        'extra == "limits"': "limits>=5.8,<6",
        'extra == "redis"': "limits[redis]>=5.8,<6",
        'extra == "async-redis"': "limits[async-redis]>=5.8,<6",
    }, requires
    import goblin_redis

    assert meta["Version"] == goblin_redis.__version__
