"""A Flask app rate-limited by Flask-Limiter on Goblin.

The switch from limits' Redis storage is one import and one storage URI: ``goblin://``
instead of ``redis://``. Every request's decision is then one Goblin command on the server.

    GOBLIN_URL=goblin://127.0.0.1:6379 PORT=5000 python flask_app.py    # against `make run`
    curl -i http://127.0.0.1:5000/      # 5 a minute, then 429 with Retry-After
    curl -i http://127.0.0.1:5000/report    # costs 4 of 10 a minute: twice, then 429

``RATELIMIT_STRATEGY`` picks limits' strategy: ``fixed-window``, ``moving-window`` (the
default here) or ``sliding-window-counter``.
"""

from __future__ import annotations

import os

import goblin_redis.limits  # noqa: F401  (registers goblin:// with limits)
from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

app = Flask(__name__)
limiter = Limiter(
    get_remote_address,
    app=app,
    storage_uri=os.environ.get("GOBLIN_URL", "goblin://127.0.0.1:6379"),
    strategy=os.environ.get("RATELIMIT_STRATEGY", "moving-window"),
    headers_enabled=True,
)


@app.get("/")
@limiter.limit("5/minute")
def index() -> str:
    return "hello\n"


@app.get("/report")
@limiter.limit("10/minute", cost=4)
def report() -> str:
    """An expensive endpoint: each request takes 4 of the 10 a minute."""
    return "a report\n"


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ.get("PORT", "5000")))
