"""Wire models for identities (Letta 0.16.8 names): the users or organizations an agent is attached to."""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from memlet.ids import Prefix, id_pattern, new_id

IdentityType = Literal["org", "user", "other"]
IdentityPropertyType = Literal["string", "number", "boolean", "json"]

AgentIdField = Annotated[str, StringConstraints(pattern=id_pattern(Prefix.AGENT))]
BlockIdField = Annotated[str, StringConstraints(pattern=id_pattern(Prefix.BLOCK))]

_DEPRECATED: dict[str, Any] = {"deprecated": True}
# Letta forbids unknown fields here; memlet ignores them so a newer SDK field never turns into a 422.
_REQUEST = ConfigDict(populate_by_name=True, extra="ignore")
_RESPONSE = ConfigDict(populate_by_name=True, extra="ignore", from_attributes=True)


def _new_identity_id() -> str:
    return new_id(Prefix.IDENTITY)


class IdentityProperty(BaseModel):
    """One typed key/value attached to an identity."""

    model_config = _REQUEST

    key: str
    # Order matters only for pydantic's smart union: an exact type match wins, so True stays a bool.
    value: str | int | float | bool | dict[str, Any]
    type: IdentityPropertyType


class Identity(BaseModel):
    """An identity as returned by `/v1/identities` and inside `AgentState.identities`."""

    model_config = _RESPONSE

    id: str = Field(default_factory=_new_identity_id)
    identifier_key: str
    name: str
    identity_type: IdentityType
    project_id: str | None = None
    agent_ids: list[str] = Field(default_factory=list, json_schema_extra=_DEPRECATED)
    block_ids: list[str] = Field(default_factory=list, json_schema_extra=_DEPRECATED)
    organization_id: str | None = None
    properties: list[IdentityProperty] = Field(default_factory=list)


class IdentityCreate(BaseModel):
    """Body of `POST /v1/identities/`."""

    model_config = _REQUEST

    identifier_key: str
    name: str
    identity_type: IdentityType
    project_id: str | None = None
    agent_ids: list[AgentIdField] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    block_ids: list[BlockIdField] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    properties: list[IdentityProperty] | None = None


class IdentityUpsert(BaseModel):
    """Body of `PUT /v1/identities/`: create, or replace the identity with the same `identifier_key`."""

    model_config = _REQUEST

    identifier_key: str
    name: str
    identity_type: IdentityType
    project_id: str | None = None
    agent_ids: list[AgentIdField] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    block_ids: list[BlockIdField] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    properties: list[IdentityProperty] | None = None


class IdentityUpdate(BaseModel):
    """Body of `PATCH /v1/identities/{identity_id}`; apply with `model_dump(exclude_unset=True)`."""

    model_config = _REQUEST

    identifier_key: str | None = None
    name: str | None = None
    identity_type: IdentityType | None = None
    agent_ids: list[AgentIdField] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    block_ids: list[BlockIdField] | None = Field(default=None, json_schema_extra=_DEPRECATED)
    properties: list[IdentityProperty] | None = None
