"""Request input that Postgres or the JSON codec cannot take, rejected once at the edge with a 422.

Every ``/v1`` route depends on ``check_request_input``, which walks the path parameters, the query string and the
decoded JSON body once and rejects, naming the field (``loc``) in Letta's validation-error shape:

- a NUL character (Postgres text and JSONB cannot store it) or a lone UTF-16 surrogate (not encodable as UTF-8),
  in any string, object key included; block ``value``s are the exception: Letta strips their NULs silently;
- JSON nested deeper than ``MAX_JSON_DEPTH`` levels;
- JSON integers outside the signed 64-bit range and non-finite numbers (``NaN``, ``Infinity``, ``1e999``).

Integer query parameters are bounded where they are declared, with the annotated types below (``PageLimit``,
``Int32Query``). Whatever still slips through to the database is classified by ``memlet.db.errors``.
"""

import math
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import Depends, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import Field

from memlet.db.pagination import Order, Page

MAX_JSON_DEPTH = 64
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
# Letta bounds `limit` only on the runs list (1..1000); memlet applies that bound to every list.
MAX_PAGE_LIMIT = 1000
_NUL = "String should not contain NUL characters"
_SURROGATE = "String should not contain lone surrogate characters (invalid UTF-16)"

PageLimit = Annotated[int | None, Query(ge=0, le=MAX_PAGE_LIMIT, description="Maximum number of items to return")]


def page_query(*, limit: int | None = 50, order: Order = "desc") -> Any:
    """A dependency reading a route's ``before``/``after``/``limit``/``order``/``order_by`` into a `Page`.

    Letta's defaults differ per route, so each route names its own: ``page: Annotated[Page, page_query(limit=100)]``.
    """
    default_limit, default_order = limit, order

    def page(
        before: str | None = None,
        after: str | None = None,
        limit: PageLimit = default_limit,
        order: Order = default_order,
        order_by: Literal["created_at"] = "created_at",
    ) -> Page:
        return Page(before=before, after=after, limit=limit, order=order)

    return Depends(page)


Int32 = Annotated[int, Field(ge=INT32_MIN, le=INT32_MAX)]
Int32Query = Annotated[int | None, Query(ge=INT32_MIN, le=INT32_MAX)]

Loc = tuple[str | int, ...]


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored (a NUL or a lone surrogate), or None when it can."""
    if "\x00" in value:
        return _NUL
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE
    return None


def json_problems(value: Any, loc: Loc, depth: int = 1) -> Iterator[tuple[Loc, str]]:
    """Each place in a decoded JSON value that the server cannot store, with the reason."""
    if depth > MAX_JSON_DEPTH:
        yield loc, f"JSON should be nested at most {MAX_JSON_DEPTH} levels deep"
    elif isinstance(value, str):
        problem = text_problem(value)
        if problem == _NUL and _is_block_value(loc):
            problem = text_problem(value.replace("\x00", ""))
        if problem:
            yield loc, problem
    elif isinstance(value, bool):
        return
    elif isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            yield loc, "Integer should fit in a signed 64-bit integer"
    elif isinstance(value, float):
        if not math.isfinite(value):
            yield loc, "Number should be finite"
    elif isinstance(value, dict):
        for key, item in value.items():
            if problem := text_problem(key):
                yield (*loc, _printable(key)), f"Key: {problem}"
            yield from json_problems(item, (*loc, _printable(key)), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from json_problems(item, (*loc, index), depth + 1)


def _is_block_value(loc: Loc) -> bool:
    """A block's ``value`` (top level, or in an agent's ``memory_blocks``): its schema strips NULs, as Letta does."""
    return loc == ("value",) or (len(loc) == 3 and loc[0] == "memory_blocks" and loc[2] == "value")


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def _error(loc: Loc, msg: str) -> dict[str, Any]:
    return {"type": "value_error", "loc": loc, "msg": msg, "input": None}


async def check_request_input(request: Request) -> None:
    """Reject NUL bytes, lone surrogates, over-deep JSON and out-of-range numbers anywhere in the request (422)."""
    errors = [
        _error(("path", name), problem)
        for name, value in request.path_params.items()
        if isinstance(value, str) and (problem := text_problem(value))
    ]
    if request.scope.get("query_string"):  # most requests have none: no parse
        for name, value in request.query_params.multi_items():
            if problem := text_problem(name) or text_problem(value):
                errors.append(_error(("query", _printable(name)), problem))
    if request.method in ("POST", "PUT", "PATCH") and _is_json(request.headers.get("content-type", "")):
        body = await _json_body(request)
        errors += [_error(("body", *loc), msg) for loc, msg in json_problems(body, (), 0)]
    if errors:
        raise RequestValidationError(errors[:20])


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


async def _json_body(request: Request) -> Any:
    # FastAPI has already decoded the body of routes that take one (Starlette caches it); other routes ignore it.
    if not await request.body():
        return None
    try:
        return await request.json()
    except ValueError:
        return None
