"""A Starlette app rate-limited by slowapi on Goblin.

The switch from limits' Redis storage is one import and one storage URI: ``goblin://``
instead of ``redis://``. slowapi decides with limits' sync strategies, so the storage is
``goblin://`` (on redis-py), not the async one.

    GOBLIN_URL=goblin://127.0.0.1:6379 PORT=8000 python slowapi_app.py   # against `make run`
    curl -i http://127.0.0.1:8000/      # 5 a minute, then 429 with Retry-After
    curl -i http://127.0.0.1:8000/report    # costs 4 of 10 a minute: twice, then 429

``RATELIMIT_STRATEGY`` picks limits' strategy: ``fixed-window``, ``moving-window`` (the
default here) or ``sliding-window-counter``.
"""

from __future__ import annotations

import os

import goblin_redis.limits  # noqa: F401  (registers goblin:// with limits)
import uvicorn
from slowapi import Limiter, _rate_limit_exceeded_handler
from slowapi.errors import RateLimitExceeded
from slowapi.util import get_remote_address
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

limiter = Limiter(
    key_func=get_remote_address,
    storage_uri=os.environ.get("GOBLIN_URL", "goblin://127.0.0.1:6379"),
    strategy=os.environ.get("RATELIMIT_STRATEGY", "moving-window"),
    headers_enabled=True,
)


@limiter.limit("5/minute")
async def index(request: Request) -> Response:
    return PlainTextResponse("hello\n")


@limiter.limit("10/minute", cost=4)
async def report(request: Request) -> Response:
    """An expensive endpoint: each request takes 4 of the 10 a minute."""
    return PlainTextResponse("a report\n")


app = Starlette(routes=[Route("/", index), Route("/report", report)])
app.state.limiter = limiter
app.add_exception_handler(RateLimitExceeded, _rate_limit_exceeded_handler)  # type: ignore[arg-type]


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
