"""The wire models against the letta-client 1.12.1 SDK: what the SDK sends validates, and what we send back passes
the SDK's strict response validation.
"""

import json
from typing import Any

import httpx
from letta_client import Letta

from memlet.agents.schemas import AgentState, CreateAgent, UpdateAgent
from memlet.blocks.schemas import Block, BlockUpdate, CreateBlock
from memlet.providers.schemas import (
    EmbeddingModel,
    Model,
)
from memlet.tools.schemas import Tool, ToolCreate, ToolUpdate
from tests.unit.wire_support import BLOCK_ID, dump, load

AGENT_ID = "agent-1d1ff1b3-6cf6-4b22-ac35-10ba953d7730"


TOOL_ID = "tool-226917f3-0f81-4ad6-8754-a51b57ae48b3"


class _Recorder:
    """An httpx transport that records each request body and answers with a canned JSON body."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content or b"{}"))
        return httpx.Response(200, json=self.reply)

    def client(self) -> Letta:
        http = httpx.Client(transport=httpx.MockTransport(self))
        return Letta(base_url="http://memlet.test", api_key="k", http_client=http, _strict_response_validation=True)


class TestLettaClientSdk:
    """Bodies the SDK sends validate into our requests; our responses pass the SDK's strict validation."""

    def test_create_agent_round_trip(self) -> None:
        recorder = _Recorder(dump(AgentState.model_validate(load("agent_state"))))
        with recorder.client() as client:
            agent = client.agents.create(
                name="sdk-agent",
                model="openai/gpt-4o-mini",
                embedding="openai/text-embedding-3-small",
                memory_blocks=[{"label": "human", "value": "Bob", "limit": 5000, "metadata": {"a": 1}}],
                tool_ids=[TOOL_ID],
                tools=["web_search"],
                tool_rules=[
                    {"tool_name": "send_message", "type": "exit_loop"},
                    {"tool_name": "a", "type": "constrain_child_tools", "children": ["b"]},
                ],
                model_settings={
                    "provider_type": "openai",
                    "temperature": 0.3,
                    "reasoning": {"reasoning_effort": "low"},
                },
                compaction_settings={"mode": "all", "clip_chars": None},
                initial_message_sequence=[{"role": "user", "content": "hi"}],
                secrets={"API": "x"},
                include_base_tool_rules=False,
                context_window_limit=32000,
                llm_config={"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 128000},
                embedding_config={
                    "embedding_endpoint_type": "openai",
                    "embedding_model": "text-embedding-3-small",
                    "embedding_dim": 1536,
                },
                response_format={"type": "json_object"},
                metadata={"k": "v"},
                timezone="Europe/Paris",
            )
        assert agent.id == AGENT_ID
        assert agent.llm_config.context_window == 128000
        request = CreateAgent.model_validate(recorder.bodies[0])
        assert request.model_settings is not None
        assert request.model_settings.temperature == 0.3
        assert request.compaction_settings is not None
        assert request.compaction_settings.clip_chars is None
        assert request.secrets == {"API": "x"}

    def test_update_agent(self) -> None:
        recorder = _Recorder(dump(AgentState.model_validate(load("agent_state"))))
        with recorder.client() as client:
            client.agents.update(
                AGENT_ID,
                name="renamed",
                block_ids=[BLOCK_ID],
                message_ids=["message-9d986fdc-a698-4fc7-8d0f-119a16b98b28"],
                model_settings={"provider_type": "anthropic", "effort": "xhigh"},
                last_stop_reason="end_turn",
            )
        update = UpdateAgent.model_validate(recorder.bodies[0])
        assert update.model_dump(exclude_unset=True).keys() == {
            "name",
            "block_ids",
            "message_ids",
            "model_settings",
            "last_stop_reason",
        }

    def test_blocks(self) -> None:
        recorder = _Recorder(dump(Block.model_validate(load("block_after_edit"))))
        with recorder.client() as client:
            created = client.blocks.create(label="human", value="Bob", description="d", tags=["t"])
            client.blocks.update(BLOCK_ID, value="Bob 2", limit=200)
        assert created.id == BLOCK_ID
        assert CreateBlock.model_validate(recorder.bodies[0]).tags == ["t"]
        assert BlockUpdate.model_validate(recorder.bodies[1]).model_dump(exclude_unset=True) == {
            "value": "Bob 2",
            "limit": 200,
        }

    def test_tools(self) -> None:
        recorder = _Recorder(dump(Tool.model_validate(load("agent_state")["tools"][0])))
        with recorder.client() as client:
            tool = client.tools.create(
                source_code="def f():\n    return 1\n", pip_requirements=[{"name": "requests"}], tags=["x"]
            )
            client.tools.update(TOOL_ID, metadata={"owner": "me"}, return_char_limit=10)
        assert tool.metadata == {}
        assert ToolCreate.model_validate(recorder.bodies[0]).pip_requirements is not None
        assert ToolUpdate.model_validate(recorder.bodies[1]).metadata_ == {"owner": "me"}

    def test_model_listings(self) -> None:
        recorder = _Recorder([dump(Model.model_validate(m)) for m in load("list_models")])
        with recorder.client() as client:
            models = client.models.list()
        assert models[0].handle == "letta/letta-free"
        recorder = _Recorder([dump(EmbeddingModel.model_validate(m)) for m in load("list_embedding_models")])
        with recorder.client() as client:
            embedding_models = client.models.embeddings.list()
        assert embedding_models[0].embedding_dim == 1536
