"""The FastAPI application: ``create_app(settings)`` wires the lifespan, middleware, error handlers and routers."""

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from sqlalchemy.exc import DBAPIError, IntegrityError
from starlette.exceptions import HTTPException as StarletteHTTPException

from memlet import __version__
from memlet.api.middleware import BodyLimitMiddleware, PasswordAuthMiddleware, TrailingSlashMiddleware
from memlet.api.v1 import build_v1_router
from memlet.bootstrap import ensure_defaults
from memlet.config import Settings
from memlet.db.engine import create_engine, create_sessionmaker
from memlet.errors import MemletError
from memlet.log import RequestIdMiddleware, configure_logging, get_logger, log_fields, request_id_var

log = get_logger("app")

StartupHook = Callable[[FastAPI], Awaitable[None]]
# Domains that need rows or clients at start-up register here (e.g. base tools); run in order after the defaults.
STARTUP_HOOKS: list[StartupHook] = []


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: Settings = app.state.settings
    if not settings.pg_uri:
        raise RuntimeError("create_app needs settings.pg_uri; `memlet server` starts the embedded Postgres for you")
    engine = create_engine(settings.pg_uri, settings)
    app.state.engine = engine
    app.state.sessionmaker = create_sessionmaker(engine)
    async with app.state.sessionmaker() as session, session.begin():
        await ensure_defaults(session)
    for hook in STARTUP_HOOKS:
        await hook(app)
    try:
        yield
    finally:
        await engine.dispose()


def _error_response(status: int, body: Mapping[str, object], headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse(status_code=status, content=body, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(MemletError)
    async def memlet_error(_: Request, exc: MemletError) -> JSONResponse:
        status = getattr(exc, "http_status", exc.status_code)
        if status >= 500:
            log.error("server error", exc_info=exc, extra=log_fields(error=exc.message))
        return _error_response(status, exc.body(), exc.headers())

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        # Letta puts the error list's string form in ``detail`` (a string, not a list) plus an empty trace id.
        errors = [{k: v for k, v in e.items() if k in ("type", "loc", "msg", "input")} for e in exc.errors()]
        return _error_response(422, {"trace_id": "", "detail": str(errors)})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error_response(exc.status_code, {"detail": exc.detail}, exc.headers)

    @app.exception_handler(IntegrityError)
    async def integrity_error(_: Request, exc: IntegrityError) -> JSONResponse:
        return _error_response(409, {"detail": f"Conflict: {exc.orig}"})

    @app.exception_handler(DBAPIError)
    async def db_error(_: Request, exc: DBAPIError) -> JSONResponse:
        log.error("database error", exc_info=exc)
        return _error_response(503, {"detail": "The database is unavailable; try again"}, {"Retry-After": "1"})

    @app.exception_handler(Exception)
    async def unhandled(_: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error (a bug)", exc_info=exc, extra=log_fields(request_id=request_id_var.get()))
        return _error_response(500, {"detail": "An unknown error occurred"})


def create_app(settings: Settings) -> FastAPI:
    configure_logging(settings.log_level)
    app = FastAPI(
        title="memlet",
        version=__version__,
        description="A maintained, wire-compatible server for the Letta (MemGPT) V1 REST API.",
        lifespan=lifespan,
        redirect_slashes=False,
    )
    app.state.settings = settings
    app.include_router(build_v1_router())

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/docs")

    install_error_handlers(app)
    # Outermost first: request id, then size limit, auth, slash tolerance.
    app.add_middleware(TrailingSlashMiddleware)
    if settings.password:
        app.add_middleware(PasswordAuthMiddleware, password=settings.password)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(RequestIdMiddleware)
    return app


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory`` / multi-worker mode: each worker reads the settings the CLI exported."""
    return create_app(Settings())
