"""goblin_redis.ratelimit: the IETF fields rendered from results (exact strings, no server), the
arguments checked before anything is sent, and GOBLIN.MGCRA behind it on a real server: all or
nothing, peeks that write nothing, refunds that give back and never beyond full, a key shared by
two sets, the server's own errors as redis-py's ResponseError; sync and on redis-py's asyncio.

    GOBLIN_TEST_SERVER=127.0.0.1:PORT GOBLIN_TEST_BARE=127.0.0.1:PORT pytest python/tests/test_ratelimit.py

(``GOBLIN_TEST_BARE``: a server without the module, whose every call is a GoblinModuleError.)

The policies' emission intervals are seconds or more, so no token comes back between the calls
of a test and every count is exact; the seconds fields (rounded up) are exact too while a test's
calls fall within one second.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio
from servers import BARE, SERVER, connect, connect_async, host_port

import goblin_redis
from goblin_redis.ratelimit import (
    AsyncPolicySet,
    AsyncThrottle,
    Policy,
    PolicySet,
    PolicyState,
    Result,
    Throttle,
    headers,
    key,
    key_slot,
    ratelimit_field,
    ratelimit_policy_field,
    retry_after_field,
)

# 3 a minute (one back every 20 s) and 100 an hour (one back every 36 s), per user.
MINUTE = Policy("minute", key("user42", "minute"), limit=3, period=60)
HOUR = Policy("hour", key("user42", "hour"), limit=100, period=3600)


def _state(policy: Policy, limited: bool, remaining: int, retry_after: int | None, reset_after: int) -> PolicyState:
    return PolicyState(policy, limited, policy.limit, remaining, retry_after, reset_after)


def _fields(result: Result) -> list[tuple[str, bool, int, int, int | None, int]]:
    """A result's policies as plain tuples: name, limited, limit, remaining, retry_after, reset_after."""
    return [(s.name, s.limited, s.limit, s.remaining, s.retry_after, s.reset_after) for s in result]


# The fields, rendered (no server).


def test_ratelimit_policy_field() -> None:
    policies = [
        Policy("second", "{u}:s", limit=10, period=1),
        Policy("hour", "{u}:h", limit=1000, period=3600),
        Policy.from_burst("burst", "{u}:b", max_burst=4, tokens_per_period=1, period=2),  # GOBLIN.GCRA's page
        Policy("tenths", "{u}:t", limit=30, period=0.1, tokens_per_period=1),  # 30 x 0.1 s: 3 s, not 4
        Policy("slow", "{u}:w", limit=7, period=10, tokens_per_period=3),  # 7 x 10 / 3 = 23.3: 24
    ]
    assert ratelimit_policy_field(policies) == (
        '"second";q=10;w=1, "hour";q=1000;w=3600, "burst";q=5;w=10, "tenths";q=30;w=3, "slow";q=7;w=24'
    )
    assert [p.max_burst for p in policies] == [9, 999, 4, 29, 6]


def test_ratelimit_field_and_retry_after() -> None:
    allowed = Result(True, None, (_state(MINUTE, False, 2, None, 20), _state(HOUR, False, 99, None, 36)))
    assert ratelimit_field(allowed) == '"minute";r=2;t=20, "hour";r=99;t=36'
    assert retry_after_field(allowed) is None
    assert headers(allowed) == {
        "RateLimit-Policy": '"minute";q=3;w=60, "hour";q=100;w=3600',
        "RateLimit": '"minute";r=2;t=20, "hour";r=99;t=36',
    }
    refused = Result(False, 20, (_state(MINUTE, True, 0, 20, 60), _state(HOUR, False, 97, None, 108)))
    assert headers(refused) == {
        "RateLimit-Policy": '"minute";q=3;w=60, "hour";q=100;w=3600',
        "RateLimit": '"minute";r=0;t=60, "hour";r=97;t=108',
        "Retry-After": "20",
    }
    never = Result(False, None, (_state(MINUTE, True, 3, None, 0),))
    assert never.never
    assert not refused.never
    assert not allowed.never
    assert headers(never) == {"RateLimit-Policy": '"minute";q=3;w=60', "RateLimit": '"minute";r=3;t=0'}
    assert refused["hour"].remaining == 97
    with pytest.raises(KeyError):
        refused["day"]


