"""Readiness without a database: 503 with Letta's body shape, never a 500."""

import httpx
from fastapi import FastAPI

from memlet.health.router import router


class _DeadSession:
    async def __aenter__(self) -> "_DeadSession":
        raise ConnectionRefusedError("database is down")

    async def __aexit__(self, *exc: object) -> None:
        return None


async def test_ready_503_when_database_unreachable() -> None:
    app = FastAPI()
    app.include_router(router, prefix="/v1")
    app.state.sessionmaker = _DeadSession
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get("/v1/ready/")
        health = await client.get("/v1/health/")
    assert response.status_code == 503
    assert response.json() == {"version": "0.16.8", "status": "degraded"}
    assert health.status_code == 200
