"""The flat route table (`routes.add_v1_routes`) is FastAPI's nested one, and the route index finds what the
router's own loop finds, trying only a few routes."""

import re
from typing import Any

import pytest
from fastapi import APIRouter, Depends, FastAPI
from fastapi.routing import APIRoute, iter_route_contexts
from starlette.routing import Match, Route

from memlet.api.route_index import RouteIndex
from memlet.api.validators import check_request_input
from memlet.app import create_app
from memlet.config import Settings
from memlet.routes import ROUTERS


@pytest.fixture(scope="module")
def app() -> FastAPI:
    return create_app(Settings(pg_uri="postgresql://unused/unused"))


def _nested(app: FastAPI) -> FastAPI:
    """The same routers as FastAPI's `include_router` nests them under /v1."""
    nested = FastAPI(title=app.title, version=app.version, description=app.description, strict_content_type=True)
    v1 = APIRouter(prefix="/v1", dependencies=[Depends(check_request_input)])
    for router in ROUTERS:
        v1.include_router(router)
    nested.include_router(v1)
    return nested


def _shape(route: Any) -> tuple[object, ...]:
    calls = [d.call for d in route.dependant.dependencies]
    return (
        route.path_format,
        sorted(route.methods),
        route.name,
        route.unique_id,
        route.status_code,
        route.response_model,
        route.response_class,
        route.include_in_schema,
        calls,
        route.body_field is not None,
    )


def _flat_v1(app: FastAPI) -> list[APIRoute]:
    return [r for r in app.router.routes if isinstance(r, APIRoute) and r.path.startswith("/v1/")]


def test_the_app_serves_every_route_flat_as_the_nested_table_does(app: FastAPI) -> None:
    nested = _nested(app)
    contexts = [c for c in iter_route_contexts(nested.router.routes) if (c.path or "").startswith("/v1/")]
    flat = _flat_v1(app)
    assert len(flat) == len(contexts) >= 224
    assert [_shape(r) for r in flat] == [_shape(c) for c in contexts]
    assert not any(type(r).__name__ == "_IncludedRouter" for r in app.router.routes)
    assert app.openapi() == nested.openapi()
    # The request-input check runs first on every v1 route, as the /v1 router's dependency did.
    assert all(r.dependant.dependencies[0].call is check_request_input for r in flat)


def _sample_path(route: Route) -> str:
    return re.sub(r"{[^}]+}", "x-1", route.path_format)


def _loop_match(routes: list[Any], scope: dict[str, Any]) -> Any:
    return next((r for r in routes if r.matches(scope)[0] == Match.FULL), None)


def _index_match(index: RouteIndex, routes: list[Any], scope: dict[str, Any]) -> tuple[Any, int]:
    tried = 0
    for position in index.candidates(scope["path"]):
        tried += 1
        if routes[position].matches(scope)[0] == Match.FULL:
            return routes[position], tried
    return None, tried


def test_the_index_picks_the_route_the_router_loop_picks(app: FastAPI) -> None:
    index = app.router.middleware_stack
    assert isinstance(index, RouteIndex)
    routes = app.router.routes
    paths = {_sample_path(r) for r in routes if isinstance(r, Route)}
    paths |= {p.rstrip("/") for p in paths} | {p + "/" for p in paths} | {"/v1/nothing", "/v1//agents", ""}
    paths |= {"/v1/agents/import", "/v1/messages/batches", "/v1/tools/mcp/servers", "/v1/agents/a/messages/x/y"}
    worst = 0
    for path in sorted(paths):
        for method in ("GET", "POST", "PATCH", "PUT", "DELETE"):
            scope = {"type": "http", "method": method, "path": path, "root_path": ""}
            found, tried = _index_match(index, routes, scope)
            assert found is _loop_match(routes, scope), (method, path)
            worst = max(worst, tried)
    assert worst <= 6  # the router's loop tries up to all 231


def test_a_send_finds_its_route_trying_one_or_two(app: FastAPI) -> None:
    index = app.router.middleware_stack
    assert isinstance(index, RouteIndex)
    scope = {"type": "http", "method": "POST", "path": "/v1/agents/agent-1/messages", "root_path": ""}
    found, tried = _index_match(index, app.router.routes, scope)
    assert found.path_format == "/v1/agents/{agent_id}/messages"
    assert tried <= 2
