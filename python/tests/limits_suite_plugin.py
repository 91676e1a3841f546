"""A pytest plugin that runs limits' own, unmodified test suite (and its benchmarks) against the
Goblin storages of ``goblin_redis.limits``, on servers the harness started on loopback.

Load it with ``-p limits_suite_plugin`` (this folder on ``PYTHONPATH``) from the root of
limits' unpacked sdist. It:

1. adds Goblin's storages to the suite's own storage parametrization, wherever the suite runs
   its Redis storage: ``goblin://`` where it runs ``redis://``, ``async+goblin://`` (once on
   coredis, once on redis-py) where it runs ``async+redis://``, and the cluster twins where it
   runs ``redis+cluster://`` and ``async+redis+cluster://`` (``pytest_generate_tests``, tryfirst:
   the suite's parametrize marks hold lists, or live views of its ``ALL_STORAGES`` dicts, which
   are extended in place before pytest expands them);
2. replaces the suite's ``host_ip_env`` (which learns the host's IP by a UDP socket towards a
   private address) and ``docker_services`` (which runs docker compose) inside the suite's
   conftest modules, before pytest reads their fixtures, and the benchmarks' session fixture
   ``get_storage_info``; a test that needs a service the harness does not provide is skipped;
3. refuses, with an audit hook, any connection to an address outside loopback;
4. accepts the ``-K`` (``--keepalive``) of the suite's ``addopts`` without lovely-pytest-docker,
   and registers the ``goblin`` mark (every added parameter carries it: ``-m goblin``);
5. prints, at the end, one line per added parameter:
   ``goblin-suite: <id> passed=N failed=N skipped=N errors=N reruns=N``.

Configuration, from the environment (every address must be loopback):

- ``GOBLIN_SUITE_SERVER``: ``host:port`` of one server with Goblin loaded;
- ``GOBLIN_SUITE_CLUSTER``: ``host:port,host:port,...`` of a cluster's primaries;
- ``GOBLIN_SUITE_SERVICES``: ``name=host:port,...``, the suite's docker-compose services the
  harness provides itself (the benchmark: ``redis-basic=127.0.0.1:7379``, where the suite's own
  ``redis://`` storage expects its server), so that the suite's own parameters run too.

At least one of the first two. Nothing of the sdist is edited.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import sys
import types
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis
import redis.cluster
from pytest_lazy_fixtures import lf

import goblin_redis.limits as goblin

MARK = "goblin"


def _loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # any other name would need DNS


def _hostport(spec: str, variable: str) -> tuple[str, int]:
    host, _, port = spec.strip().rpartition(":")
    host = host.strip("[]")
    if not _loopback_host(host):
        raise pytest.UsageError(f"{variable}: {host!r} is not a loopback address")
    return host, int(port)


def _services(spec: str) -> dict[str, tuple[str, int]]:
    pairs = (item.partition("=") for item in spec.split(",") if item.strip())
    return {name.strip(): _hostport(address, "GOBLIN_SUITE_SERVICES") for name, _, address in pairs}


SERVER = [_hostport(s, "GOBLIN_SUITE_SERVER") for s in os.environ.get("GOBLIN_SUITE_SERVER", "").split(",") if s]
CLUSTER = [_hostport(s, "GOBLIN_SUITE_CLUSTER") for s in os.environ.get("GOBLIN_SUITE_CLUSTER", "").split(",") if s]
SERVICES = _services(os.environ.get("GOBLIN_SUITE_SERVICES", ""))


# ---------------------------------------------------------------------------- loopback only
def _loopback_address(address: object) -> bool:
    if isinstance(address, (str, bytes)):  # a unix socket's path
        return True
    if not isinstance(address, tuple) or not address:
        return True
    host = address[0]
    if isinstance(host, bytes):
        host = host.decode()
    return isinstance(host, str) and _loopback_host(host)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg") and len(args) >= 2:
        address = args[1] if event == "socket.sendmsg" else args[-1]
        if not _loopback_address(address):
            raise PermissionError(f"limits_suite_plugin: {event} to {address!r} refused (loopback only)")


sys.addaudithook(_audit)


# ----------------------------------------------------------------------- options and marks
@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """The sdist's ``addopts`` hold lovely-pytest-docker's ``-K``: accept it without that
    plugin (which, installed, already owns the option: then this is a no-op)."""
    with contextlib.suppress(ValueError):
        parser.addoption("--keepalive", "-K", action="store_true", default=False, help="(ignored: no docker)")


def pytest_configure(config: pytest.Config) -> None:
    if not SERVER and not CLUSTER:
        raise pytest.UsageError("limits_suite_plugin: set GOBLIN_SUITE_SERVER and/or GOBLIN_SUITE_CLUSTER")
    config.addinivalue_line("markers", f"{MARK}: a Goblin storage added by limits_suite_plugin")
    if not config.pluginmanager.hasplugin("flaky"):
        # -p no:flaky (no reruns): the suite's flaky mark would be unknown, an error under
        # the suite's filterwarnings = error.
        config.addinivalue_line("markers", "flaky: (the flaky plugin is disabled: no reruns)")


def pytest_report_header(config: pytest.Config) -> list[str]:
    import limits

    return [
        f"limits_suite_plugin: limits {limits.__version__} from {limits.__file__}",
        f"limits_suite_plugin: goblin_redis from {goblin.__file__}",
        f"limits_suite_plugin: server={SERVER or '-'} cluster={CLUSTER or '-'}",
    ]


# ---------------------------------------------------- the suite's docker fixtures, replaced
class NoDockerServices:
    """Stands in for lovely-pytest-docker's services: never runs docker. A service the harness
    provides (``GOBLIN_SUITE_SERVICES``) must answer on its address; any other skips the test
    that asks for it."""

    docker_ip = "127.0.0.1"

    def _require(self, service: str) -> int:
        if service not in SERVICES:
            pytest.skip(f"docker disabled: the harness provides no {service!r}")
        host, port = SERVICES[service]
        with socket.create_connection((host, port), timeout=5):
            pass
        return port

    def start(self, *services: str) -> None:
        for service in services:
            self._require(service)

    def wait_for_service(self, service: str, *args: Any, **kwargs: Any) -> int:
        return self._require(service)

    def port_for(self, service: str, port: int) -> int:
        return self._require(service)

    def stop(self, *services: str) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def execute(self, service: str, *cmd: str) -> None:
        raise RuntimeError("docker disabled")


def _replacements(module: types.ModuleType) -> dict[str, Callable[[], object]]:
    """Fixtures to put in place of the conftest's own, built per conftest module (and kept out
    of this module's globals, or pytest would register them as plugin fixtures too)."""

    @pytest.fixture(scope="session", name="host_ip_env")
    def host_ip_env() -> None:
        os.environ["HOST_IP"] = "127.0.0.1"

    @pytest.fixture(scope="session", name="docker_services")
    def docker_services() -> NoDockerServices:
        return NoDockerServices()

    @pytest.fixture(autouse=True, scope="session", name="get_storage_info")
    def get_storage_info() -> None:
        host, port = (SERVER or CLUSTER)[0]
        client = redis.Redis(host=host, port=port)
        module.STORAGE_INFO["redis"] = client.info()
        client.close()

    return {"host_ip_env": host_ip_env, "docker_services": docker_services, "get_storage_info": get_storage_info}


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin: object, plugin_name: str | None, manager: pytest.PytestPluginManager) -> None:
    """A conftest module is registered before pytest reads its fixtures (its FixtureManager's
    own hook runs after this tryfirst one, or replays this historic hook later): swap the
    fixtures in the module itself, so they keep the conftest's precedence."""
    if not (plugin_name or "").endswith("conftest.py") or not isinstance(plugin, types.ModuleType):
        return
    for name, fixture in _replacements(plugin).items():
        if name in vars(plugin):
            setattr(plugin, name, fixture)


