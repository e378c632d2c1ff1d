"""The state API's wire models against Letta 0.16.8's captured responses and the letta-client 1.12.1 SDK.

Responses: each captured sample validates into our model and dumps back identical (same keys in the same order at
every depth, same values, same nulls). Requests: what the SDK sends validates, and what we send back passes the
SDK's strict response validation.
"""

import json
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from letta_client import Letta
from pydantic import BaseModel, TypeAdapter, ValidationError

from memlet.agents.parts import CompactionSettings, ContextWindowOverview
from memlet.agents.schemas import AgentState, CreateAgent, UpdateAgent
from memlet.blocks.schemas import Block, BlockUpdate, CreateBlock, Memory
from memlet.errors import BadRequestError
from memlet.folders.line_view import file_defaults_for_context_window
from memlet.identities.schemas import Identity, IdentityCreate, IdentityProperty
from memlet.providers.schemas import (
    EmbeddingConfig,
    EmbeddingModel,
    LLMConfig,
    Model,
    ModelSettings,
    OpenAIModelSettings,
    OtherModelSettings,
    Provider,
    ProviderCreate,
)
from memlet.tools.schemas import Tool, ToolCreate, ToolUpdate
from tests.shared_paths import SAMPLES

AGENT_ID = "agent-1d1ff1b3-6cf6-4b22-ac35-10ba953d7730"
TOOL_ID = "tool-226917f3-0f81-4ad6-8754-a51b57ae48b3"
BLOCK_ID = "block-fbde3dd6-5072-42f7-90f4-5a83f25444f4"


PART_MODELS: dict[str, type[BaseModel]] = {
    "llm_config": LLMConfig,
    "embedding_config": EmbeddingConfig,
    "memory": Memory,
    "compaction_settings": CompactionSettings,
}


def load(name: str) -> Any:
    return json.loads((SAMPLES / f"{name}.json").read_text())


def dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True)


