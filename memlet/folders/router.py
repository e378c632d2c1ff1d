"""`/v1/folders` and its deprecated twin `/v1/sources`: folder CRUD, count, metadata, by name, agents, passages.

Both prefixes are built by one function, so the two cannot drift; only the path parameter's name, the operation
ids and the response model (`Source` shows `vector_db_provider`) differ.
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query

from memlet.api.deps import ActorDep
from memlet.api.validators import PageLimit
from memlet.db.pagination import Page
from memlet.folders.deps import FolderServiceDep
from memlet.folders.schemas import Folder, OrganizationSourcesStats, Source, SourceCreate, SourceUpdate
from memlet.ids import Prefix, id_pattern
from memlet.passages import views as passage_views
from memlet.passages.schemas import Passage

Order = Literal["asc", "desc"]
FOLDER_OPS = {
    "count": "count_folders",
    "metadata": "retrieve_metadata",
    "by_name": "get_folder_by_name",
    "list": "list_folders",
    "create": "create_folder",
    "retrieve": "retrieve_folder",
    "modify": "modify_folder",
    "delete": "delete_folder",
    "agents": "list_agents_for_folder",
    "passages": "list_folder_passages",
}
SOURCE_OPS = {
    "count": "count_sources",
    "metadata": "get_sources_metadata",
    "by_name": "get_source_id_by_name",
    "list": "list_sources",
    "create": "create_source",
    "retrieve": "retrieve_source",
    "modify": "modify_source",
    "delete": "delete_source",
    "agents": "get_agents_for_source",
    "passages": "list_source_passages",
}


def folder_path(name: str) -> Any:
    """The folder id path parameter, named `name` on the wire (`folder_id` or `source_id`)."""
    return Path(
        alias=name,
        pattern=id_pattern(Prefix.SOURCE),
        min_length=43,
        max_length=43,
        description="The ID of the source in the format 'source-<uuid4>'",
    )


def build_router(prefix: str, id_name: str, ops: dict[str, str], *, deprecated: bool) -> APIRouter:
    router = APIRouter(prefix=prefix, tags=[prefix.strip("/")], deprecated=deprecated or None)
    # Letta's deprecated `/v1/sources` listings take no order and return the oldest first.
    listing_order: Literal["asc", "desc"] = "asc" if deprecated else "desc"
    model: type[Folder | Source] = Source if deprecated else Folder
    FolderIdParam = Annotated[str, folder_path(id_name)]
    at = f"/{{{id_name}}}"  # the folder id segment, named as the prefix names it
    name_param = f"{id_name.removesuffix('_id')}_name"
    NameParam = Annotated[str, Path(alias=name_param, max_length=255)]

    @router.get("/count", operation_id=ops["count"], response_model=int)
    async def count(service: FolderServiceDep, actor: ActorDep) -> Any:
        """Count the folders of the organization."""
        return await service.count(actor)

    @router.get("/metadata", operation_id=ops["metadata"], response_model=OrganizationSourcesStats)
    async def metadata(
        service: FolderServiceDep, actor: ActorDep, include_detailed_per_source_metadata: bool = False
    ) -> Any:
        """Folder, file and byte totals of the organization, per folder on request."""
        return await service.metadata(actor, detailed=include_detailed_per_source_metadata)

    @router.get(f"/name/{{{name_param}}}", operation_id=ops["by_name"], response_model=str, deprecated=True)
    async def by_name(name: NameParam, service: FolderServiceDep, actor: ActorDep) -> Any:
        """Deprecated: the id of the folder with this name (use the list endpoint's `name` filter)."""
        return await service.id_by_name(actor, name)

    if deprecated:

        @router.get("/", operation_id=ops["list"], response_model=list[model])  # type: ignore[valid-type]
        async def list_all(service: FolderServiceDep, actor: ActorDep) -> Any:
            """Deprecated: the organization's first 50 folders, oldest first (this listing takes no parameters)."""
            return await service.list_page(actor, Page(limit=50, order="asc"), name=None)

    else:

        @router.get("/", operation_id=ops["list"], response_model=list[model])  # type: ignore[valid-type]
        async def list_(
            service: FolderServiceDep,
            actor: ActorDep,
            before: str | None = None,
            after: str | None = None,
            limit: PageLimit = 50,
            order: Order = "asc",
            order_by: Literal["created_at"] = "created_at",
            name: Annotated[str | None, Query(max_length=255)] = None,
        ) -> Any:
            """List the folders of the organization, oldest first by default; `name` keeps names that hold it."""
            page = Page(before=before, after=after, limit=limit, order=order)
            return await service.list_page(actor, page, name=name)

    @router.post("/", operation_id=ops["create"], response_model=model)
    async def create(body: SourceCreate, service: FolderServiceDep, actor: ActorDep) -> Any:
        """Create a folder; its embedding model comes from `embedding`, `embedding_config` or the default handle."""
        return await service.create(actor, body)

    @router.get(at, operation_id=ops["retrieve"], response_model=model)
    async def retrieve(folder_id: FolderIdParam, service: FolderServiceDep, actor: ActorDep) -> Any:
        """Get a folder by id."""
        return await service.get(actor, folder_id)

    @router.patch(at, operation_id=ops["modify"], response_model=model)
    async def modify(folder_id: FolderIdParam, body: SourceUpdate, service: FolderServiceDep, actor: ActorDep) -> Any:
        """Rename a folder or change its description, instructions or metadata."""
        return await service.modify(actor, folder_id, body)

    @router.delete(at, operation_id=ops["delete"])
    async def delete(folder_id: FolderIdParam, service: FolderServiceDep, actor: ActorDep) -> None:
        """Delete a folder with its files, their passages and the agents' file blocks."""
        await service.delete(actor, folder_id)

    @router.get(f"{at}/agents", operation_id=ops["agents"], response_model=list[str])
    async def agents(
        folder_id: FolderIdParam,
        service: FolderServiceDep,
        actor: ActorDep,
        before: str | None = None,
        after: str | None = None,
        limit: PageLimit = 50,
        order: Order = "desc",
        order_by: Literal["created_at"] = "created_at",
    ) -> Any:
        """The ids of the agents the folder is attached to."""
        page = Page(before=before, after=after, limit=limit, order=order)
        return await service.agent_ids_page(actor, folder_id, page)

    @router.get(f"{at}/passages", operation_id=ops["passages"], response_model=list[Passage])
    async def passages(
        folder_id: FolderIdParam,
        service: FolderServiceDep,
        actor: ActorDep,
        before: str | None = None,
        after: str | None = None,
        limit: PageLimit = 100,
        order: Order = listing_order,
        order_by: Literal["created_at"] = "created_at",
    ) -> Any:
        """The passages of the folder's files, newest first by default (oldest first under `/v1/sources`, as Letta lists them there)."""
        page = Page(before=before, after=after, limit=limit, order=order)
        return passage_views.passages(await service.passages_page(actor, folder_id, page))

    return router


router = build_router("/folders", "folder_id", FOLDER_OPS, deprecated=False)
sources_router = build_router("/sources", "source_id", SOURCE_OPS, deprecated=True)