# ------------------------------------------------------------------ the storages' fixtures
@pytest.fixture(scope="session")
def _goblin_server_client() -> Iterator[redis.Redis]:
    if not SERVER:
        pytest.skip("GOBLIN_SUITE_SERVER is not set")
    host, port = SERVER[0]
    client = redis.Redis(host=host, port=port)
    yield client
    client.close()


@pytest.fixture
def goblin_server(_goblin_server_client: redis.Redis) -> redis.Redis:
    """Each test on an empty server, as the suite's own ``redis_basic`` fixture does."""
    _goblin_server_client.flushall()
    return _goblin_server_client


@pytest.fixture(scope="session")
def _goblin_cluster_client() -> Iterator[redis.cluster.RedisCluster]:
    if not CLUSTER:
        pytest.skip("GOBLIN_SUITE_CLUSTER is not set")
    nodes = [redis.cluster.ClusterNode(h, p) for h, p in CLUSTER]  # type: ignore[no-untyped-call]
    client = redis.cluster.RedisCluster(startup_nodes=nodes)
    yield client
    client.close()


@pytest.fixture
def goblin_cluster(_goblin_cluster_client: redis.cluster.RedisCluster) -> redis.cluster.RedisCluster:
    _goblin_cluster_client.flushall()
    return _goblin_cluster_client


# ------------------------------------------------------------------------ the parameters
@dataclass(frozen=True)
class Param:
    id: str
    uri: str
    args: dict[str, str]
    storage: type
    fixture: str
    #: the upstream scheme next to which this one runs
    beside: str