def test_names_are_sf_strings() -> None:
    odd = Policy('say "hi" \\ bye', "{u}:k", limit=2, period=1)
    assert ratelimit_policy_field([odd]) == '"say \\"hi\\" \\\\ bye";q=2;w=1'
    assert ratelimit_field(Result(True, None, (_state(odd, False, 1, None, 1),))) == '"say \\"hi\\" \\\\ bye";r=1;t=1'
    for bad in ["", "caf\u00e9", "new\nline", "tab\tbed", "\x7f"]:
        with pytest.raises(ValueError, match="printable ASCII"):
            Policy(bad, "k", limit=1, period=1)


def test_field_integers_stay_within_15_digits() -> None:
    big = Policy("big", "k", limit=10**15, period=1)
    with pytest.raises(ValueError, match="q 1000000000000000 is beyond"):
        ratelimit_policy_field([big])
    assert ratelimit_policy_field([Policy("big", "k", limit=10**15 - 1, period=1)]) == ('"big";q=999999999999999;w=1')
    with pytest.raises(ValueError, match="non-empty"):
        ratelimit_policy_field([])


def test_key_and_slots() -> None:
    assert key("user42", "hour") == "{user42}:hour"
    assert key("user42", "api", "minute") == "{user42}:api:minute"
    assert key("user42") == "{user42}"
    for bad in ["", "a{b", "a}b"]:
        with pytest.raises(ValueError, match="hash tag"):
            key(bad, "x")
    with pytest.raises(TypeError, match="must be str"):
        key("user42", b"hour")  # type: ignore[arg-type]
    # CLUSTER KEYSLOT's values.
    assert key_slot("foo") == 12182
    assert key_slot("123456789") == 12739
    assert key_slot("{user1000}.following") == key_slot("{user1000}.followers") == key_slot("user1000")
    assert key_slot("{}foo") != key_slot("foo")  # an empty tag is no tag: the whole key
    assert key_slot(b"{user42}:hour") == key_slot("user42")


class _Recorder:
    """A client that records what it is sent and replies as GOBLIN.MGCRA would, on a server
    whose MODULE LIST lists Goblin (counted apart: the check asked before a client's first call)."""

    def __init__(self, reply: Any) -> None:
        self.sent: list[tuple[Any, ...]] = []
        self.module_lists = 0
        self.reply = reply

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if args == ("MODULE LIST",):
            self.module_lists += 1
            return [{"name": "goblin", "ver": goblin_redis.__module_version__}]
        self.sent.append(args)
        return self.reply


def test_the_command_sent() -> None:
    reply = [0, -1, [0, 3, 2, -1, 20], [0, 100, 99, -1, 36]]
    client = _Recorder(reply)
    limits = PolicySet(client, [MINUTE, HOUR])
    assert _fields(limits.hit()) == [("minute", False, 3, 2, None, 20), ("hour", False, 100, 99, None, 36)]
    limits.hit(cost=2)
    limits.peek(cost=0)
    limits.refund(5)
    client.reply = [0, -1, [0, 2, 1, -1, 1]]
    PolicySet(client, [Policy("half", "k", limit=2, period=0.5, tokens_per_period=4)]).peek()
    policies = ["{user42}:minute", 2, 3, "60", "{user42}:hour", 99, 100, "3600"]
    assert client.sent == [
        ("GOBLIN.MGCRA", 2, *policies, "TOKENS", 1),
        ("GOBLIN.MGCRA", 2, *policies, "TOKENS", 2),
        ("GOBLIN.MGCRA", 2, *policies, "TOKENS", 0, "PEEK"),
        ("GOBLIN.MGCRA", 2, *policies, "TOKENS", 5, "REFUND"),
        ("GOBLIN.MGCRA", 1, "k", 1, 4, "0.5", "TOKENS", 1, "PEEK"),
    ]
    assert client.module_lists == 1  # once for the client, whichever set calls first
    with pytest.raises(TypeError, match="not 4 fields"):
        PolicySet(_Recorder([0, -1, [0, 3, 2, -1, 20]]), [MINUTE, HOUR]).hit()


