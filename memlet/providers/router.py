"""`/v1/models` (chat and embedding listings) and `/v1/providers` (BYOK provider CRUD, key checks, refresh).

The catalog is built at start-up by `memlet.app.lifespan` (`memlet.providers.catalog.load_catalog`) and kept on
`app.state.catalog`.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Query

from memlet.api.deps import ActorDep, SessionDep
from memlet.api.validators import page_query
from memlet.db.pagination import Page
from memlet.ids import ProviderId
from memlet.providers.deps import CatalogDep, ProviderServiceDep
from memlet.providers.schemas import (
    EmbeddingModel,
    Model,
    Provider,
    ProviderCategory,
    ProviderCheck,
    ProviderCreate,
    ProviderType,
    ProviderUpdate,
)

models_router = APIRouter(prefix="/models", tags=["models", "llms"])
providers_router = APIRouter(prefix="/providers", tags=["providers"])


@models_router.get("/", operation_id="list_models", response_model=list[Model])
async def list_models(
    session: SessionDep,
    actor: ActorDep,
    catalog: CatalogDep,
    provider_category: Annotated[list[ProviderCategory] | None, Query()] = None,
    provider_name: str | None = None,
    provider_type: ProviderType | None = None,
) -> list[Model]:
    """List the chat models of every configured provider (env and BYOK), as `Model` objects."""
    return await catalog.list_models(
        session,
        actor.organization_id,
        provider_category=provider_category,
        provider_name=provider_name,
        provider_type=provider_type,
    )


@models_router.get("/embedding", operation_id="list_embedding_models", response_model=list[EmbeddingModel])
async def list_embedding_models(session: SessionDep, actor: ActorDep, catalog: CatalogDep) -> list[EmbeddingModel]:
    """List the embedding models of every configured provider, as `EmbeddingModel` objects."""
    return await catalog.list_embedding_models(session, actor.organization_id)


@providers_router.get("/", operation_id="list_providers", response_model=list[Provider])
async def list_providers(
    *,
    actor: ActorDep,
    service: ProviderServiceDep,
    page: Annotated[Page, page_query()],
    name: str | None = None,
    provider_type: ProviderType | None = None,
) -> list[Provider]:
    """List the organization's BYOK providers, newest first by default."""
    page = page
    return await service.list(actor, page, name=name, provider_type=provider_type)


@providers_router.post("/", operation_id="create_provider", response_model=Provider)
async def create_provider(actor: ActorDep, service: ProviderServiceDep, request: ProviderCreate) -> Provider:
    """Create a BYOK provider; its key is stored but never returned."""
    return await service.create(actor, request)


@providers_router.post("/check", operation_id="check_provider", response_model=None)
async def check_provider(service: ProviderServiceDep, request: ProviderCheck) -> dict[str, str]:
    """Verify a provider key (and base URL) by listing the provider's models with it."""
    return await service.check(request)


@providers_router.get("/{provider_id}", operation_id="retrieve_provider", response_model=Provider)
async def retrieve_provider(provider_id: ProviderId, actor: ActorDep, service: ProviderServiceDep) -> Provider:
    """Get one BYOK provider by id."""
    return await service.get(actor, provider_id)


@providers_router.patch("/{provider_id}", operation_id="modify_provider", response_model=Provider)
async def modify_provider(
    provider_id: ProviderId, actor: ActorDep, service: ProviderServiceDep, request: ProviderUpdate
) -> Provider:
    """Update a BYOK provider's key or connection settings."""
    return await service.update(actor, provider_id, request)


@providers_router.delete("/{provider_id}", operation_id="delete_provider", response_model=None)
async def delete_provider(provider_id: ProviderId, actor: ActorDep, service: ProviderServiceDep) -> dict[str, Any]:
    """Delete a BYOK provider; its models disappear from the listings."""
    return await service.delete(actor, provider_id)


@providers_router.post("/{provider_id}/check", operation_id="check_existing_provider", response_model=None)
async def check_existing_provider(
    provider_id: ProviderId, actor: ActorDep, service: ProviderServiceDep
) -> dict[str, str]:
    """Verify the stored key of a BYOK provider."""
    return await service.check_existing(actor, provider_id)


@providers_router.patch("/{provider_id}/refresh", operation_id="refresh_provider_models", response_model=Provider)
async def refresh_provider_models(provider_id: ProviderId, actor: ActorDep, service: ProviderServiceDep) -> Provider:
    """List a BYOK provider's models again now."""
    return await service.refresh(actor, provider_id)
