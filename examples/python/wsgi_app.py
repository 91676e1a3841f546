"""A plain WSGI app (no framework, the standard library's server) limited by
``goblin_redis.ratelimit``, answering with the IETF ``RateLimit-Policy`` and ``RateLimit``
fields, and ``Retry-After`` on a 429. Each decision is one GOBLIN.MGCRA call: all the request's
policies at once, all or nothing.

    GOBLIN_URL=goblin://127.0.0.1:6379 PORT=8080 python wsgi_app.py     # against `make run`
    curl -i http://127.0.0.1:8080/      # 5 a minute and 20 an hour per client, then 429
    curl -i -X POST 'http://127.0.0.1:8080/complete?max_tokens=1000&used=250'

``/`` checks two policies per client address. ``/complete`` stands for a call to an LLM on a
team's budget of 10,000 tokens a day: it reserves ``max_tokens`` (the most the completion may
use) before the call, and refunds what the completion did not use after it.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIRequestHandler, make_server

import redis
from goblin_redis.ratelimit import Policy, PolicySet, Result, headers, key

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIEnvironment

URL = os.environ.get("GOBLIN_URL", "goblin://127.0.0.1:6379").replace("goblin://", "redis://", 1)
CLIENT = redis.Redis.from_url(URL)

#: A team's LLM budget: 10,000 tokens a day (one back every 8.64 s).
DAILY_TOKENS = 10_000


def _client_limits(address: str) -> PolicySet:
    """5 a minute and 20 an hour, per client address, under one hash tag."""
    return PolicySet(
        CLIENT,
        [
            Policy("minute", key(f"wsgi:{address}", "minute"), limit=5, period=60),
            Policy("hour", key(f"wsgi:{address}", "hour"), limit=20, period=3600),
        ],
    )


def _team_budget(team: str) -> PolicySet:
    return PolicySet(CLIENT, [Policy("tokens", key(f"llm:{team}", "day"), limit=DAILY_TOKENS, period=86_400)])


def _respond(start_response: StartResponse, result: Result, body: str) -> Iterable[bytes]:
    status = "200 OK" if result.allowed else "429 Too Many Requests"
    fields: Mapping[str, str] = headers(result)
    start_response(status, [("Content-Type", "text/plain"), *fields.items()])
    return [body.encode() if result.allowed else b"too many requests\n"]


def _complete(team: str, max_tokens: int, used: int) -> tuple[Result, str]:
    """Reserve ``max_tokens``, "call the model" (which used ``used`` of them), refund the rest."""
    budget = _team_budget(team)
    reserved = budget.hit(cost=max_tokens)
    if not reserved.allowed:
        return reserved, ""
    used = min(max(used, 0), max_tokens)
    unused = max_tokens - used
    settled = budget.refund(unused) if unused else reserved
    return settled, f"used {used} of {max_tokens} tokens reserved\n"


def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
    path, method = environ.get("PATH_INFO", "/"), environ.get("REQUEST_METHOD", "GET")
    if path == "/" and method == "GET":
        return _respond(start_response, _client_limits(environ.get("REMOTE_ADDR", "-")).hit(), "hello\n")
    if path == "/complete" and method == "POST":
        query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
        try:
            max_tokens = int(query.get("max_tokens", ["1000"])[0])
            used = int(query.get("used", ["0"])[0])
            if max_tokens < 1:
                raise ValueError(max_tokens)
        except ValueError:
            start_response("400 Bad Request", [("Content-Type", "text/plain")])
            return [b"max_tokens (1 or more) and used must be integers\n"]
        team = environ.get("HTTP_X_TEAM", "team7")
        result, body = _complete(team, max_tokens, used)
        return _respond(start_response, result, body)
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not found\n"]


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


if __name__ == "__main__":
    with make_server("127.0.0.1", int(os.environ.get("PORT", "8080")), app, handler_class=_Quiet) as server:
        server.serve_forever()