BAD_POLICIES: list[tuple[str, Any, type[Exception]]] = [
    ("limit 0", lambda: Policy("p", "k", limit=0, period=1), ValueError),
    ("limit True", lambda: Policy("p", "k", limit=True, period=1), TypeError),
    ("limit 1.5", lambda: Policy("p", "k", limit=1.5, period=1), TypeError),  # type: ignore[arg-type]
    ("limit 2**63", lambda: Policy("p", "k", limit=2**63, period=1), ValueError),
    ("limit -1", lambda: Policy("p", "k", limit=-1, period=1), ValueError),
    ("limit text", lambda: Policy("p", "k", limit="10", period=1), TypeError),  # type: ignore[arg-type]
    ("tokens_per_period True", lambda: Policy("p", "k", limit=1, period=1, tokens_per_period=True), TypeError),
    ("tokens_per_period 1.5", lambda: Policy("p", "k", limit=1, period=1, tokens_per_period=1.5), TypeError),  # type: ignore[arg-type]
    ("tokens_per_period 2**63", lambda: Policy("p", "k", limit=1, period=1, tokens_per_period=2**63), ValueError),
    ("period True", lambda: Policy("p", "k", limit=1, period=True), TypeError),
    ("period None", lambda: Policy("p", "k", limit=1, period=None), TypeError),  # type: ignore[arg-type]
    ("tokens_per_period 0", lambda: Policy("p", "k", limit=1, period=1, tokens_per_period=0), ValueError),
    ("period 0", lambda: Policy("p", "k", limit=1, period=0), ValueError),
    ("period -1", lambda: Policy("p", "k", limit=1, period=-1), ValueError),
    ("period nan", lambda: Policy("p", "k", limit=1, period=math.nan), ValueError),
    ("period inf", lambda: Policy("p", "k", limit=1, period=math.inf), ValueError),
    ("period 1e12", lambda: Policy("p", "k", limit=1, period=1e12), ValueError),
    ("period text", lambda: Policy("p", "k", limit=1, period="60"), TypeError),  # type: ignore[arg-type]
    ("key bytes", lambda: Policy("p", b"k", limit=1, period=1), TypeError),  # type: ignore[arg-type]
    ("name bytes", lambda: Policy(b"p", "k", limit=1, period=1), TypeError),  # type: ignore[arg-type]
    ("max_burst -1", lambda: Policy.from_burst("p", "k", max_burst=-1, tokens_per_period=1, period=1), ValueError),
]


@pytest.mark.parametrize(("what", "make", "error"), BAD_POLICIES, ids=[what for what, _, _ in BAD_POLICIES])
def test_bad_policies(what: str, make: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"policy|name|max_burst"):
        make()


def test_bad_sets() -> None:
    client = _Recorder(None)
    with pytest.raises(ValueError, match="at least one policy"):
        PolicySet(client, [])
    with pytest.raises(ValueError, match="names must differ"):
        PolicySet(client, [MINUTE, Policy("minute", key("user42", "other"), limit=1, period=1)])
    apart = [Policy("a", "user42:a", limit=1, period=1), Policy("b", "user42:b", limit=1, period=1)]
    assert key_slot("user42:a") != key_slot("user42:b")
    with pytest.raises(ValueError, match="different cluster slots"):
        PolicySet(client, apart)
    PolicySet(client, apart, check_slots=False)
    with pytest.raises(TypeError, match="not a Policy"):
        PolicySet(client, [MINUTE, ("hour", "k", 1, 1)])  # type: ignore[list-item]
    assert client.sent == []