def assert_same_shape(ours: Any, theirs: Any, path: str = "$") -> None:
    """Same keys in the same order at every depth, and equal leaves (1 == 1.0, as JSON compares numbers)."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), path
        assert list(ours) == list(theirs), f"{path}: keys differ: {set(ours) ^ set(theirs)}"
        for key in theirs:
            assert_same_shape(ours[key], theirs[key], f"{path}.{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list), path
        assert len(ours) == len(theirs), path
        for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            assert_same_shape(mine, other, f"{path}[{index}]")
    else:
        assert ours == theirs, f"{path}: {ours!r} != {theirs!r}"


class TestSamplesRoundTrip:
    @pytest.mark.parametrize("name", ["agent_state", "create_agent_response"])
    def test_agent_state(self, name: str) -> None:
        sample = load(name)
        assert_same_shape(dump(AgentState.model_validate(sample)), sample)

    def test_list_agents(self) -> None:
        for sample in load("list_agents"):
            assert_same_shape(dump(AgentState.model_validate(sample)), sample)

    @pytest.mark.parametrize("part", ["llm_config", "embedding_config", "memory", "compaction_settings"])
    def test_agent_parts_alone(self, part: str) -> None:
        sample = load("agent_state")[part]
        model = PART_MODELS[part]
        assert_same_shape(dump(model.model_validate(sample)), sample)

    def test_model_settings(self) -> None:
        sample = load("agent_state")["model_settings"]
        settings = TypeAdapter(ModelSettings).validate_python(sample)
        assert isinstance(settings, OpenAIModelSettings)
        assert_same_shape(dump(settings), sample)

    def test_tools(self) -> None:
        for sample in load("agent_state")["tools"]:
            assert_same_shape(dump(Tool.model_validate(sample)), sample)

    def test_block_after_edit(self) -> None:
        sample = load("block_after_edit")
        assert_same_shape(dump(Block.model_validate(sample)), sample)

    def test_list_blocks_of_agent(self) -> None:
        for sample in load("list_blocks_of_agent"):
            assert_same_shape(dump(Block.model_validate(sample)), sample)

    def test_list_models(self) -> None:
        for sample in load("list_models"):
            assert_same_shape(dump(Model.model_validate(sample)), sample)

    def test_list_embedding_models(self) -> None:
        for sample in load("list_embedding_models"):
            assert_same_shape(dump(EmbeddingModel.model_validate(sample)), sample)


class TestBuiltFromDefaults:
    """Objects we build ourselves have exactly Letta's keys and default values."""

    def test_block_defaults(self) -> None:
        sample = load("block_after_edit")
        block = dump(Block(value="v", label="human", id=BLOCK_ID))
        assert list(block) == list(sample)
        assert block["limit"] == 100000
        assert block["metadata"] == {}
        assert block["tags"] == []
        assert block["preserve_on_migration"] is False
        assert block["hidden"] is None

    def test_block_gets_a_block_id(self) -> None:
        assert Block(value="v").id.startswith("block-")

    def test_tool_defaults(self) -> None:
        sample = load("agent_state")["tools"][0]
        tool = dump(Tool(name="t"))
        assert list(tool) == list(sample)
        assert tool["id"].startswith("tool-")
        assert (tool["tool_type"], tool["return_char_limit"], tool["metadata_"], tool["tags"]) == (
            "custom",
            50000,
            {},
            [],
        )
        assert tool["enable_parallel_execution"] is False

    def test_llm_config_defaults(self) -> None:
        config = dump(LLMConfig(model="m", model_endpoint_type="openai", context_window=8000))
        assert list(config) == list(load("agent_state")["llm_config"])
        assert config["temperature"] == 1.0
        assert config["enable_reasoner"] is True
        assert config["put_inner_thoughts_in_kwargs"] is False

    def test_llm_config_null_inner_thoughts_becomes_false(self) -> None:
        config = LLMConfig(
            model="m", model_endpoint_type="openai", context_window=8000, put_inner_thoughts_in_kwargs=None
        )
        assert config.put_inner_thoughts_in_kwargs is False

    def test_embedding_config_defaults(self) -> None:
        config = dump(EmbeddingConfig(embedding_endpoint_type="openai", embedding_model="e", embedding_dim=8))
        assert list(config) == list(load("agent_state")["embedding_config"])
        assert (config["embedding_chunk_size"], config["batch_size"]) == (300, 32)

    def test_model_from_llm_config_matches_listing(self) -> None:
        sample = next(m for m in load("list_models") if m["handle"] == "openai/gpt-4o-mini")
        config = LLMConfig.model_validate({k: v for k, v in sample.items() if k in LLMConfig.model_fields})
        assert_same_shape(dump(Model.from_llm_config(config)), sample)

    def test_embedding_model_from_config_matches_listing(self) -> None:
        sample = next(m for m in load("list_embedding_models") if m["handle"] == "openai/text-embedding-3-small")
        config = EmbeddingConfig.model_validate(sample)
        built = EmbeddingModel.from_embedding_config(config, provider_type="openai", provider_name="openai")
        assert_same_shape(dump(built), sample)

    @pytest.mark.parametrize(
        ("context_window", "expected"),
        [(None, (5, 50000)), (8000, (3, 5000)), (32000, (5, 15000)), (128000, (10, 25000)), (10**6, (15, 40000))],
    )
    def test_file_defaults_follow_context_window(self, context_window: int | None, expected: tuple[int, int]) -> None:
        assert file_defaults_for_context_window(context_window) == expected

    def test_agent_state_fills_unset_file_limits(self) -> None:
        sample = load("agent_state") | {"max_files_open": None, "per_file_view_window_char_limit": None}
        agent = AgentState.model_validate(sample)
        assert (agent.max_files_open, agent.per_file_view_window_char_limit) == (10, 25000)


class TestCreateAgent:
    def test_accepts_captured_request(self) -> None:
        request = CreateAgent.model_validate(load("create_agent_request"))
        assert request.name == "smoke-agent-raw"
        assert request.model == "openai/gpt-4o-mini"
        assert [b.label for b in request.memory_blocks or []] == ["human", "persona"]
        assert request.memory_blocks
        assert request.memory_blocks[0].limit == 100000

    def test_defaults_match_letta(self) -> None:
        request = CreateAgent()
        assert request.agent_type == "letta_v1_agent"
        assert request.include_base_tools is True
        assert request.include_base_tool_rules is None
        assert request.include_multi_agent_tools is False
        assert request.message_buffer_autoclear is False
        assert request.enable_reasoner is True
        assert request.embedding_chunk_size == 300
        assert request.initial_message_sequence is None
        assert request.memory_blocks is None
        assert request.tool_rules is None
        assert request.name.isalpha()

    def test_model_handle_without_provider_is_400(self) -> None:
        with pytest.raises(BadRequestError, match="INVALID_ARGUMENT: The model handle should be in the format"):
            CreateAgent(model="gpt-4o-mini")

    def test_embedding_handle_without_provider_is_422(self) -> None:
        with pytest.raises(ValidationError, match="embedding handle should be in the format"):
            CreateAgent(embedding="text-embedding-3-small")

    def test_unsafe_name_rejected(self) -> None:
        with pytest.raises(BadRequestError, match="contains invalid characters"):
            CreateAgent(name="a/b")

    def test_unicode_name_accepted(self) -> None:
        assert CreateAgent(name="Агент número 1's").name == "Агент número 1's"

    def test_malformed_tool_id_rejected(self) -> None:
        with pytest.raises(ValidationError):
            CreateAgent(tool_ids=["tool-123"])

    def test_max_files_open_over_limit_is_400(self) -> None:
        with pytest.raises(BadRequestError, match="max_files_open cannot exceed 1000"):
            CreateAgent(max_files_open=1001)

    def test_voice_agent_needs_sleeptime(self) -> None:
        with pytest.raises(ValidationError, match="requires enable_sleeptime"):
            CreateAgent(agent_type="voice_convo_agent")

    def test_unknown_fields_ignored(self) -> None:
        assert CreateAgent.model_validate({"name": "a", "brand_new_sdk_field": 1}).name == "a"

    def test_tool_rules_are_typed(self) -> None:
        request = CreateAgent.model_validate({"tool_rules": [{"tool_name": "send_message", "type": "exit_loop"}]})
        assert request.tool_rules
        assert type(request.tool_rules[0]).__name__ == "TerminalToolRule"


