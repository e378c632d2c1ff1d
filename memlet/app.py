"""The FastAPI application: ``create_app(settings)`` wires the lifespan, middleware, error handlers and routers."""

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from sqlalchemy.exc import DBAPIError, IntegrityError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware

from memlet import __version__, ids, metrics
from memlet.agents.json_cache import AgentJsonCache
from memlet.agents.system_message import rebuild_prompts
from memlet.api import openapi_doc, route_index
from memlet.api.edge import EdgeMiddleware
from memlet.api.validation_errors import validation_body
from memlet.bootstrap import ensure_defaults
from memlet.config import Settings
from memlet.crypto import settings_secrets
from memlet.db import errors as db_errors
from memlet.db.engine import create_engine, create_sessionmaker, create_turn_engine, warn_connection_budget
from memlet.errors import MemletError
from memlet.exposure import is_loopback_host, refuse_unsafe_exposure
from memlet.folders.parsing import ChildLimits
from memlet.folders.processing import FileProcessor
from memlet.gc_tuning import freeze_startup_objects
from memlet.groups.views import managed_groups
from memlet.hardening import make_undumpable
from memlet.log import (
    configure_logging,
    get_logger,
    log_fields,
    mask_library_logs,
    request_id_var,
)
from memlet.loop.deps import LoopDeps, default_llm_for
from memlet.loop.window_cache import WindowCache
from memlet.passages.embedder import Embedder
from memlet.passages.message_indexer import MessageIndexer
from memlet.providers.catalog import load_catalog
from memlet.routes import add_v1_routes
from memlet.sleeptime.lifecycle import SleeptimeLifecycle
from memlet.tool_exec.status import sandbox_status
from memlet.tools.bootstrap import upsert_base_tools
from memlet.turns.sleeptime_runs import SleeptimeRuns
from memlet.turns.worker import RunWorker

log = get_logger("app")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: Settings = app.state.settings
    if not settings.pg_uri:
        raise RuntimeError("create_app needs settings.pg_uri; `memlet server` starts the embedded Postgres for you")
    app.state.diagnostics = {"process_dumpable": not make_undumpable(), "tool_sandbox": await sandbox_status(settings)}
    mask_library_logs()  # uvicorn has configured its handlers by now
    engine = create_engine(settings.pg_uri, settings)
    app.state.engine = engine
    app.state.sessionmaker = create_sessionmaker(engine)
    # Turns hold their agent lock and do their DB work on an engine of their own, never the API's pool.
    app.state.turn_engine = turn_engine = create_turn_engine(settings.pg_uri, settings)
    async with app.state.sessionmaker() as session, session.begin():
        await ensure_defaults(session)
        # Letta's built-in tools exist in the default organization from the start, refreshed to this version.
        await upsert_base_tools(session, ids.DEFAULT_ORG_ID, ids.DEFAULT_USER_ID)
        await warn_connection_budget(session, settings)
    app.state.catalog = await load_catalog(settings)
    # One pool of LLM clients per app, so requests reuse their connections; closed only after the runs drained.
    app.state.llm_for = llm_clients = default_llm_for(settings, app.state.sessionmaker)
    app.state.embedder = embedder = Embedder(settings, app.state.sessionmaker)
    app.state.run_worker = worker = RunWorker(app.state.sessionmaker, turn_engine, settings)
    await worker.start()
    # Sleeptime: agent routes create and delete the sleeptime side through this hook; queued runs start here.
    app.state.sleeptime_lifecycle = SleeptimeLifecycle(app.state.catalog)
    # Agent responses read the group an agent manages (`managed_group`) through this hook.
    app.state.managed_groups = managed_groups
    # Listed agents' JSON, kept between list requests (checked against the rows' versions on every list).
    app.state.agent_json_cache = (
        AgentJsonCache(settings.agent_json_cache_mb * 1024 * 1024) if settings.agent_json_cache_mb else None
    )
    # In-context rows kept between turns, shared by every turn this process runs.
    app.state.window_cache = window_cache = (
        WindowCache(settings.context_cache_mb * 1024 * 1024) if settings.context_cache_mb else None
    )
    loop_deps = LoopDeps(
        app.state.sessionmaker,
        settings,
        llm_clients,
        turn_engine,
        worker.worker_id,
        embedder,
        window_cache=window_cache,
    )
    app.state.sleeptime_runs = sleeptime_runs = SleeptimeRuns(loop_deps, worker.turns)
    sleeptime_runs.start()
    # Uploads still pending, parsing or embedding when the server last stopped are processed again.
    # Lower domains (blocks, folders, files) rebuild agents' system messages through this hook.
    app.state.rebuild_prompts = rebuild_prompts
    app.state.file_processor = files = FileProcessor(
        app.state.sessionmaker,
        embedder,
        rebuild_prompts,
        settings.file_processing_concurrency,
        ChildLimits(settings.file_worker_memory_mb, settings.file_worker_timeout_s),
    )
    await files.recover()
    indexer = MessageIndexer(app.state.sessionmaker, embedder, settings.message_embedding_interval_s)
    if settings.embed_messages:
        indexer.start()
    if settings.gc_freeze:
        freeze_startup_objects(settings.gc_young_threshold)
    try:
        yield
    finally:
        await indexer.stop()
        await files.shutdown()
        await sleeptime_runs.stop()
        await worker.shutdown()
        await llm_clients.aclose()
        await embedder.aclose()
        await turn_engine.dispose()
        await engine.dispose()