# On a server.


def _mgcra_calls(client: redis.Redis) -> int:
    stats: dict[str, dict[str, Any]] = client.info("commandstats")  # type: ignore[assignment]
    return int(stats.get("cmdstat_goblin.mgcra", {}).get("calls", 0))


def _stored(client: redis.Redis) -> dict[bytes, bytes | None]:
    keys: list[bytes] = client.keys("*")  # type: ignore[assignment]
    return {k: client.get(k) for k in sorted(keys)}  # type: ignore[misc]


def test_a_first_hit(server: redis.Redis) -> None:
    limits = PolicySet(
        server,
        [Policy("second", key("u", "s"), limit=10, period=1), Policy("hour", key("u", "h"), limit=1000, period=3600)],
    )
    result = limits.hit()
    assert (result.allowed, result.retry_after) == (True, None)
    assert _fields(result) == [("second", False, 10, 9, None, 1), ("hour", False, 1000, 999, None, 4)]
    assert headers(result) == {
        "RateLimit-Policy": '"second";q=10;w=1, "hour";q=1000;w=3600',
        "RateLimit": '"second";r=9;t=1, "hour";r=999;t=4',
    }
    assert list(_stored(server)) == [b"{u}:h", b"{u}:s"]
    assert _mgcra_calls(server) == 1


def test_all_or_nothing(server: redis.Redis) -> None:
    limits = PolicySet(server, [MINUTE, HOUR])
    for sent in range(1, 4):
        result = limits.hit()
        assert _fields(result) == [
            ("minute", False, 3, 3 - sent, None, 20 * sent),
            ("hour", False, 100, 100 - sent, None, 36 * sent),
        ]
    before = _stored(server)
    refused = limits.hit()
    assert (refused.allowed, refused.retry_after, refused.never) == (False, 20, False)
    # The minute refuses; the hour would allow, and was not charged for it.
    assert _fields(refused) == [("minute", True, 3, 0, 20, 60), ("hour", False, 100, 97, None, 108)]
    assert _stored(server) == before
    assert headers(refused) == {
        "RateLimit-Policy": '"minute";q=3;w=60, "hour";q=100;w=3600',
        "RateLimit": '"minute";r=0;t=60, "hour";r=97;t=108',
        "Retry-After": "20",
    }
    assert _mgcra_calls(server) == 4


def test_a_cost_above_a_whole_quota_never_passes(server: redis.Redis) -> None:
    limits = PolicySet(server, [MINUTE, HOUR])
    result = limits.hit(cost=4)
    assert (result.allowed, result.retry_after, result.never) == (False, None, True)
    assert _fields(result) == [("minute", True, 3, 3, None, 0), ("hour", False, 100, 100, None, 0)]
    assert "Retry-After" not in headers(result)
    assert server.dbsize() == 0


def test_peek_writes_nothing(server: redis.Redis) -> None:
    limits = PolicySet(server, [MINUTE, HOUR])
    assert _fields(limits.peek(cost=0)) == [("minute", False, 3, 3, None, 0), ("hour", False, 100, 100, None, 0)]
    assert _fields(limits.peek()) == [("minute", False, 3, 2, None, 20), ("hour", False, 100, 99, None, 36)]
    assert server.dbsize() == 0
    limits.hit(cost=2)
    before = _stored(server)
    # What a hit of 1 would reply, then a hit of 2, refused.
    assert _fields(limits.peek()) == [("minute", False, 3, 0, None, 60), ("hour", False, 100, 97, None, 108)]
    refused = limits.peek(cost=2)
    assert (refused.allowed, refused.retry_after) == (False, 20)
    assert _fields(refused) == [("minute", True, 3, 1, 20, 40), ("hour", False, 100, 98, None, 72)]
    assert _stored(server) == before
    assert _fields(limits.hit()) == [("minute", False, 3, 0, None, 60), ("hour", False, 100, 97, None, 108)]


