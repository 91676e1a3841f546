"""Sets of GCRA rate limits over ``GOBLIN.MGCRA``, redis-cell's ``CL.THROTTLE`` for one (a
:class:`Throttle`), and the IETF ``RateLimit`` fields.

A :class:`PolicySet` is several named :class:`Policy` objects (10 a second *and* 1,000 an
hour; an LLM's tokens per minute *and* per day) checked together in one atomic command, all or
nothing: a request is allowed only if every policy allows it, and then every policy is charged;
if any refuses, nothing is written. Each :meth:`~PolicySet.hit`, :meth:`~PolicySet.peek` and
:meth:`~PolicySet.refund` is exactly one ``GOBLIN.MGCRA`` call::

    import redis
    from goblin_redis.ratelimit import Policy, PolicySet, headers, key

    limits = PolicySet(redis.Redis(), [
        Policy("second", key("user42", "second"), limit=10, period=1),
        Policy("hour", key("user42", "hour"), limit=1000, period=3600),
    ])
    result = limits.hit()
    if not result.allowed:
        ...  # answer 429 with headers(result), which has Retry-After
    headers(result)  # {"RateLimit-Policy": '"second";q=10;w=1, "hour";q=1000;w=3600', ...}

The keys of one set must hash to one cluster slot (the server answers ``CROSSSLOT`` otherwise):
put them under one hash tag, as :func:`key` does (``{user42}:second``, ``{user42}:hour``). A
set checks this when it is made (``check_slots=False`` turns the check off, for one server).

Arguments are checked here before anything is sent (a :class:`ValueError` or
:class:`TypeError`, and no call). A server without Goblin, or with one older than this package,
is a :class:`goblin_redis.GoblinModuleError` at a set's first call (``MODULE LIST`` is
asked once per client). What only the server can know (a key holding another type, a
combination of numbers whose microseconds overflow) is the client's own error, redis-py's
``ResponseError``. No client library is imported here: any client with redis-py's
``execute_command`` serves (``redis.Redis``, ``redis.RedisCluster``, and their ``redis.asyncio``
twins for :class:`AsyncPolicySet`). The commands and their replies are
``goblin_redis._commands``'.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from . import _commands as commands
from ._commands import Plan, arun, run, send

__all__ = [
    "AsyncPolicySet",
    "AsyncThrottle",
    "Policy",
    "PolicySet",
    "PolicyState",
    "Result",
    "Throttle",
    "headers",
    "key",
    "key_slot",
    "ratelimit_field",
    "ratelimit_policy_field",
    "retry_after_field",
]

#: The largest integer a structured field carries (RFC 8941, 3.3.1: at most 15 digits).
SF_INTEGER_MAX = 999_999_999_999_999


class _Client(Protocol):
    def execute_command(self, *args: Any, **options: Any) -> Any: ...  # noqa: ANN401 (redis-py's signature)


class _AsyncClient(Protocol):
    def execute_command(self, *args: Any, **options: Any) -> Awaitable[Any]: ...  # noqa: ANN401 (redis-py's signature)


def _whole(value: object, what: str, least: int) -> int:
    """``value`` as a whole number of at least ``least``, as GOBLIN.MGCRA reads it (a bool or a
    float is a TypeError)."""
    return commands.whole(value, what, least, commands.I64_MAX, wrong_type=TypeError)


def _check_name(name: object) -> str:
    """A policy's name: printable ASCII (what an sf-string holds), not empty."""
    if not isinstance(name, str):
        raise TypeError(f"a policy's name must be a str, not {type(name).__name__}: {name!r}")
    if not name or any(not " " <= c <= "~" for c in name):
        raise ValueError(
            f"a policy's name must be printable ASCII (space to ~), not empty, to be an sf-string: {name!r}"
        )
    return name


def key(tag: str, *parts: str) -> str:
    """A key under the hash tag ``tag``: ``key("user42", "hour")`` is ``"{user42}:hour"``. Keys
    with one tag hash to one cluster slot, as the keys of one :class:`PolicySet` must."""
    if any(not isinstance(part, str) for part in (tag, *parts)):
        raise TypeError(f"a key's tag and parts must be str: {(tag, *parts)!r}")
    if not tag or "{" in tag or "}" in tag:
        raise ValueError(f"a hash tag must be a non-empty str without braces: {tag!r}")
    return ":".join(["{" + tag + "}", *parts])


