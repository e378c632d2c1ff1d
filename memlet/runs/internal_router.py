"""Letta's ``GET /v1/_internal_runs/`` (the public run listing under an internal path) and the deprecated
``GET /v1/telemetry/{step_id}``."""

from typing import Any

from fastapi import APIRouter

from memlet.runs.router import list_runs
from memlet.runs.schemas import ProviderTrace, Run

router = APIRouter(prefix="/_internal_runs", tags=["_internal_runs"])
telemetry_router = APIRouter(prefix="/telemetry", tags=["telemetry"])

router.add_api_route(
    "/",
    list_runs,
    methods=["GET"],
    operation_id="list_internal_runs",
    response_model=list[Run],
    summary="List Internal Runs",
)


@telemetry_router.get(
    "/{step_id}", operation_id="retrieve_provider_trace", response_model=ProviderTrace | None, deprecated=True
)
async def retrieve_provider_trace(step_id: str) -> Any:
    """**DEPRECATED**: use ``GET /v1/steps/{step_id}/trace``. memlet records no provider traces, so this is
    ``null`` for any step id, as Letta answers when provider-trace tracking is off."""
    return None