def test_refund_gives_back_never_beyond_full(server: redis.Redis) -> None:
    budget = Policy("tokens", key("team7", "day"), limit=10_000, period=86_400)  # one back every 8.64 s
    limits = PolicySet(server, [budget])
    assert _fields(limits.hit(cost=1000)) == [("tokens", False, 10_000, 9000, None, 8640)]
    # 750 of the 1,000 back: the reply is a peek at cost 1 (9,750 left, less the one it asks).
    assert _fields(limits.refund(750)) == [("tokens", False, 10_000, 9749, None, 2169)]
    assert _fields(limits.peek(cost=0)) == [("tokens", False, 10_000, 9750, None, 2160)]
    # More than was taken: full, and the key deleted (a missing key is a full bucket).
    assert _fields(limits.refund(1_000_000)) == [("tokens", False, 10_000, 9999, None, 9)]
    assert server.dbsize() == 0
    # A refund to a missing key leaves it missing: never more than full.
    assert _fields(limits.refund(5)) == [("tokens", False, 10_000, 9999, None, 9)]
    assert server.dbsize() == 0
    assert _fields(limits.hit(cost=10_000)) == [("tokens", False, 10_000, 0, None, 86_400)]


def test_a_key_shared_by_two_sets(server: redis.Redis) -> None:
    account = Policy("account", key("acme", "hour"), limit=5, period=3600)  # one back every 720 s
    alice = PolicySet(server, [Policy("user", key("acme", "alice"), limit=3, period=60), account])
    bob = PolicySet(server, [Policy("user", key("acme", "bob"), limit=3, period=60), account])
    assert _fields(alice.hit()) == [("user", False, 3, 2, None, 20), ("account", False, 5, 4, None, 720)]
    assert _fields(alice.hit()) == [("user", False, 3, 1, None, 40), ("account", False, 5, 3, None, 1440)]
    assert _fields(bob.hit(cost=3)) == [("user", False, 3, 0, None, 60), ("account", False, 5, 0, None, 3600)]
    # The account is spent: Alice, with one left of her own, is refused, and charged nothing.
    refused = alice.hit()
    assert (refused.allowed, refused.retry_after) == (False, 720)
    assert _fields(refused) == [("user", False, 3, 1, None, 40), ("account", True, 5, 0, 720, 3600)]
    # Bob gives two back to the account (and to his own key): Alice may go on.
    bob.refund(2)
    assert _fields(alice.hit()) == [("user", False, 3, 0, None, 60), ("account", False, 5, 1, None, 2880)]


def test_the_servers_errors_are_response_errors(server: redis.Redis) -> None:
    server.rpush("{e}:list", "x")
    server.set("{e}:text", "not a tat")
    server.set("{e}:negative", "-5")
    for name, error in [
        ("list", "WRONGTYPE Operation against a key holding the wrong kind of value"),
        ("text", "Invalid TaT value"),
        ("negative", "Invalid negative TaT value"),
    ]:
        limits = PolicySet(
            server,
            [Policy("fresh", key("e", "fresh"), limit=5, period=60), Policy(name, key("e", name), limit=5, period=60)],
        )
        with pytest.raises(redis.ResponseError) as raised:
            limits.hit()
        assert str(raised.value) == error
    overflow = PolicySet(server, [Policy("huge", key("e", "huge"), limit=1, period=9e11, tokens_per_period=1)])
    with pytest.raises(redis.ResponseError, match="GCRA limiting uses microsecond accuracy"):
        overflow.hit(cost=2**62)
    assert server.exists("{e}:fresh", "{e}:huge") == 0  # a bad key leaves the others untouched