class TestOtherModels:
    def test_provider_never_serializes_credentials(self) -> None:
        provider = Provider(
            name="p", provider_type="openai", provider_category="byok", api_key="sk-1", api_key_enc="x", access_key="a"
        )
        out = dump(provider)
        assert (out["api_key"], out["api_key_enc"], out["access_key"], out["access_key_enc"]) == (None,) * 4
        assert "sk-1" not in provider.model_dump_json()

    def test_provider_create_strips_key(self) -> None:
        assert ProviderCreate(name="p", provider_type="openai", api_key=" sk-1\n").api_key == "sk-1"

    def test_unknown_provider_type_settings_kept(self) -> None:
        raw = {"provider_type": "moonshot", "temperature": 0.2, "strict": True}
        settings = TypeAdapter(ModelSettings).validate_python(raw)
        assert isinstance(settings, OtherModelSettings)
        assert dump(settings) == {"max_output_tokens": 4096, "parallel_tool_calls": True, **raw}

    def test_model_settings_need_provider_type(self) -> None:
        with pytest.raises(ValidationError):
            TypeAdapter(ModelSettings).validate_python({"temperature": 0.2})

    def test_openai_model_settings_defaults(self) -> None:
        assert dump(OpenAIModelSettings()) == {
            "max_output_tokens": 4096,
            "parallel_tool_calls": True,
            "provider_type": "openai",
            "temperature": 0.7,
            "reasoning": {"reasoning_effort": "high"},
            "response_format": None,
            "strict": True,
        }

    def test_tool_update_reads_metadata_underscore(self) -> None:
        assert ToolUpdate.model_validate({"metadata_": {"a": 1}}).metadata_ == {"a": 1}

    def test_typescript_tool_needs_schema(self) -> None:
        with pytest.raises(ValidationError, match="TypeScript tools require"):
            ToolCreate(source_code="export {}", source_type="typescript")

    def test_block_value_cleaning(self) -> None:
        assert CreateBlock.model_validate({"label": "l", "value": None}).value == ""
        assert Block(value="a\x00b").value == "ab"
        assert Block.model_validate({"value": "v", "tags": None}).tags == []

    def test_block_reads_orm_metadata_attribute(self) -> None:
        # A SQLAlchemy row has `metadata` (the table MetaData) and keeps the JSON column as `metadata_`.
        row = SimpleNamespace(value="v", label="human", id=BLOCK_ID, metadata=object(), metadata_={"a": 1}, tags=None)
        block = Block.model_validate(row)
        assert (block.metadata, block.tags) == ({"a": 1}, [])

    def test_block_update_keeps_only_what_was_sent(self) -> None:
        assert BlockUpdate(value="x").model_dump(exclude_unset=True) == {"value": "x"}

    def test_identity_property_value_keeps_its_type(self) -> None:
        values = [IdentityProperty(key="k", value=v, type="json").value for v in (True, 3, 2.5, "s", {"a": 1})]
        assert [type(v) for v in values] == [bool, int, float, str, dict]

    def test_identity_create_checks_agent_ids(self) -> None:
        with pytest.raises(ValidationError):
            IdentityCreate(identifier_key="k", name="n", identity_type="user", agent_ids=["nope"])
        identity = Identity(identifier_key="k", name="n", identity_type="user", agent_ids=[], block_ids=[])
        assert list(dump(identity)) == [
            "id",
            "identifier_key",
            "name",
            "identity_type",
            "project_id",
            "agent_ids",
            "block_ids",
            "properties",
        ]

    def test_context_window_overview(self) -> None:
        required = [n for n, f in ContextWindowOverview.model_fields.items() if f.is_required()]
        data = {n: "" if n in {"external_memory_summary", "system_prompt", "core_memory"} else 0 for n in required}
        overview = ContextWindowOverview.model_validate(data | {"functions_definitions": None, "messages": []})
        assert dump(overview)["num_tokens_tool_usage_rules"] == 0
        assert dump(overview)["memory_filesystem"] is None


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
