"""Wire models for groups (Letta 0.16.8 names, defaults and nulls).

A group's pattern is chosen at creation by ``manager_config``, a union told apart by ``manager_type``; no
``manager_config`` means ``round_robin``. ``swarm`` is a `ManagerType` but no config names it, so it cannot be
created. `GroupUpdate` carries the ``*ManagerUpdate`` variants, whose fields are all optional.
"""

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from memlet.agents.parts import Group as Group
from memlet.ids import Prefix, id_pattern

_DEPRECATED: dict[str, Any] = {"deprecated": True}
_REQUEST = ConfigDict(populate_by_name=True, extra="ignore")

AgentIdField = Annotated[str, StringConstraints(pattern=id_pattern(Prefix.AGENT), min_length=42, max_length=42)]
BlockIdField = Annotated[str, StringConstraints(pattern=id_pattern(Prefix.BLOCK), min_length=42, max_length=42)]


class ManagerType(StrEnum):
    ROUND_ROBIN = "round_robin"
    SUPERVISOR = "supervisor"
    DYNAMIC = "dynamic"
    SLEEPTIME = "sleeptime"
    VOICE_SLEEPTIME = "voice_sleeptime"
    SWARM = "swarm"


class RoundRobinManager(BaseModel):
    model_config = _REQUEST
    manager_type: Literal["round_robin"] = "round_robin"
    max_turns: int | None = None


class SupervisorManager(BaseModel):
    model_config = _REQUEST
    manager_type: Literal["supervisor"] = "supervisor"
    manager_agent_id: AgentIdField


class DynamicManager(BaseModel):
    model_config = _REQUEST
    manager_type: Literal["dynamic"] = "dynamic"
    manager_agent_id: AgentIdField
    termination_token: str | None = "DONE!"
    max_turns: int | None = None


class SleeptimeManager(BaseModel):
    model_config = _REQUEST
    manager_type: Literal["sleeptime"] = "sleeptime"
    manager_agent_id: AgentIdField
    sleeptime_agent_frequency: int | None = None


class VoiceSleeptimeManager(BaseModel):
    model_config = _REQUEST
    manager_type: Literal["voice_sleeptime"] = "voice_sleeptime"
    manager_agent_id: AgentIdField
    max_message_buffer_length: int | None = None
    min_message_buffer_length: int | None = None


ManagerConfig = Annotated[
    RoundRobinManager | SupervisorManager | DynamicManager | SleeptimeManager | VoiceSleeptimeManager,
    Field(discriminator="manager_type"),
]


class RoundRobinManagerUpdate(BaseModel):
    model_config = _REQUEST
    manager_type: Literal["round_robin"] = "round_robin"
    max_turns: int | None = None


class SupervisorManagerUpdate(BaseModel):
    model_config = _REQUEST
    manager_type: Literal["supervisor"] = "supervisor"
    manager_agent_id: AgentIdField | None


class DynamicManagerUpdate(BaseModel):
    model_config = _REQUEST
    manager_type: Literal["dynamic"] = "dynamic"
    manager_agent_id: AgentIdField | None = None
    termination_token: str | None = None
    max_turns: int | None = None


class SleeptimeManagerUpdate(BaseModel):
    model_config = _REQUEST
    manager_type: Literal["sleeptime"] = "sleeptime"
    manager_agent_id: AgentIdField | None = None
    sleeptime_agent_frequency: int | None = None


class VoiceSleeptimeManagerUpdate(BaseModel):
    model_config = _REQUEST
    manager_type: Literal["voice_sleeptime"] = "voice_sleeptime"
    manager_agent_id: AgentIdField | None = None
    max_message_buffer_length: int | None = None
    min_message_buffer_length: int | None = None


ManagerConfigUpdate = Annotated[
    RoundRobinManagerUpdate
    | SupervisorManagerUpdate
    | DynamicManagerUpdate
    | SleeptimeManagerUpdate
    | VoiceSleeptimeManagerUpdate,
    Field(discriminator="manager_type"),
]


class GroupCreate(BaseModel):
    model_config = _REQUEST

    agent_ids: list[AgentIdField]
    description: str
    manager_config: ManagerConfig = Field(default_factory=RoundRobinManager)
    project_id: str | None = Field(default=None, description="The associated project id.")
    shared_block_ids: list[BlockIdField] = Field(default_factory=list, json_schema_extra=_DEPRECATED)
    hidden: bool | None = Field(default=None, description="If set to True, the group will be hidden.")


class InternalTemplateGroupCreate(GroupCreate):
    """A group created from a template (Letta Cloud's internal route): the template ids are required."""

    base_template_id: str = Field(description="The id of the base template.")
    template_id: str = Field(description="The id of the template.")
    deployment_id: str = Field(description="The id of the deployment.")


class GroupUpdate(BaseModel):
    model_config = _REQUEST

    agent_ids: list[AgentIdField] | None = None
    description: str | None = None
    manager_config: ManagerConfigUpdate | None = None
    project_id: str | None = Field(default=None, description="The associated project id.")
    shared_block_ids: list[BlockIdField] | None = Field(default=None, json_schema_extra=_DEPRECATED)


class TemplateIds(BaseModel):
    """The template provenance a templated create stores on the group."""

    template_id: str | None = None
    base_template_id: str | None = None
    deployment_id: str | None = None
