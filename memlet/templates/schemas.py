"""Wire models of ``/v1/_internal_templates`` (Letta 0.16.8 names): the create bodies and the deployment answers."""

from pydantic import BaseModel, Field

from memlet.blocks.schemas import CreateBlock


class InternalTemplateBlockCreate(CreateBlock):
    """A block deployed from a template: `CreateBlock` with its template, deployment and entity ids required."""

    template_id: str  # type: ignore[assignment]
    base_template_id: str  # type: ignore[assignment]
    deployment_id: str  # type: ignore[assignment]
    entity_id: str  # type: ignore[assignment]


class DeploymentEntity(BaseModel):
    """One block, agent or group of a deployment."""

    id: str
    type: str
    name: str | None = None
    description: str | None = None
    entity_id: str | None = None
    project_id: str | None = None


class ListDeploymentEntitiesResponse(BaseModel):
    """Response model for listing deployment entities."""

    entities: list[DeploymentEntity] = Field(default_factory=list)
    total_count: int
    deployment_id: str
    message: str


class DeleteDeploymentResponse(BaseModel):
    """Response model for delete deployment operation."""

    deleted_blocks: list[str] = Field(default_factory=list)
    deleted_agents: list[str] = Field(default_factory=list)
    deleted_groups: list[str] = Field(default_factory=list)
    message: str