BAD_CALLS: list[tuple[str, Any, type[Exception]]] = [
    ("hit 0", lambda s: s.hit(0), ValueError),
    ("hit -1", lambda s: s.hit(-1), ValueError),
    ("hit True", lambda s: s.hit(True), TypeError),
    ("hit 1.0", lambda s: s.hit(1.0), TypeError),
    ("hit 2**63", lambda s: s.hit(2**63), ValueError),
    ("peek -1", lambda s: s.peek(-1), ValueError),
    ("peek text", lambda s: s.peek("1"), TypeError),
    ("refund 0", lambda s: s.refund(0), ValueError),
    ("refund -5", lambda s: s.refund(-5), ValueError),
]


@pytest.mark.parametrize(("what", "call", "error"), BAD_CALLS, ids=[what for what, _, _ in BAD_CALLS])
def test_bad_calls_send_nothing(server: redis.Redis, what: str, call: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"cost|tokens"):
        call(PolicySet(server, [MINUTE, HOUR]))
    assert _mgcra_calls(server) == 0
    assert server.dbsize() == 0


def test_asyncio(server: redis.Redis) -> None:
    async def run() -> None:
        client = connect_async()
        try:
            limits = AsyncPolicySet(client, [MINUTE, HOUR])
            assert _fields(await limits.hit(cost=3)) == [
                ("minute", False, 3, 0, None, 60),
                ("hour", False, 100, 97, None, 108),
            ]
            refused = await limits.peek()
            assert (refused.allowed, refused.retry_after) == (False, 20)
            assert _fields(await limits.refund(1)) == [
                ("minute", False, 3, 0, None, 60),
                ("hour", False, 100, 97, None, 108),
            ]
            assert _fields(await limits.peek(cost=0)) == [
                ("minute", False, 3, 1, None, 40),
                ("hour", False, 100, 98, None, 72),
            ]
            with pytest.raises(ValueError, match="cost"):
                await limits.hit(0)
        finally:
            await client.aclose()

    asyncio.run(run())
    assert _mgcra_calls(server) == 4


# CL.THROTTLE, redis-cell's command (Goblin's stand-in on a server without it).

#: redis-cell's README: 16 at once, then 30 a minute (one every 2 s).
README = Policy.from_burst("api", "user123", max_burst=15, tokens_per_period=30, period=60)


def _throttle_calls(client: redis.Redis) -> int:
    stats: dict[str, dict[str, Any]] = client.info("commandstats")  # type: ignore[assignment]
    return int(stats.get("cmdstat_cl.throttle", {}).get("calls", 0))


def test_a_throttle_answers_as_redis_cell(server: redis.Redis) -> None:
    throttle = Throttle(server, README)
    first = throttle.hit()
    assert (first.allowed, first.retry_after) == (True, None)
    assert _fields(first) == [("api", False, 16, 15, None, 2)]
    for remaining in range(14, -1, -1):
        assert _fields(throttle.hit())[0][3] == remaining
    refused = throttle.hit()
    assert (refused.allowed, refused.retry_after, refused.never) == (False, 2, False)
    assert _fields(refused) == [("api", True, 16, 0, 2, 32)]
    assert headers(refused) == {
        "RateLimit-Policy": '"api";q=16;w=32',
        "RateLimit": '"api";r=0;t=32',
        "Retry-After": "2",
    }
    # redis-cell's state: the TAT in nanoseconds, expiring with it.
    stored: bytes = server.get("user123")  # type: ignore[assignment]
    assert stored.isdigit(), stored
    assert int(stored) // 1_000_000 == server.pexpiretime("user123")
    # More than the whole quota never passes; a quantity of 0 takes nothing.
    assert (throttle.hit(17).never, _fields(throttle.hit(0))[0][3]) == (True, 0)
    assert _throttle_calls(server) == 19