def _crc16(data: bytes) -> int:
    """CRC-16/XMODEM, the cluster's key hash."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(name: str | bytes) -> int:
    """The cluster slot of a key, as ``CLUSTER KEYSLOT`` computes it: of the hash tag (the part
    between the first ``{`` and the next ``}``, if not empty), else of the whole key."""
    data = name.encode() if isinstance(name, str) else name
    start = data.find(b"{")
    if start >= 0:
        end = data.find(b"}", start + 1)
        if end > start + 1:
            data = data[start + 1 : end]
    return _crc16(data) % 16384


@dataclass(frozen=True, init=False)
class Policy:
    """One GCRA policy: ``limit`` requests at once (the whole quota), then ``tokens_per_period``
    come back every ``period`` seconds, spread evenly; ``tokens_per_period`` defaults to
    ``limit`` (``Policy("minute", k, limit=60, period=60)``: 60 a minute, one a second once
    the 60 are spent). GOBLIN.MGCRA's ``max_burst`` is ``limit - 1``
    (:meth:`from_burst` takes it as the command does). ``key`` holds the policy's state, a
    GOBLIN.GCRA TAT; one key may serve in several sets (an account's quota under each user's).
    """

    name: str
    key: str
    limit: int
    period: float
    tokens_per_period: int

    def __init__(self, name: str, key: str, limit: int, period: float, tokens_per_period: int | None = None) -> None:
        _check_name(name)
        if not isinstance(key, str):
            raise TypeError(f"policy {name!r}: its key must be a str, not {type(key).__name__}")
        _whole(limit, f"policy {name!r}: limit", 1)
        tokens = limit if tokens_per_period is None else tokens_per_period
        _whole(tokens, f"policy {name!r}: tokens_per_period", 1)
        commands.number(period, f"policy {name!r}: period", wrong_type=TypeError)
        if not (math.isfinite(period) and 0 < period < 1e12):
            raise ValueError(f"policy {name!r}: period must be > 0 and < 1e12 seconds, not {period!r}")
        for attribute, value in [
            ("name", name),
            ("key", key),
            ("limit", limit),
            ("period", period),
            ("tokens_per_period", tokens),
        ]:
            object.__setattr__(self, attribute, value)

    @classmethod
    def from_burst(cls, name: str, key: str, max_burst: int, tokens_per_period: int, period: float) -> Policy:
        """A policy from GOBLIN.GCRA's own arguments: ``max_burst + 1`` at once."""
        _whole(max_burst, f"policy {name!r}: max_burst", 0)
        return cls(name, key, max_burst + 1, period, tokens_per_period)

    @property
    def max_burst(self) -> int:
        return self.limit - 1

    @property
    def window(self) -> int:
        """The seconds an empty quota takes to be full again, rounded up:
        ``ceil(limit * period / tokens_per_period)`` (the ``w`` of ``RateLimit-Policy``), from
        the period's decimal form, so that ``period=0.1`` is a tenth exactly."""
        period = Fraction(commands.period_text(self.period))
        return math.ceil(Fraction(self.limit) * period / self.tokens_per_period)

    def args(self) -> list[commands.Arg]:
        """Its four arguments of GOBLIN.MGCRA: ``key max_burst tokens_per_period period``."""
        return list(commands.mgcra_policy(self.key, self.max_burst, self.tokens_per_period, self.period))


@dataclass(frozen=True)
class PolicyState:
    """One policy's fields of a reply, as GOBLIN.GCRA gives them. When the call was refused,
    they are from the policy's state as it stands (nothing was charged), and ``limited`` says
    whether this policy alone refuses."""

    policy: Policy
    limited: bool
    limit: int
    #: Requests of cost 1 still allowed right now.
    remaining: int
    #: Seconds (rounded up) until this request would pass this policy; None if it passes, or
    #: never will (it costs more than this policy's whole quota).
    retry_after: int | None
    #: Seconds (rounded up) until this policy's quota is full again.
    reset_after: int

    @property
    def name(self) -> str:
        return self.policy.name


@dataclass(frozen=True)
class Result:
    """What one GOBLIN.MGCRA call decided, and each policy's state, in the set's order."""

    allowed: bool
    #: Seconds until this request would pass every policy (the largest of the refusing
    #: policies'); None if allowed, or if it never will (see :attr:`never`).
    retry_after: int | None
    policies: tuple[PolicyState, ...] = field(default_factory=tuple)

    @property
    def never(self) -> bool:
        """Refused for good: it costs more than some refusing policy's whole quota."""
        return not self.allowed and self.retry_after is None

    def __getitem__(self, name: str) -> PolicyState:
        for state in self.policies:
            if state.name == name:
                return state
        raise KeyError(name)

    def __iter__(self) -> Iterator[PolicyState]:
        return iter(self.policies)

    def __len__(self) -> int:
        return len(self.policies)