def _params() -> list[Param]:
    out: list[Param] = []
    if SERVER:
        at = ",".join(f"{h}:{p}" for h, p in SERVER[:1])
        out.append(Param("goblin", f"goblin://{at}", {}, goblin.GoblinStorage, "goblin_server", "redis"))
        for impl in ("coredis", "redispy"):
            out.append(
                Param(
                    f"goblin-{impl}",
                    f"async+goblin://{at}",
                    {"implementation": impl},
                    goblin.AsyncGoblinStorage,
                    "goblin_server",
                    "async+redis",
                )
            )
    if CLUSTER:
        nodes = ",".join(f"{h}:{p}" for h, p in CLUSTER)
        out.append(
            Param(
                "goblin-cluster",
                f"goblin+cluster://{nodes}/",
                {},
                goblin.GoblinClusterStorage,
                "goblin_cluster",
                "redis+cluster",
            )
        )
        for impl in ("coredis", "redispy"):
            out.append(
                Param(
                    f"goblin-cluster-{impl}",
                    f"async+goblin+cluster://{nodes}/",
                    {"implementation": impl},
                    goblin.AsyncGoblinClusterStorage,
                    "goblin_cluster",
                    "async+redis+cluster",
                )
            )
    return out


PARAMS = _params()
IDS = {param.id for param in PARAMS}


def _pytest_param(param: Param, concrete: bool) -> Any:
    values = (
        (param.uri, param.args, param.storage, lf(param.fixture))
        if concrete
        else (param.uri, param.args, lf(param.fixture))
    )
    return pytest.param(*values, marks=[getattr(pytest.mark, MARK)], id=param.id)


def _scheme(value: object) -> str:
    values = getattr(value, "values", value)
    if isinstance(values, (tuple, list)) and values and isinstance(values[0], str):
        return urllib.parse.urlparse(values[0]).scheme
    return ""


def _wanted(existing: list[Any], concrete: bool) -> list[Any]:
    """Ours, for a parameter list that holds upstream's Redis storages."""
    schemes = {_scheme(p) for p in existing}
    have = {getattr(p, "id", None) for p in existing}
    return [_pytest_param(p, concrete) for p in PARAMS if p.beside in schemes and p.id not in have]


def _extend_all_storages() -> None:
    """``tests.utils``' ``all_storage``, ``sliding_window_counter_storage`` and their async
    twins parametrize over live ``dict.values()`` views of ``ALL_STORAGES(_ASYNC)``: adding
    keys to those dicts reaches them."""
    utils = sys.modules.get("tests.utils")
    if utils is None or getattr(utils, "_goblin_extended", False):
        return
    for storages in (utils.ALL_STORAGES, utils.ALL_STORAGES_ASYNC):
        for p in _wanted(list(storages.values()), concrete=False):
            storages[p.id] = p
    utils._goblin_extended = True  # type: ignore[attr-defined]


ARGNAMES = {("uri", "args", "fixture"): False, ("uri", "args", "expected_instance", "fixture"): True}


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    _extend_all_storages()
    for mark in metafunc.definition.iter_markers("parametrize"):
        if len(mark.args) < 2:
            continue
        names = mark.args[0]
        names = tuple(n.strip() for n in names.split(",")) if isinstance(names, str) else tuple(names)
        if names not in ARGNAMES:
            continue
        values = mark.args[1]
        if type(values).__name__ == "dict_values":
            continue  # the live views: _extend_all_storages
        if not isinstance(values, list):
            raise pytest.UsageError(f"cannot extend the parametrization of {metafunc.definition.nodeid}: {mark!r}")
        values.extend(_wanted(values, ARGNAMES[names]))


# ------------------------------------------------------------------------------ the counts
_OF: dict[str, str] = {}
_OUTCOMES: dict[str, Counter[str]] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    by_uri = {(p.uri, p.args.get("implementation")): p.id for p in PARAMS}
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or "uri" not in callspec.params:
            continue
        args = callspec.params.get("args") or {}
        found = by_uri.get((callspec.params["uri"], args.get("implementation")))
        if found is not None:
            _OF[item.nodeid] = found


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    param = _OF.get(report.nodeid)
    if param is None:
        return
    counts = _OUTCOMES.setdefault(report.nodeid, Counter())
    if report.when == "call":
        counts["calls"] += 1
        counts["outcome:" + report.outcome] = 1  # the last call's outcome
        for other in ("passed", "failed", "skipped"):
            if other != report.outcome:
                counts.pop("outcome:" + other, None)
    elif report.outcome == "failed":
        counts["error"] = 1
    elif report.outcome == "skipped":
        counts["outcome:skipped"] = 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    totals: dict[str, Counter[str]] = {p.id: Counter() for p in PARAMS}
    for nodeid, counts in _OUTCOMES.items():
        total = totals[_OF[nodeid]]
        if counts.get("error"):
            total["errors"] += 1
        elif counts.get("outcome:failed"):
            total["failed"] += 1
        elif counts.get("outcome:passed"):
            total["passed"] += 1
        elif counts.get("outcome:skipped"):
            total["skipped"] += 1
        total["reruns"] += max(0, counts.get("calls", 0) - 1)
    for param in PARAMS:
        if param.id in {_OF[n] for n in _OUTCOMES}:
            t = totals[param.id]
            terminalreporter.write_line(
                f"goblin-suite: {param.id} passed={t['passed']} failed={t['failed']} "
                f"skipped={t['skipped']} errors={t['errors']} reruns={t['reruns']}"
            )


__all__ = ["IDS", "MARK", "NoDockerServices"]
