"""Typed dependency aliases: the session, the acting user and the settings are resolved here and only here."""

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Header, Request
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet import ids
from memlet.actor import DEFAULT_ACTOR, Actor
from memlet.config import Settings
from memlet.db import models as orm
from memlet.errors import BadRequestError


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """One session per request, committed before the response is sent; an exception rolls it back."""
    async with request.app.state.sessionmaker() as session:
        yield session
        await session.commit()


async def get_sessionmaker(request: Request) -> async_sessionmaker[AsyncSession]:
    return request.app.state.sessionmaker  # type: ignore[no-any-return]


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
SessionmakerDep = Annotated[async_sessionmaker[AsyncSession], Depends(get_sessionmaker)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


async def get_actor(
    request: Request, user_id: Annotated[str | None, Header(convert_underscores=False)] = None
) -> Actor:
    """The ``user_id`` header (underscore, as Letta) picks the actor: malformed -> 400, unknown -> the default user.

    Only a named user is looked up, in a short session of its own: a route that needs nothing but the actor (a
    send) then opens no request session at all, which cost ~70 µs of CPU per request even without a statement.
    It reads the app's state itself, as a dependency of no other dependency: FastAPI's work per dependency is
    several times what these functions do (`tests/unit/test_edge.py` counts them on the hot routes).
    """
    if not user_id or user_id == ids.DEFAULT_USER_ID:
        return DEFAULT_ACTOR
    if not ids.is_valid(user_id, ids.Prefix.USER):
        raise BadRequestError(
            f"INVALID_ARGUMENT: Invalid user ID format: {user_id}. Expected format: '{ids.Prefix.USER.value}-<uuid4>'"
        )
    if (known := request.scope.get(_ACTOR_KEY)) is not None:  # called directly by another dependency too
        return known  # type: ignore[no-any-return]
    async with request.app.state.sessionmaker() as session:
        org_id = await session.scalar(select(orm.User.organization_id).where(orm.User.id == user_id))
    actor = request.scope[_ACTOR_KEY] = Actor(user_id, org_id) if org_id else DEFAULT_ACTOR
    return actor


_ACTOR_KEY = "memlet.actor"


UserIdHeader = Annotated[str | None, Header(convert_underscores=False)]
"""The raw ``user_id`` header, for a dependency that resolves the actor itself (`get_actor`)."""


ActorDep = Annotated[Actor, Depends(get_actor)]
