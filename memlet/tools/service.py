"""Tools: create and upsert from source (schema derived) or an explicit schema, read, list, update, delete;
and the built-in tools (an agent's tools are in `agents/tool_links.py`).

Tool names are unique per organization. Creating a tool under a taken name updates that tool (`POST` and `PUT
/v1/tools/` alike, as in Letta); renaming one onto a taken name is Letta's 400.
"""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, NotFoundError
from memlet.messages.schemas import ToolReturn, ToolReturnMessage
from memlet.tool_exec.returns import DEFAULT_RETURN_CHAR_LIMIT, noted_over_limit
from memlet.tool_exec.sandbox import SandboxPolicy, run_tool
from memlet.tools.args_schema import schema_from_args
from memlet.tools.base_tools import BASE_TOOLS
from memlet.tools.bootstrap import upsert_base_tools
from memlet.tools.json_schema import derive_json_schema, function_name, tool_hash
from memlet.tools.repository import ToolFilters, ToolRepository
from memlet.tools.schemas import Tool, ToolCreate, ToolRunFromSource, ToolSearchRequest, ToolSearchResult, ToolUpdate

CUSTOM = "custom"
# Source types of Python source: "json" is what Letta stores for a tool created without a source type.
_PYTHON = ("python", "json", None)


def name_conflict(name: str) -> BadRequestError:
    """Letta's `LettaToolNameConflictError`, which its handler answers with 400 and the error code in the text."""
    return BadRequestError(f"INVALID_ARGUMENT: Tool with name '{name}' already exists in your organization")


def schema_for_create(req: ToolCreate) -> dict[str, Any]:
    """The tool's JSON schema: the one given, else built from `args_json_schema`, else derived from the source."""
    if req.json_schema:
        schema = req.json_schema
    elif req.source_type not in ("python", None):
        raise BadRequestError(f"Unknown tool source type: {req.source_type}")
    elif req.args_json_schema:
        schema = schema_from_args(req.source_code, req.args_json_schema)
    else:
        schema = derive_json_schema(req.source_code)
    if not isinstance(schema.get("name"), str) or not schema["name"]:
        raise BadRequestError("The tool's json_schema must have a 'name'")
    return schema


def _dump(value: Any) -> Any:
    return [item.model_dump() for item in value] if isinstance(value, list) else value


def _hash_of(fields: dict[str, Any]) -> str:
    return tool_hash(
        fields.get("source_code"),
        fields.get("source_type"),
        fields.get("pip_requirements"),
        fields.get("npm_requirements"),
    )


def tool_values(actor: Actor, req: ToolCreate) -> dict[str, Any]:
    """Insert values for a custom tool from a create/upsert request.

    Letta drops the fields a request left out or sent as null, so its column defaults apply: a tool created
    without `source_type` is stored as "json" (its hash is taken before, without one) and `args_json_schema`
    is `{}`."""
    schema = schema_for_create(req)
    fields = req.model_dump(exclude={"pip_requirements", "npm_requirements"})
    fields["pip_requirements"] = _dump(req.pip_requirements)
    fields["npm_requirements"] = _dump(req.npm_requirements)
    if "source_type" not in req.model_fields_set:
        fields["source_type"] = None
    tool_hash = _hash_of(fields)
    return {
        **fields,
        "source_type": fields["source_type"] or "json",
        "args_json_schema": req.args_json_schema if req.args_json_schema is not None else {},
        "id": ids.new_id(ids.Prefix.TOOL),
        "organization_id": actor.organization_id,
        "name": schema["name"],
        "tool_type": CUSTOM,
        "json_schema": schema,
        "description": req.description if req.description is not None else schema.get("description"),
        "tags": req.tags or [],
        "metadata_": {"tool_hash": tool_hash},
        "created_by_id": actor.user_id,
        "last_updated_by_id": actor.user_id,
    }


def _check_source_defines(name: str, source_code: str, source_type: str | None, schema_name: Any) -> None:
    keyword = "function" if source_type == "typescript" else "def"
    if f"{keyword} {name}" not in source_code:
        raise BadRequestError(
            f"Tool name '{name}' does not match the name in the JSON schema '{schema_name}' "
            f"or in the source code `{source_code}`"
        )


