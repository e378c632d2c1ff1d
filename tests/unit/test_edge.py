"""What every request pays outside its handler, kept small (`bench/bench_http_overhead.py` measures it): one edge
layer instead of five middlewares, a Host check parsed once per Host value, and no request session for routes that
need only the actor."""

import uuid

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from memlet.api.deps import get_session
from memlet.api.edge import EdgeMiddleware
from memlet.api.middleware import foreign_host
from memlet.app import create_app
from memlet.config import Settings
from memlet.log import new_request_id


def _app() -> object:
    return create_app(Settings(_env_file=None, pg_uri="postgresql://unused/unused"))  # type: ignore[call-arg]


def _calls(dependant: Dependant) -> set[object]:
    found = {dependant.call}
    for sub in dependant.dependencies:
        found |= _calls(sub)
    return found


def _route(app: object, operation_id: str) -> APIRoute:
    routes = app.router.routes  # type: ignore[attr-defined]
    [route] = [r for r in routes if isinstance(r, APIRoute) and r.operation_id == operation_id]
    return route


def test_one_edge_layer() -> None:
    assert [m.cls for m in _app().user_middleware] == [EdgeMiddleware]  # type: ignore[attr-defined]


def test_the_actor_opens_no_request_session() -> None:
    """A send needs only the actor and its own sessions: a request session cost ~70 µs of CPU without a statement.
    The list of agents reads through its own autocommit session."""
    app = _app()
    for operation_id in ("send_message", "create_agent_message_stream", "list_agents"):
        assert get_session not in _calls(_route(app, operation_id).dependant), operation_id


def test_a_send_solves_two_dependencies() -> None:
    """FastAPI's work per dependency (~30 µs of CPU) was most of a send's cost outside its turn: the send routes
    resolve the loop's dependencies, the actor and the service in one (plus the input check every route has)."""
    from memlet.api.validators import check_request_input
    from memlet.turns.deps import get_send_service

    app = _app()
    for operation_id in ("send_message", "create_agent_message_stream", "create_agent_message_async"):
        route = _route(app, operation_id)
        assert _calls(route.dependant) == {route.endpoint, check_request_input, get_send_service}, operation_id


def test_request_ids_are_uuid4_hex() -> None:
    ids = {new_request_id() for _ in range(1000)}
    assert len(ids) == 1000
    for rid in ids:
        parsed = uuid.UUID(hex=rid)
        assert (parsed.hex, parsed.version, parsed.variant) == (rid, 4, uuid.RFC_4122)


def test_host_check_is_remembered_per_host() -> None:
    foreign_host.cache_clear()
    assert not foreign_host(b"localhost:8283") and not foreign_host(b"[::1]:80") and not foreign_host(b"127.8.9.10")
    assert foreign_host(b"evil.example") and foreign_host(b"127.0.0.1.nip.io")
    assert not foreign_host(b"localhost:8283")
    assert foreign_host.cache_info().hits == 1
    assert foreign_host.cache_info().maxsize is not None  # bounded: the caller picks the Host


def test_list_messages_resolves_the_actor_and_its_session_in_its_service() -> None:
    from memlet.api.validators import check_request_input
    from memlet.turns.deps import get_agent_message_reader

    route = _route(_app(), "list_messages")
    assert _calls(route.dependant) == {route.endpoint, check_request_input, get_agent_message_reader}


def test_a_named_user_is_looked_up_once_per_request() -> None:
    """Dependencies that resolve the actor themselves share the lookup with the route's own ``ActorDep``."""
    import asyncio
    from types import SimpleNamespace
    from typing import Any

    from memlet.api.deps import get_actor

    lookups: list[object] = []

    class Session:
        async def __aenter__(self) -> "Session":
            return self

        async def __aexit__(self, *_: object) -> None:
            return None

        async def scalar(self, statement: Any) -> str:
            lookups.append(statement)
            return "org-00000000-0000-4000-8000-000000000001"

    request: Any = SimpleNamespace(scope={}, app=SimpleNamespace(state=SimpleNamespace(sessionmaker=Session)))
    user = "user-00000000-0000-4000-8000-000000000002"

    async def twice() -> tuple[Any, Any]:
        return await get_actor(request, user), await get_actor(request, user)

    first, second = asyncio.run(twice())
    assert first == second and first.organization_id == "org-00000000-0000-4000-8000-000000000001"
    assert len(lookups) == 1
