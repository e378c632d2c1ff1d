"""Prometheus metrics: named metric objects, tiny recording helpers (one per request too) and `/metrics`.

    memlet_http_requests_total{method,route,status}         requests by route template (never the raw path)
    memlet_http_request_duration_seconds{method,route}      until the last byte of the response
    memlet_runs_total{status,stop_reason}                   runs the loop finished
    memlet_llm_calls_total{provider,outcome}                chat calls by endpoint type (outcome: ok or an error type)
    memlet_llm_call_duration_seconds{provider}              whole call, retries and streaming included
    memlet_tool_executions_total{tool_type,status}          built-in and sandboxed tool calls
    memlet_tool_execution_duration_seconds{tool_type}
    memlet_agent_lock_wait_seconds{outcome}                 time waiting for the per-agent request lock
    memlet_db_pool_connections{state}                       checked_out / size / overflow, read at scrape time

Recording is a label lookup and an increment (a few microseconds). With several workers, set the environment
variable PROMETHEUS_MULTIPROC_DIR to an empty directory shared by the workers: counters and histograms are then
summed over all of them; the pool gauges always describe the worker that answered the scrape.
"""

import functools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from fastapi import FastAPI, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.types import Scope

from memlet.errors import LLMError

_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
_LLM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300)
_WAIT_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

HTTP_REQUESTS = Counter(
    "memlet_http_requests", "HTTP requests by route template and status", ["method", "route", "status"]
)
HTTP_LATENCY = Histogram(
    "memlet_http_request_duration_seconds", "HTTP request latency by route template", ["method", "route"]
)
RUNS = Counter("memlet_runs", "Agent runs finished, by status and stop reason", ["status", "stop_reason"])
LLM_CALLS = Counter("memlet_llm_calls", "LLM chat calls by provider endpoint type and outcome", ["provider", "outcome"])
LLM_LATENCY = Histogram(
    "memlet_llm_call_duration_seconds",
    "LLM chat call latency by provider endpoint type",
    ["provider"],
    buckets=_LLM_BUCKETS,
)
TOOL_EXECUTIONS = Counter("memlet_tool_executions", "Tool executions by tool type and status", ["tool_type", "status"])
TOOL_LATENCY = Histogram(
    "memlet_tool_execution_duration_seconds", "Tool execution latency by tool type", ["tool_type"], buckets=_LLM_BUCKETS
)
LOCK_WAIT = Histogram(
    "memlet_agent_lock_wait_seconds", "Time waiting for the per-agent request lock", ["outcome"], buckets=_WAIT_BUCKETS
)


def run_finished(status: str, stop_reason: str) -> None:
    RUNS.labels(status, stop_reason).inc()


def tool_executed(tool_type: str | None, success: bool, started: float) -> None:
    kind = tool_type or "unknown"
    TOOL_EXECUTIONS.labels(kind, "success" if success else "error").inc()
    TOOL_LATENCY.labels(kind).observe(time.perf_counter() - started)


def lock_waited(started: float, acquired: bool) -> None:
    LOCK_WAIT.labels("acquired" if acquired else "busy").observe(time.perf_counter() - started)


def llm_call(provider: str) -> "_LLMCall":
    """Counts and times one chat call: ``with llm_call(provider): ...``."""
    return _LLMCall(provider)


class _LLMCall:
    """A caller closing a stream early after the result (GeneratorExit) is a success; any other exception
    counts under its error type."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.started = time.perf_counter()

    def __enter__(self) -> "_LLMCall":
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None or issubclass(exc_type, GeneratorExit):
            outcome = "ok"
        elif isinstance(exc, LLMError):
            outcome = exc.error_type or "llm_error"
        else:
            outcome = exc_type.__name__
        LLM_CALLS.labels(self.provider, outcome).inc()
        LLM_LATENCY.labels(self.provider).observe(time.perf_counter() - self.started)


@contextmanager
def timed_lock_wait() -> Iterator[None]:
    """Times the body as a lock wait: acquired when it returns, busy when it raises."""
    started = time.perf_counter()
    try:
        yield
    except BaseException:
        lock_waited(started, acquired=False)
        raise
    lock_waited(started, acquired=True)


def record_request(scope: Scope, status: int, started: float) -> None:
    """Counts and times one HTTP request under its route template (``/v1/agents/{agent_id}``); `status` is the one
    it answered (500 when it failed before answering). Called by `memlet.api.edge` once the response is sent."""
    method = scope["method"] if scope["method"] in _METHODS else "other"
    count, latency = http_series(method, route_template(scope), status)
    count.inc()
    latency.observe(time.perf_counter() - started)


@functools.cache
def http_series(method: str, route: str, status: int) -> tuple[Counter, Histogram]:
    """The request counter and latency histogram of one (method, route template, status): ``labels()`` takes a
    lock and hashes the labels on every call. Bounded: route templates, not paths."""
    return HTTP_REQUESTS.labels(method, route, str(status)), HTTP_LATENCY.labels(method, route)


def route_template(scope: Scope) -> str:
    """The matched route's path template, e.g. ``/v1/agents/{agent_id}`` (the app's routes sit flat, each with
    its whole path: `memlet.routes.add_v1_routes`)."""
    template = getattr(scope.get("route"), "path_format", None)
    return template if isinstance(template, str) and template else "unmatched"


def _pool_metrics(engine: AsyncEngine | None) -> bytes:
    pool = engine.sync_engine.pool if engine is not None else None
    family = GaugeMetricFamily(
        "memlet_db_pool_connections", "Database pool connections (this worker)", labels=["state"]
    )
    for state, reader in (("checked_out", "checkedout"), ("size", "size"), ("overflow", "overflow")):
        value = getattr(pool, reader, None)
        if callable(value):
            family.add_metric([state], float(value()))
    registry = CollectorRegistry()
    registry.register(_Static(family))
    return generate_latest(registry)


class _Static:
    def __init__(self, family: GaugeMetricFamily) -> None:
        self.family = family

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield self.family


def render(engine: AsyncEngine | None, multiproc_dir: Path | None) -> bytes:
    """The Prometheus text exposition of every memlet metric (all workers' in multiprocess mode)."""
    if multiproc_dir is not None:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=str(multiproc_dir))  # type: ignore[no-untyped-call]
        body = generate_latest(registry)
    else:
        body = generate_latest(REGISTRY)
    return body + _pool_metrics(engine)


def install(app: FastAPI, multiproc_dir: Path | None) -> None:
    """Adds ``GET /metrics`` (behind the password, like every route not listed as open); the app's edge middleware
    records each request (`record_request`)."""

    @app.get("/metrics", include_in_schema=False)
    async def metrics(request: Request) -> Response:
        return Response(
            render(getattr(request.app.state, "engine", None), multiproc_dir), media_type=CONTENT_TYPE_LATEST
        )