class ToolService:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.tools = ToolRepository(session)

    async def get_row(self, actor: Actor, tool_id: str) -> orm.Tool:
        tool = await self.tools.get_or_404(actor.organization_id, tool_id)
        return tool

    async def get(self, actor: Actor, tool_id: str) -> Tool:
        return Tool.model_validate(await self.get_row(actor, tool_id))

    async def create(self, actor: Actor, req: ToolCreate, *, project_id: str | None = None) -> Tool:
        """Create a tool; a tool of the same name is updated in place, as Letta 0.16.8 did.

        Programs commonly create their tools at every start, so a second create must not fail.
        """
        return await self.upsert(actor, req, project_id=project_id)

    async def upsert(self, actor: Actor, req: ToolCreate, *, project_id: str | None = None) -> Tool:
        """Create or overwrite by name. The `X-Project-Id` header's project becomes the tool's (an overwrite without
        one makes the tool global again, as Letta's upsert wrote every column)."""
        values = tool_values(actor, req)
        if project_id:
            values["project_id"] = project_id
        return Tool.model_validate(await self.tools.upsert(values))

    async def list_tools(self, actor: Actor, filters: ToolFilters, page: Page) -> list[Tool]:
        """A page of tools. A built-in tool missing from a page that must hold them all is created again (and the
        page read again), as Letta's listing does (see `_lacks_base_tools`)."""
        if page.limit == 0:  # Letta applies the limit as given: LIMIT 0 (memlet's pagination reads 0 as no limit)
            return []
        rows = await self.tools.list_tools(actor.organization_id, filters, page)
        if _lacks_base_tools(rows, filters, page):
            await upsert_base_tools(self.session, actor.organization_id, actor.user_id)
            rows = await self.tools.list_tools(actor.organization_id, filters, page)
        return [Tool.model_validate(t) for t in rows]

    async def count(self, actor: Actor, filters: ToolFilters) -> int:
        return await self.tools.count(actor.organization_id, filters)

    async def search(self, actor: Actor, req: ToolSearchRequest) -> list[ToolSearchResult]:
        """Text search over the org's tools (name, description, tags), best first.

        Letta Cloud ranks with a vector index; here every `search_mode` is the same case-insensitive word match,
        weighted by where each word is found. `fts_rank` is the 1-based position when there is a query,
        `combined_score` the weighted score, `vector_rank` and `embedded_text` stay null.
        """
        found = await self.tools.search(
            actor.organization_id, query=req.query, tool_types=req.tool_types, tags=req.tags, limit=req.limit
        )
        ranked = bool(req.query and req.query.strip())
        return [
            ToolSearchResult(tool=Tool.model_validate(tool), fts_rank=rank if ranked else None, combined_score=score)
            for rank, (tool, score) in enumerate(found, start=1)
        ]

    async def delete(self, actor: Actor, tool_id: str) -> None:
        if not await self.tools.delete(actor.organization_id, tool_id):
            raise NotFoundError("Tool", tool_id)

    async def add_base_tools(self, actor: Actor) -> list[Tool]:
        rows = await upsert_base_tools(self.session, actor.organization_id, actor.user_id)
        return [Tool.model_validate(t) for t in rows]

    async def update(self, actor: Actor, tool_id: str, req: ToolUpdate) -> Tool:
        """Apply the fields sent (nulls ignored). A new source re-derives the schema of a custom Python tool unless
        a schema is sent too (the stored schema stays when the new source yields none); a schema naming another
        function renames the tool. As in Letta, a schema sent (or built from `args_json_schema`) leaves the tool's
        `description` and `metadata_.tool_hash` as they were; only memlet's re-derived schema brings its docstring's
        description along, when the tool's description was the old schema's."""
        tool = await self.get_row(actor, tool_id)
        fields = {k: v for k, v in req.model_dump(exclude_unset=True).items() if v is not None}
        if tool.tool_type.startswith("letta_"):
            # Letta rebuilds a built-in tool's schema from its code whenever it reads the tool, so a schema sent
            # for one is never seen (and one naming another function broke the tool); its name and schema stay.
            fields.pop("json_schema", None)
        old_schema = tool.json_schema or {}
        rederived = "json_schema" not in fields and "args_json_schema" not in fields
        schema = self._updated_schema(tool, fields)
        if schema is not None:
            fields["json_schema"] = schema
            new_name = schema.get("name") or tool.name
            if new_name != tool.name and await self.tools.name_taken(
                actor.organization_id, new_name, exclude_id=tool.id
            ):
                raise name_conflict(new_name)
            fields["name"] = new_name
            if rederived and "description" not in fields and tool.description == old_schema.get("description"):
                fields["description"] = schema.get("description")
        if "source_code" in fields:
            source_type = fields.get("source_type", tool.source_type)
            name = fields.get("name", tool.name)
            _check_source_defines(name, fields["source_code"], source_type, (schema or old_schema).get("name"))
        for key, value in fields.items():
            setattr(tool, key, value)
        tool.last_updated_by_id = actor.user_id
        await self.session.flush()
        return Tool.model_validate(tool)

    def _updated_schema(self, tool: orm.Tool, fields: dict[str, Any]) -> dict[str, Any] | None:
        if "json_schema" in fields:  # wins over an `args_json_schema` sent with it, which is only stored
            return dict(fields["json_schema"])
        if tool.tool_type != CUSTOM:
            return None
        source = fields.get("source_code", tool.source_code)
        if "args_json_schema" in fields:
            if not source:
                raise BadRequestError("Source code required when updating with args_json_schema")
            return schema_from_args(source, fields["args_json_schema"], name=tool.name)
        if source and "source_code" in fields and fields.get("source_type", tool.source_type) in _PYTHON:
            # Letta never rebuilt the schema from a new source; memlet does when it can (a changed signature
            # needs it), and keeps the stored one, as Letta would, when the new source does not yield one.
            try:
                return derive_json_schema(source, name=tool.name)
            except BadRequestError:
                return None
        return None