def _seconds(value: int) -> int | None:
    return None if value < 0 else value


def _result(policies: Sequence[Policy], reply: object) -> Result:
    limited, retry_after, fields = commands.mgcra_reply(reply, len(policies))
    states = tuple(
        PolicyState(policy, state[0] == 1, state[1], state[2], _seconds(state[3]), state[4])
        for policy, state in zip(policies, fields, strict=True)
    )
    return Result(limited != 1, _seconds(retry_after) if limited == 1 else None, states)


class _Set:
    """What the sync and the async sets share: the policies, checked, and the command."""

    def __init__(self, policies: Iterable[Policy], *, check_slots: bool = True) -> None:
        self.policies: tuple[Policy, ...] = tuple(policies)
        if not self.policies:
            raise ValueError("a policy set needs at least one policy")
        for policy in self.policies:
            if not isinstance(policy, Policy):
                raise TypeError(f"not a Policy: {policy!r}")
        names = [p.name for p in self.policies]
        if len(set(names)) != len(names):
            raise ValueError(f"the policies' names must differ, to name them in a result and in headers: {names}")
        if check_slots and len({key_slot(p.key) for p in self.policies}) > 1:
            keys = [p.key for p in self.policies]
            raise ValueError(
                f"the keys {keys} hash to different cluster slots: put them under one hash tag "
                '(goblin_redis.ratelimit.key("user42", "hour") is "{user42}:hour"), '
                "or pass check_slots=False on a server that is not a cluster"
            )

    def _deciding(self, option: str | None, amount: object, what: str, least: int) -> Plan[Result]:
        """One GOBLIN.MGCRA call for ``amount`` (``what``: the cost, or the tokens refunded)."""
        cost = _whole(amount, what, least)
        command = commands.mgcra([policy.args() for policy in self.policies], cost, option)
        return _result(self.policies, (yield from send(command)))


class PolicySet(_Set):
    """Policies checked together, all or nothing, on a redis-py client (``redis.Redis`` or
    ``redis.RedisCluster``); each method is one GOBLIN.MGCRA call."""

    def __init__(self, client: _Client, policies: Iterable[Policy], *, check_slots: bool = True) -> None:
        super().__init__(policies, check_slots=check_slots)
        self.client = client

    def hit(self, cost: int = 1) -> Result:
        """Ask for ``cost`` (1 or more) in every policy: charged in all if all allow, else in none."""
        return run(self.client, self._deciding(None, cost, "cost", 1))

    def peek(self, cost: int = 1) -> Result:
        """What :meth:`hit` would reply, writing nothing; ``cost=0`` reads the state alone."""
        return run(self.client, self._deciding("PEEK", cost, "cost", 0))

    def refund(self, tokens: int) -> Result:
        """Give ``tokens`` (1 or more) back to every policy whose key exists, never beyond a full
        quota; the result is the policies as they then stand (a peek at cost 1)."""
        return run(self.client, self._deciding("REFUND", tokens, "tokens", 1))


class AsyncPolicySet(_Set):
    """:class:`PolicySet` on an asyncio client (``redis.asyncio.Redis`` or its cluster client)."""

    def __init__(self, client: _AsyncClient, policies: Iterable[Policy], *, check_slots: bool = True) -> None:
        super().__init__(policies, check_slots=check_slots)
        self.client = client

    async def hit(self, cost: int = 1) -> Result:
        """:meth:`PolicySet.hit`."""
        return await arun(self.client, self._deciding(None, cost, "cost", 1))

    async def peek(self, cost: int = 1) -> Result:
        """:meth:`PolicySet.peek`."""
        return await arun(self.client, self._deciding("PEEK", cost, "cost", 0))

    async def refund(self, tokens: int) -> Result:
        """:meth:`PolicySet.refund`."""
        return await arun(self.client, self._deciding("REFUND", tokens, "tokens", 1))


