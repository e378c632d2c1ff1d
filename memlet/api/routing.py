"""Registering one handler function under several routes (a route and its deprecated twin, attach and detach)."""

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter


def add_route(
    router: APIRouter, method: str, path: str, handler: Callable[..., Any], operation_id: str, doc: str, **kwargs: Any
) -> None:
    """Add `handler` at `method path` with its own operationId, OpenAPI summary and description.

    FastAPI derives the summary from the route's name, so the name is the operationId rather than the shared
    function's name.
    """
    router.add_api_route(
        path, handler, methods=[method], operation_id=operation_id, name=operation_id, description=doc, **kwargs
    )
