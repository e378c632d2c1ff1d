"""The state API's wire models against Letta 0.16.8's captured responses, and the defaults they are built from.

Each captured sample validates into our model and dumps back identical (same keys in the same order at every
depth, same values, same nulls).
"""

from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from memlet.agents.parts import CompactionSettings
from memlet.agents.schemas import AgentState
from memlet.blocks.schemas import Block, Memory
from memlet.folders.line_view import file_defaults_for_context_window
from memlet.providers.schemas import (
    EmbeddingConfig,
    EmbeddingModel,
    LLMConfig,
    Model,
    ModelSettings,
    OpenAIModelSettings,
)
from memlet.tools.schemas import Tool
from tests.unit.wire_support import BLOCK_ID, dump, load

PART_MODELS: dict[str, type[BaseModel]] = {
    "llm_config": LLMConfig,
    "embedding_config": EmbeddingConfig,
    "memory": Memory,
    "compaction_settings": CompactionSettings,
}


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