class _Throttle:
    """What the sync and the async throttles share: the policy, checked, and the command."""

    def __init__(self, policy: Policy) -> None:
        if not isinstance(policy, Policy):
            raise TypeError(f"not a Policy: {policy!r}")
        if isinstance(policy.period, bool) or not isinstance(policy.period, int):
            raise TypeError(
                f"policy {policy.name!r}: CL.THROTTLE's period is a whole number of seconds, not {policy.period!r}"
            )
        self.policy = policy

    def _hitting(self, quantity: object) -> Plan[Result]:
        """One CL.THROTTLE call for ``quantity``, its reply as a :class:`Result` of one policy."""
        amount = _whole(quantity, "quantity", 0)
        p = self.policy
        command = commands.cl_throttle(p.key, p.max_burst, p.tokens_per_period, int(p.period), amount)
        limited, limit, remaining, retry_after, reset_after = commands.policy_fields(
            (yield from send(command)), "CL.THROTTLE"
        )
        state = PolicyState(p, limited == 1, limit, remaining, _seconds(retry_after), reset_after)
        return Result(limited != 1, state.retry_after if limited == 1 else None, (state,))


class Throttle(_Throttle):
    """redis-cell's ``CL.THROTTLE`` for one policy, on a redis-py client: Goblin's stand-in where
    the server has no command of that name, the same keys and replies as redis-cell's. Each
    :meth:`hit` is one call, ``CL.THROTTLE key max_burst count_per_period period quantity`` with
    the policy's ``key``, :attr:`~Policy.max_burst`, ``tokens_per_period`` and ``period`` (a
    whole number of seconds), and its :class:`Result` is a :class:`PolicySet`'s of one policy:
    :func:`headers` serves it alike."""

    def __init__(self, client: _Client, policy: Policy) -> None:
        super().__init__(policy)
        self.client = client

    def hit(self, quantity: int = 1) -> Result:
        """Ask for ``quantity`` (0 or more): taken if allowed. A quantity of 0 takes nothing,
        and (as redis-cell) still stores the key's state with a fresh expiry."""
        return run(self.client, self._hitting(quantity))


class AsyncThrottle(_Throttle):
    """:class:`Throttle` on an asyncio client."""

    def __init__(self, client: _AsyncClient, policy: Policy) -> None:
        super().__init__(policy)
        self.client = client

    async def hit(self, quantity: int = 1) -> Result:
        """:meth:`Throttle.hit`."""
        return await arun(self.client, self._hitting(quantity))


# The IETF fields (draft-ietf-httpapi-ratelimit-headers-11): structured-field lists (RFC 8941)
# of items, each the policy's name as an sf-string with integer parameters.


def _sf_string(name: str) -> str:
    _check_name(name)
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _sf_integer(value: int, what: str) -> str:
    if not -SF_INTEGER_MAX <= value <= SF_INTEGER_MAX:
        raise ValueError(f"{what} {value} is beyond a structured field's integer (15 digits)")
    return str(value)


def ratelimit_policy_field(policies: Iterable[Policy] | Result) -> str:
    """``RateLimit-Policy``: each policy's quota ``q`` (its :attr:`~Policy.limit`, ``max_burst
    + 1``, what may come at once) and window ``w`` (:attr:`~Policy.window`, the seconds it
    takes to refill from empty): ``"second";q=10;w=1, "hour";q=1000;w=3600``."""
    if isinstance(policies, Result):
        policies = [state.policy for state in policies.policies]
    items = [f"{_sf_string(p.name)};q={_sf_integer(p.limit, 'q')};w={_sf_integer(p.window, 'w')}" for p in policies]
    if not items:
        raise ValueError("RateLimit-Policy is a non-empty list")
    return ", ".join(items)


def ratelimit_field(result: Result) -> str:
    """``RateLimit``: each policy's remaining quota ``r`` and the seconds ``t`` until it is full
    again (its ``reset_after``): ``"second";r=9;t=1, "hour";r=999;t=4``."""
    items = [
        f"{_sf_string(s.name)};r={_sf_integer(s.remaining, 'r')};t={_sf_integer(s.reset_after, 't')}"
        for s in result.policies
    ]
    if not items:
        raise ValueError("RateLimit is a non-empty list")
    return ", ".join(items)


def retry_after_field(result: Result) -> str | None:
    """``Retry-After`` (seconds) for a refused result; None if it was allowed, or if it can
    never pass (then no wait helps: answer without one)."""
    if result.allowed or result.retry_after is None:
        return None
    return str(result.retry_after)


def headers(result: Result) -> Mapping[str, str]:
    """The response's fields for ``result``: ``RateLimit-Policy`` and ``RateLimit``, and
    ``Retry-After`` when it was refused (and a wait would help)."""
    out = {"RateLimit-Policy": ratelimit_policy_field(result), "RateLimit": ratelimit_field(result)}
    retry_after = retry_after_field(result)
    if retry_after is not None:
        out["Retry-After"] = retry_after
    return out
