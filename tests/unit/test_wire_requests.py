"""Validation of the state API's request and other wire models: `CreateAgent` and the provider, tool, block and
identity models (Letta 0.16.8 rules).
"""

from types import SimpleNamespace

import pytest
from pydantic import TypeAdapter, ValidationError

from memlet.agents.parts import ContextWindowOverview
from memlet.agents.schemas import CreateAgent
from memlet.blocks.schemas import Block, BlockUpdate, CreateBlock
from memlet.errors import BadRequestError
from memlet.identities.schemas import Identity, IdentityCreate, IdentityProperty
from memlet.providers.schemas import (
    ModelSettings,
    OpenAIModelSettings,
    OtherModelSettings,
    Provider,
    ProviderCreate,
)
from memlet.tools.schemas import ToolCreate, ToolUpdate
from tests.unit.wire_support import BLOCK_ID, dump, load


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
            "organization_id",
            "properties",
        ]

    def test_context_window_overview(self) -> None:
        required = [n for n, f in ContextWindowOverview.model_fields.items() if f.is_required()]
        data = {n: "" if n in {"external_memory_summary", "system_prompt", "core_memory"} else 0 for n in required}
        overview = ContextWindowOverview.model_validate(data | {"functions_definitions": None, "messages": []})
        assert dump(overview)["num_tokens_tool_usage_rules"] == 0
        assert dump(overview)["memory_filesystem"] is None
