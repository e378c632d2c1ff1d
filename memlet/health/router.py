"""``/v1/health/`` (liveness) and ``/v1/ready/`` (readiness: the database answers), both open without auth; and
memlet's own ``/v1/health/diagnostics`` (what the server can enforce here, e.g. tool isolation), behind the password.
"""

import asyncio
import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text

from memlet import LETTA_COMPAT_VERSION
from memlet.api.deps import SessionmakerDep

router = APIRouter(tags=["health"])
log = logging.getLogger(__name__)

# A database that takes longer than this to answer SELECT 1 counts as not ready.
READY_TIMEOUT_S = 5.0


class Health(BaseModel):
    version: str
    status: str


@router.get("/health/", operation_id="check_health", response_model=Health)
async def check_health() -> Health:
    """Report that the server is up, with the Letta version it is compatible with."""
    return Health(version=LETTA_COMPAT_VERSION, status="ok")


@router.get("/ready/", operation_id="check_readiness", response_model=Health)
async def check_readiness(sessionmaker: SessionmakerDep) -> Health | JSONResponse:
    """200 with Letta's health body when the database answers ``SELECT 1``; 503 (status "degraded") otherwise."""
    try:
        async with asyncio.timeout(READY_TIMEOUT_S), sessionmaker() as session:
            await session.execute(text("SELECT 1"))
    except Exception as exc:  # any failure to reach the database means "not ready", never a 500
        log.warning("readiness check failed: %s", exc)
        body = Health(version=LETTA_COMPAT_VERSION, status="degraded").model_dump()
        return JSONResponse(status_code=503, content=body)
    return Health(version=LETTA_COMPAT_VERSION, status="ok")


@router.get("/health/diagnostics", operation_id="memlet_diagnostics", include_in_schema=False)
async def diagnostics(request: Request) -> dict[str, Any]:
    """memlet's security posture on this host: tool isolation, its limits, and process hardening (not in Letta)."""
    return dict(request.app.state.diagnostics)
