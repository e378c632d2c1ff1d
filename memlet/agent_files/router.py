"""`/v1/agents/import` and `/v1/agents/{agent_id}/export` (Letta's operationIds, parameters and form fields).

The import body is read from the stream with the agent-file size limit enforced as it arrives (413), checked
whole before anything is written (400 naming the field), and imported in the request's one transaction; the
files it carries are embedded once that transaction has committed.
"""

import json
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Body, Header, Query, Request
from fastapi.responses import Response
from pydantic import ValidationError

from memlet.agent_files.deps import ExportServiceDep, ImportServiceDep
from memlet.agent_files.import_service import ImportOptions
from memlet.agent_files.reader import read_agent_file, validation_error
from memlet.agent_files.schemas import ExportAgentRequest, ImportedAgentsResponse
from memlet.api.deps import ActorDep, SettingsDep
from memlet.errors import BadRequestError
from memlet.folders.deps import FileProcessorDep
from memlet.folders.upload_body import read_upload
from memlet.ids import AgentId

router = APIRouter(prefix="/agents", tags=["agents"])

_STRING_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {"description": "Successful Response", "content": {"application/json": {"schema": {"type": "string"}}}}
}
_FORM_TEXT = ("name", "override_name", "embedding", "override_embedding_handle", "model", "override_model_handle")
_IMPORT_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "title": "Body_import_agent",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "append_copy_suffix": {"type": "boolean", "default": True, "deprecated": True},
                        "override_existing_tools": {"type": "boolean", "default": True},
                        "strip_messages": {"type": "boolean", "default": False},
                        "secrets": {"type": "string"},
                        "env_vars_json": {"type": "string", "deprecated": True},
                        "project_id": {"type": "string", "deprecated": True},
                        **{key: {"type": "string"} for key in _FORM_TEXT},
                    },
                }
            }
        },
    }
}


def _flag(fields: dict[str, str], key: str, default: bool) -> bool:
    value = fields.get(key)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise BadRequestError(f"INVALID_ARGUMENT: {key} must be a boolean, got {value!r}")


def _secrets(fields: dict[str, str]) -> dict[str, str]:
    raw = fields.get("secrets") or fields.get("env_vars_json")
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError as exc:
        raise BadRequestError("secrets must be a valid JSON string") from exc
    if not isinstance(parsed, dict):
        raise BadRequestError("secrets must be a valid JSON string")
    return {str(k): "" if v is None else str(v) for k, v in parsed.items()}


def import_options(fields: dict[str, str], embedding_header: str | None, project_header: str | None) -> ImportOptions:
    return ImportOptions(
        append_copy_suffix=_flag(fields, "append_copy_suffix", True),
        name=fields.get("name") or fields.get("override_name") or None,
        override_existing_tools=_flag(fields, "override_existing_tools", True),
        strip_messages=_flag(fields, "strip_messages", False),
        secrets=_secrets(fields),
        project_id=project_header or fields.get("project_id") or None,
        model=fields.get("model") or fields.get("override_model_handle") or None,
        embedding=fields.get("embedding") or fields.get("override_embedding_handle") or embedding_header or None,
    )


@router.post("/import", operation_id="import_agent", response_model=ImportedAgentsResponse, openapi_extra=_IMPORT_BODY)
async def import_agent(
    request: Request,
    background: BackgroundTasks,
    service: ImportServiceDep,
    processor: FileProcessorDep,
    settings: SettingsDep,
    actor: ActorDep,
    x_override_embedding_model: Annotated[str | None, Header()] = None,
    x_project_id: Annotated[str | None, Header(alias="X-Project-Id")] = None,
) -> Any:
    """Import an agent file (v2, or legacy from Letta 0.6 on) and recreate its agents; returns their ids."""
    upload = await read_upload(request, settings.max_agent_file_bytes)
    options = import_options(upload.fields, x_override_embedding_model, x_project_id)
    parsed = read_agent_file(upload.data)
    try:
        result = await service.import_file(actor, parsed, options)
    except ValidationError as exc:  # a value the file carries that the target model refuses
        raise validation_error(exc) from exc
    for file_id in result.file_ids:
        background.add_task(processor.submit, file_id)
    return ImportedAgentsResponse(agent_ids=result.agent_ids)


def _json(document: dict[str, Any]) -> Response:
    return Response(json.dumps(document, indent=2, default=str), media_type="application/json")


def _check_legacy(use_legacy_format: bool) -> None:
    if use_legacy_format:
        raise BadRequestError("Legacy format is not supported")


@router.get("/{agent_id}/export", operation_id="export_agent", responses=_STRING_RESPONSE)
async def export_agent(
    agent_id: AgentId,
    service: ExportServiceDep,
    actor: ActorDep,
    max_steps: Annotated[int, Query(deprecated=True)] = 100,
    use_legacy_format: Annotated[bool, Query(deprecated=True)] = False,
    conversation_id: str | None = None,
    scrub_messages: bool = False,
) -> Response:
    """Export an agent as a v2 agent file, its whole message history included."""
    _check_legacy(use_legacy_format)
    req = ExportAgentRequest(conversation_id=conversation_id, scrub_messages=scrub_messages)
    return _json(await service.export(actor, agent_id, req))


@router.post("/{agent_id}/export", operation_id="export_agent_with_skills", responses=_STRING_RESPONSE)
async def export_agent_with_skills(
    agent_id: AgentId,
    service: ExportServiceDep,
    actor: ActorDep,
    request: Annotated[ExportAgentRequest | None, Body()] = None,
) -> Response:
    """Export an agent as a v2 agent file, with the given skills copied in."""
    return _json(await service.export(actor, agent_id, request or ExportAgentRequest()))
