"""Every v1 router, mounted under ``/v1`` in one list."""

from fastapi import APIRouter, Depends
from fastapi.routing import APIRoute

from memlet.agent_files.router import router as agent_files_io_router
from memlet.agents.blocks_router import router as core_memory_router
from memlet.agents.folders_router import router as agent_folders_router
from memlet.agents.internal_router import block_router as internal_block_agents_router
from memlet.agents.internal_router import router as internal_agents_router
from memlet.agents.lookup_router import archive_router as agents_by_archive_router
from memlet.agents.lookup_router import block_router as agents_by_block_router
from memlet.agents.lookup_router import identity_router as agents_by_identity_router
from memlet.agents.router import router as agents_router
from memlet.agents.tools_router import router as agent_tools_router
from memlet.api.validators import check_request_input
from memlet.archives.router import agent_router as agent_archives_router
from memlet.archives.router import router as archives_router
from memlet.blocks.internal_router import router as internal_blocks_router
from memlet.blocks.router import router as blocks_router
from memlet.conversations.router import router as conversations_router
from memlet.folders.agent_files_router import router as agent_files_router
from memlet.folders.file_router import router as folder_files_router
from memlet.folders.file_router import sources_router as source_files_router
from memlet.folders.router import router as folders_router
from memlet.folders.router import sources_router
from memlet.groups.agent_router import router as agent_groups_router
from memlet.groups.router import router as groups_router
from memlet.health.router import router as health_router
from memlet.identities.router import agent_router as agent_identities_router
from memlet.identities.router import block_router as block_identities_router
from memlet.identities.router import router as identities_router
from memlet.jobs.router import router as jobs_router
from memlet.mcp.legacy_router import router as mcp_legacy_router
from memlet.mcp.router import router as mcp_servers_router
from memlet.messages.router import router as messages_router
from memlet.passages.agent_router import router as archival_memory_router
from memlet.passages.router import router as passages_router
from memlet.providers.router import models_router, providers_router
from memlet.runs.internal_router import router as internal_runs_router
from memlet.runs.internal_router import telemetry_router
from memlet.runs.router import router as runs_router
from memlet.runs.steps_router import router as steps_router
from memlet.tags.router import router as tags_router
from memlet.templates.router import router as internal_templates_router
from memlet.tools.router import router as tools_router
from memlet.turns.agent_router import router as agent_messages_router
from memlet.turns.batch_router import router as batches_router
from memlet.turns.chat_router import router as chat_completions_router
from memlet.turns.conversation_router import router as conversation_turns_router
from memlet.turns.generate_router import router as agent_generate_router
from memlet.turns.resume_router import router as run_stream_router
from memlet.turns.tool_router import router as agent_tool_run_router

ROUTERS: list[APIRouter] = [
    agent_files_io_router,  # before agents_router: /agents/import is not an agent id
    agents_router,
    archival_memory_router,
    agent_archives_router,
    archives_router,
    agents_by_archive_router,
    passages_router,
    core_memory_router,
    blocks_router,
    agents_by_block_router,
    agent_files_router,
    agent_folders_router,
    folders_router,
    folder_files_router,
    sources_router,
    source_files_router,
    groups_router,
    agent_groups_router,
    health_router,
    identities_router,
    agents_by_identity_router,
    agent_identities_router,
    block_identities_router,
    agent_messages_router,
    batches_router,  # before messages_router: /messages/batches is not a message id
    conversations_router,
    conversation_turns_router,
    messages_router,
    jobs_router,
    models_router,
    providers_router,
    runs_router,
    run_stream_router,
    steps_router,
    tags_router,
    agent_tools_router,
    agent_tool_run_router,
    agent_generate_router,
    chat_completions_router,
    mcp_servers_router,
    mcp_legacy_router,  # before tools_router: /tools/mcp/... is not a tool id
    tools_router,
    internal_agents_router,
    internal_blocks_router,
    internal_block_agents_router,
    internal_runs_router,
    internal_templates_router,
    telemetry_router,
]


def add_v1_routes(app_router: APIRouter) -> None:
    """Every v1 route straight on the app's router: ``/v1`` + its path, the input check before its own dependencies.

    FastAPI 0.165 keeps included routers nested and matches a request through every level, more than once (~0.7 ms
    a request with these 44 routers, `bench/bench_routing.py`). Flat routes are the same table, in the same order,
    with the same operations, dependencies and OpenAPI document as ``include_router`` would make
    (`tests/unit/test_route_table.py`).
    """
    check_input = Depends(check_request_input)
    for router in ROUTERS:
        for route in router.routes:
            if not isinstance(route, APIRoute) or route.stream_item_type is not None:
                raise TypeError(f"{route!r}: only plain API routes can be flattened")
            app_router.add_api_route(
                "/v1" + route.path,
                route.endpoint,
                response_model=route.response_model,
                status_code=route.status_code,
                tags=route.tags,
                dependencies=[check_input, *route.dependencies],
                summary=route.summary,
                description=route.description,
                response_description=route.response_description,
                responses=route.responses,
                deprecated=route.deprecated,
                methods=route.methods,
                operation_id=route.operation_id,
                response_model_include=route.response_model_include,
                response_model_exclude=route.response_model_exclude,
                response_model_by_alias=route.response_model_by_alias,
                response_model_exclude_unset=route.response_model_exclude_unset,
                response_model_exclude_defaults=route.response_model_exclude_defaults,
                response_model_exclude_none=route.response_model_exclude_none,
                include_in_schema=route.include_in_schema,
                response_class=route.response_class,
                name=route.name,
                callbacks=route.callbacks,
                openapi_extra=route.openapi_extra,
                generate_unique_id_function=route.generate_unique_id_function,
                strict_content_type=route.strict_content_type,
                max_body_size=route.max_body_size,
                form_limits=route.form_limits or None,
            )
