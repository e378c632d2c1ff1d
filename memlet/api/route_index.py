"""Route lookup by path shape: the app's router tries only the routes a request's path could match.

Starlette tries every route in order until one matches fully (path and method), about 1.5 µs a route: with 231
routes a send to ``/v1/agents/{agent_id}/messages`` spent ~250 µs finding its route. `RouteIndex` sorts the routes
into a tree of path segments (a literal segment, or any segment for a parameter) once, so a request walks its own
segments to the two or three routes of the same shape, and tries those in the table's order with the route's own
``matches``. A route that can span segments (a ``{x:path}`` parameter) or is not a plain route is tried for every
request. The first full match is the one the router's own loop finds, since every route left out cannot match the
path; anything else (a 404, a 405, a wrong method) goes to the router unchanged, which answers it as before.
"""

from dataclasses import dataclass, field

from starlette.convertors import PathConvertor
from starlette.routing import BaseRoute, Match, Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send


@dataclass
class _Node:
    literal: dict[str, "_Node"] = field(default_factory=dict)
    param: "_Node | None" = None
    routes: list[int] = field(default_factory=list)  # positions in the route table of the routes ending here


def _segments(route: BaseRoute) -> list[str] | None:
    """The route's path template split at ``/``, or None for a route the tree cannot place."""
    if not isinstance(route, Route):  # APIRoute is one; mounts, hosts and websockets are tried every time
        return None
    if any(isinstance(c, PathConvertor) for c in route.param_convertors.values()):
        return None
    return route.path_format.split("/")


class RouteIndex:
    """The router's dispatch, looking up http requests in the tree first (``Router.middleware_stack``)."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self.fallback: ASGIApp = router.middleware_stack
        self._built_for: tuple[int, int] | None = None
        self._root = _Node()
        self._loose: list[int] = []

    def _build(self) -> None:
        routes = self.router.routes
        root, loose = _Node(), []
        for position, route in enumerate(routes):
            segments = _segments(route)
            if segments is None:
                loose.append(position)
                continue
            node = root
            for segment in segments:
                if "{" in segment:
                    node.param = node.param or _Node()
                    node = node.param
                else:
                    node = node.literal.setdefault(segment, _Node())
            node.routes.append(position)
        self._root, self._loose = root, loose
        self._built_for = (id(routes), len(routes))

    def candidates(self, path: str) -> list[int]:
        """Positions of the routes that could match `path`, in table order."""
        routes = self.router.routes
        if self._built_for != (id(routes), len(routes)):
            self._build()
        nodes = [self._root]
        for segment in path.split("/"):
            reached = []
            for node in nodes:
                if (child := node.literal.get(segment)) is not None:
                    reached.append(child)
                if node.param is not None:
                    reached.append(node.param)
            if not reached:
                return self._loose
            nodes = reached
        found = [position for node in nodes for position in node.routes]
        if len(found) == 1 and not self._loose:
            return found
        return sorted(found + self._loose)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # A root path or FastAPI's request telemetry: the router's own loop, which handles both.
        if scope["type"] == "http" and not scope.get("root_path") and "fastapi.telemetry" not in scope:
            routes = self.router.routes
            for position in self.candidates(scope["path"]):
                route = routes[position]
                match, child_scope = route.matches(scope)
                if match == Match.FULL:
                    scope.setdefault("router", self.router)
                    scope.update(child_scope)
                    await route.handle(scope, receive, send)
                    return
        await self.fallback(scope, receive, send)


def install(router: Router) -> None:
    """Puts the index in front of `router`'s dispatch; routes added later are indexed on the next request.

    Only a router whose dispatch is its plain route loop: router-level middleware or form limits would be skipped.
    """
    if router.middleware_stack != router.app or getattr(router, "form_limits", None):
        raise ValueError("the route index needs a router without middleware or form limits of its own")
    router.middleware_stack = RouteIndex(router)