BAD_DATA_DETAIL = (
    "INVALID_ARGUMENT: The request holds a value the database cannot store or compare "
    "(a number out of range, an invalid character, or too many values)"
)


class _SafeJSONResponse(JSONResponse):
    """Error bodies can echo the client's input; a lone surrogate in it must not turn a 4xx into a crash."""

    def render(self, content: object) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _error_response(status: int, body: Mapping[str, object], headers: Mapping[str, str] | None = None) -> JSONResponse:
    return _SafeJSONResponse(status_code=status, content=body, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(MemletError)
    async def memlet_error(_: Request, exc: MemletError) -> JSONResponse:
        status = getattr(exc, "http_status", exc.status_code)
        if status >= 500:
            log.error("server error", exc_info=exc, extra=log_fields(error=exc.message))
        return _error_response(status, exc.body(), exc.headers())

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error_response(422, validation_body(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error_response(exc.status_code, {"detail": exc.detail}, exc.headers)

    @app.exception_handler(IntegrityError)
    async def integrity_error(_: Request, exc: IntegrityError) -> JSONResponse:
        return _error_response(409, {"detail": f"Conflict: {exc.orig}"})

    @app.exception_handler(DBAPIError)
    async def db_error(_: Request, exc: DBAPIError) -> JSONResponse:
        return database_error_response(exc, db_errors.classify(exc))

    @app.exception_handler(Exception)
    async def unhandled(_: Request, exc: Exception) -> JSONResponse:
        if db_errors.is_database_outage(exc):
            return database_error_response(exc, "unavailable")
        log.error("unhandled error (a bug)", exc_info=exc, extra=log_fields(request_id=request_id_var.get()))
        return _error_response(500, {"detail": "An unknown error occurred"})


def database_error_response(exc: BaseException, kind: db_errors.Kind) -> JSONResponse:
    """503 + Retry-After only for an outage; the request's own bad data is a 400, anything else a 500."""
    # The exception text can hold the statement's parameters (user data, secrets): log its type and state only.
    fields = log_fields(error_type=type(exc).__name__, sqlstate=getattr(getattr(exc, "orig", None), "sqlstate", None))
    if kind == "bad_input":
        log.warning("database rejected the request's data", extra=fields)
        return _error_response(400, {"detail": BAD_DATA_DETAIL})
    if kind == "unavailable":
        log.error("database unavailable", extra=fields)
        return _error_response(503, {"detail": "The database is unavailable; try again"}, {"Retry-After": "1"})
    log.error("database error (a bug)", exc_info=exc, extra=log_fields(request_id=request_id_var.get()))
    return _error_response(500, {"detail": "An unknown error occurred"})


def create_app(settings: Settings) -> FastAPI:
    configure_logging(settings.log_level, settings_secrets(settings))
    refuse_unsafe_exposure(settings)
    app = FastAPI(
        title="memlet",
        version=__version__,
        description="A maintained, wire-compatible server for the Letta (MemGPT) V1 REST API.",
        lifespan=lifespan,
        redirect_slashes=False,
        # A JSON body needs a JSON content type, so a web page cannot post one without a CORS preflight.
        strict_content_type=True,
    )
    app.state.settings = settings
    openapi_doc.install(app)  # the schema is built in a child process (~20 MB the server then never holds)
    add_v1_routes(app.router)
    route_index.install(app.router)

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/docs")

    install_error_handlers(app)
    # One layer: request id, metrics, then Host check, size limit, auth, slash tolerance (`api/edge.py`).
    if settings.metrics_enabled:
        metrics.install(app, settings.prometheus_multiproc_dir)
    app.add_middleware(
        EdgeMiddleware,
        max_body_bytes=settings.max_body_bytes,
        loopback_only=is_loopback_host(settings.host),
        password=settings.password or None,
        metrics=settings.metrics_enabled,
    )
    origins = [origin.strip() for origin in settings.cors_origins.split(",") if origin.strip()]
    if origins:
        # Outside the edge layer, as Letta's: it answers a listed origin's preflight (which carries no credentials).
        app.add_middleware(
            CORSMiddleware, allow_origins=origins, allow_credentials=True, allow_methods=["*"], allow_headers=["*"]
        )
    return app


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory`` / multi-worker mode: each worker reads the settings the CLI exported."""
    return create_app(Settings())
