from fastapi import APIRouter
from pydantic import BaseModel

from memlet import LETTA_COMPAT_VERSION

router = APIRouter(prefix="/health", tags=["health"])


class Health(BaseModel):
    version: str
    status: str


@router.get("/", operation_id="check_health", response_model=Health)
async def check_health() -> Health:
    """Report that the server is up, with the Letta version it is compatible with."""
    return Health(version=LETTA_COMPAT_VERSION, status="ok")
