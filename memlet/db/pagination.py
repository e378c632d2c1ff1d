"""Cursor pagination: ``before`` / ``after`` / ``limit`` / ``order``, with cursors relative to the sort order.

A cursor is the id of a row. ``after=X`` means "rows that come after X in the order being returned" and
``before=X`` "rows that come before X in that order", so letta-client's auto-pagination (which passes the last id
of a page as ``after``) walks every row exactly once in either order. Letta's absolute cursors repeated rows when
paging newest-first; this is the documented fix.
"""

from dataclasses import dataclass, replace
from typing import Any, Literal

from sqlalchemy import ColumnElement, Select, or_, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from memlet.errors import NotFoundError

Order = Literal["asc", "desc"]


@dataclass(frozen=True)
class Page:
    before: str | None = None
    after: str | None = None
    limit: int | None = 50
    order: Order = "desc"

    @property
    def descending(self) -> bool:
        return self.order == "desc"


async def unknown_cursors(
    session: AsyncSession, page: Page, id_col: InstrumentedAttribute[Any], *where: ColumnElement[bool]
) -> list[str]:
    """The page's cursors (``before`` first) that name no row of ``id_col``'s table matching ``where``, in one query
    (none when the page has no cursor). A cursor that names no row otherwise makes ``paginate`` return nothing;
    routes that must answer Letta's way instead (ignore it, or 404) look it up first."""
    cursors = [c for c in (page.before, page.after) if c]
    if not cursors:
        return []
    known = set(await session.scalars(select(id_col).where(id_col.in_(cursors), *where)))
    return [c for c in cursors if c not in known]


async def check_cursors(
    session: AsyncSession, page: Page, id_col: InstrumentedAttribute[Any], kind: str, *where: ColumnElement[bool]
) -> None:
    """Letta's generic lists look each cursor up first (``before`` first): one that names no row is its 404
    ``No <kind> found with id <id>``, not an empty page."""
    unknown = await unknown_cursors(session, page, id_col, *where)
    if unknown:
        raise NotFoundError(kind, unknown[0], message=f"No {kind} found with id {unknown[0]}")


def without_cursors(page: Page, cursors: list[str]) -> Page:
    """``page`` with the cursors named in ``cursors`` dropped."""
    if not cursors:
        return page
    before = None if page.before in cursors else page.before
    return replace(page, before=before, after=None if page.after in cursors else page.after)


def resolve_order(order: str | None, ascending: bool | None, default: Order) -> Order:
    """``order`` wins; the legacy ``ascending`` flag is honoured when ``order`` is absent."""
    if order in ("asc", "desc"):
        return order  # type: ignore[return-value]
    if ascending is not None:
        return "asc" if ascending else "desc"
    return default


def paginate(
    stmt: Select[Any],
    page: Page,
    *,
    sort_col: InstrumentedAttribute[Any] | ColumnElement[Any],
    id_col: InstrumentedAttribute[Any],
    unique_sort: bool = False,
    ignore_unknown_cursors: bool = False,
) -> tuple[Select[Any], bool]:
    """Apply cursors, order and limit. Returns the statement and whether its rows must be reversed afterwards.

    ``before`` alone must return the rows *closest* to the cursor, so it is queried in the opposite order and the
    caller reverses the (small) result. With ``unique_sort`` (no two rows share a sort value, e.g. a sequence) the
    id tie-break is left out of the cursor and the order, so an index on ``(<filter>, sort_col)`` serves both the
    cursor and the order with no sort step, whatever the cursor's position. A cursor that names no row selects
    nothing, or, with ``ignore_unknown_cursors``, is ignored (Letta's agent list).
    """

    def bound(cursor: str, later: bool) -> ColumnElement[bool]:
        found = select(sort_col).where(id_col == cursor).scalar_subquery()
        key = found if unique_sort else tuple_(found, cursor)
        cond = row > key if later else row < key
        return or_(found.is_(None), cond) if ignore_unknown_cursors else cond

    row = sort_col if unique_sort else tuple_(sort_col, id_col)
    if page.after:
        stmt = stmt.where(bound(page.after, later=not page.descending))
    if page.before:
        stmt = stmt.where(bound(page.before, later=page.descending))
    reverse = bool(page.before and not page.after)
    descending = page.descending != reverse
    ties = () if unique_sort else (id_col,)
    if descending:
        stmt = stmt.order_by(sort_col.desc(), *(c.desc() for c in ties))
    else:
        stmt = stmt.order_by(sort_col.asc(), *(c.asc() for c in ties))
    if page.limit is not None and page.limit > 0:
        stmt = stmt.limit(page.limit)
    return stmt, reverse


async def fetch_page(
    session: AsyncSession,
    stmt: Select[Any],
    page: Page,
    *,
    sort_col: InstrumentedAttribute[Any] | ColumnElement[Any],
    id_col: InstrumentedAttribute[Any],
    unique_sort: bool = False,
) -> list[Any]:
    """Run ``stmt`` paginated by ``page`` and return its rows in the requested order."""
    paged, reverse = paginate(stmt, page, sort_col=sort_col, id_col=id_col, unique_sort=unique_sort)
    rows = list(await session.scalars(paged))
    return rows[::-1] if reverse else rows
