"""The providers services as FastAPI dependencies (typed aliases for routers)."""

from typing import Annotated

from fastapi import Depends, Request

from memlet.api.deps import SessionDep
from memlet.providers.catalog import ModelCatalog
from memlet.providers.service import ProviderService


async def get_catalog(request: Request) -> ModelCatalog:
    return request.app.state.catalog  # type: ignore[no-any-return]


CatalogDep = Annotated[ModelCatalog, Depends(get_catalog)]


async def get_provider_service(session: SessionDep, catalog: CatalogDep) -> ProviderService:
    return ProviderService(session, catalog)


ProviderServiceDep = Annotated[ProviderService, Depends(get_provider_service)]