def test_a_throttle_checks_before_sending(server: redis.Redis) -> None:
    with pytest.raises(TypeError, match="whole number of seconds"):
        Throttle(server, Policy("tenths", "k", limit=3, period=0.5))
    with pytest.raises(TypeError, match="not a Policy"):
        Throttle(server, ("api", "k", 3, 1))  # type: ignore[arg-type]
    throttle = Throttle(server, README)
    with pytest.raises(ValueError, match="quantity"):
        throttle.hit(-1)
    with pytest.raises(TypeError, match="quantity"):
        throttle.hit(1.5)  # type: ignore[arg-type]
    assert _throttle_calls(server) == 0
    assert server.dbsize() == 0


def test_a_throttle_on_asyncio(server: redis.Redis) -> None:
    async def run() -> None:
        client = connect_async()
        try:
            throttle = AsyncThrottle(client, README)
            assert _fields(await throttle.hit(16)) == [("api", False, 16, 0, None, 32)]
            refused = await throttle.hit()
            assert (refused.allowed, refused.retry_after) == (False, 2)
        finally:
            await client.aclose()

    asyncio.run(run())
    assert _throttle_calls(server) == 2


def test_the_docs_snippet_runs(server: redis.Redis) -> None:
    """docs/python.md's snippet of goblin_redis.ratelimit, as written, on this server."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text()
    after = page.split("\n## Sets of limits and the IETF RateLimit fields: `goblin_redis.ratelimit`\n", 1)[1]
    snippet = after.split("```python\n", 1)[1].split("```", 1)[0]
    assert snippet.count("redis.Redis()") == 1, snippet
    scope: dict[str, Any] = {}
    host, port = host_port(SERVER)
    exec(snippet.replace("redis.Redis()", f"redis.Redis(host={host!r}, port={port})"), scope)
    assert scope["settled"].allowed
    assert _mgcra_calls(server) == 4


# A server without Goblin: a GoblinModuleError from every call, MODULE LIST once per client.


def test_a_server_without_goblin_is_a_clear_error(bare: redis.Redis) -> None:
    limits = PolicySet(bare, [MINUTE, HOUR])
    calls: list[Callable[[int], Result]] = [limits.hit, limits.peek, limits.refund]
    for call in calls:
        with pytest.raises(goblin_redis.GoblinModuleError, match="MODULE LOAD"):
            call(1)

    async def run() -> None:
        client: Any = connect_async(BARE)
        await client.ping()
        bare.config_resetstat()
        limits = AsyncPolicySet(client, [MINUTE, HOUR])
        awaited: list[Callable[[int], Awaitable[Result]]] = [limits.hit, limits.peek, limits.refund]
        for call in awaited:
            with pytest.raises(goblin_redis.GoblinModuleError, match="MODULE LOAD"):
                await call(1)
        await client.aclose()

    asyncio.run(run())
    # Only MODULE LIST reached it (no GOBLIN.MGCRA: no error reply), asked again while it fails.
    stats: dict[str, Any] = bare.info("commandstats")  # type: ignore[assignment]
    assert int(stats["cmdstat_module|list"]["calls"]) == 3
    assert bare.info("errorstats") == {}


def test_the_module_is_asked_for_once_per_client(server: redis.Redis) -> None:
    def module_lists() -> int:
        stats: dict[str, Any] = server.info("commandstats")  # type: ignore[assignment]
        return int(stats.get("cmdstat_module|list", {}).get("calls", 0))

    for protocol in (2, 3):
        client = connect(protocol=protocol, decode_responses=protocol == 3)
        before = module_lists()
        for _ in range(3):
            limits = PolicySet(client, [MINUTE, HOUR])
            limits.hit()
            limits.peek()
            limits.refund(1)
        assert module_lists() - before == 1, protocol
        client.close()

    async def run() -> None:
        client = connect_async()
        for _ in range(3):
            await AsyncPolicySet(client, [MINUTE, HOUR]).hit()
        await client.aclose()

    before = module_lists()
    asyncio.run(run())
    assert module_lists() - before == 1
    assert _mgcra_calls(server) == 2 * 3 * 3 + 3