def _lacks_base_tools(rows: list[orm.Tool], filters: ToolFilters, page: Page) -> bool:
    """Whether a built-in tool is missing from a page that holds the org's whole (unfiltered, or built-in only)
    set. Letta upserts the built-in tools whenever a first page lacks one, which is nearly every page; memlet
    checks only pages it can judge from their own rows, so listing costs no extra statement."""
    if page.after is not None or page.before is not None or (page.limit is not None and len(rows) >= page.limit):
        return False
    narrowed = (filters.names, filters.tool_ids, filters.search, filters.tool_types, filters.exclude_tool_types)
    if any(value is not None and value != "" for value in narrowed) or filters.exclude_names:
        return False
    return not BASE_TOOLS.keys() <= {row.name for row in rows}


def _run_name(req: ToolRunFromSource) -> str:
    if req.name:
        return req.name
    if req.json_schema and isinstance(req.json_schema.get("name"), str):
        return str(req.json_schema["name"])
    if req.args_json_schema:
        return function_name(req.source_code)
    return str(derive_json_schema(req.source_code)["name"])


async def run_from_source(req: ToolRunFromSource, settings: Settings) -> ToolReturnMessage:
    """Run source once in the sandbox without storing a tool; failures of the tool come back as status "error"."""
    if req.source_type not in (None, "python", "typescript"):
        raise BadRequestError(f"Tool source type is not supported at this time. Found {req.source_type}")
    if req.source_type == "typescript":
        raise BadRequestError("TypeScript tools cannot be run on this server")
    name = _run_name(req)
    result = await run_tool(
        req.source_code,
        name,
        req.args,
        env=req.env_vars,
        timeout_s=settings.tool_timeout_s,
        memory_mb=settings.tool_memory_mb,
        policy=SandboxPolicy.from_settings(settings),
        args_json_schema=req.args_json_schema,
    )
    # Letta shows str() of the returned value (a dict as Python's repr), not the model-facing JSON text; past its
    # default limit, the whole text with its note.
    if result.status == "success" and result.value is not None:
        tool_return = str(noted_over_limit(result.value, DEFAULT_RETURN_CHAR_LIMIT))
    else:
        tool_return = result.func_return or ""
    # Letta answers with the literal id "null": the message is never stored.
    item = ToolReturn(
        tool_return=tool_return,
        status=result.status,
        tool_call_id="null",
        stdout=result.stdout,
        stderr=result.stderr,
    )
    return ToolReturnMessage(
        id="null",
        date=datetime.now(UTC),
        name=req.name,
        tool_return=tool_return,
        status=result.status,
        tool_call_id="null",
        stdout=result.stdout,
        stderr=result.stderr,
        tool_returns=[item],
    )
