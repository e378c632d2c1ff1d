"""Request fields that depend on the provider, as Letta's clients for them add them: Z.ai's thinking switch for GLM
reasoners, OpenRouter's reasoning settings, Groq's named tool choices, the "." that Z.ai, Fireworks and Baseten get
for an empty text. The mock records what each request sent."""

from typing import Any

import pytest

from tests.mock_llm import Reply
from tests.service.loop_factories import LoopEnv, loop_env

__all__ = ["loop_env"]


async def first_request(loop_env: LoopEnv, mock_llm: Any, **llm: Any) -> dict[str, Any]:
    agent = await loop_env.agent(llm={"model_endpoint": mock_llm.base_url, **llm})
    await loop_env.send(agent, "hi")
    body: dict[str, Any] = mock_llm.requests[-1]
    return body


class TestZaiThinking:
    @pytest.mark.parametrize("endpoint_type", ["zai", "fireworks"])
    async def test_a_glm_reasoner_thinks_and_keeps_its_thinking(
        self, loop_env: LoopEnv, mock_llm, endpoint_type
    ) -> None:
        body = await first_request(loop_env, mock_llm, model="glm-4.6", model_endpoint_type=endpoint_type)
        assert body["thinking"] == {"type": "enabled", "clear_thinking": False}

    async def test_reasoning_off_switches_thinking_off(self, loop_env: LoopEnv, mock_llm) -> None:
        llm = {"model": "glm-5", "model_endpoint_type": "zai", "enable_reasoner": False}
        assert (await first_request(loop_env, mock_llm, **llm))["thinking"] == {"type": "disabled"}

    async def test_older_glm_models_get_no_switch(self, loop_env: LoopEnv, mock_llm) -> None:
        assert "thinking" not in await first_request(loop_env, mock_llm, model="glm-4", model_endpoint_type="zai")


class TestGlm5Stop:
    """A GLM-5 model is stopped at its turn markers on any OpenAI-compatible endpoint, as Letta's OpenAI client
    asks (its own names for the model end in "glm-5"); other GLM models are not."""

    @pytest.mark.parametrize(
        ("endpoint_type", "model"),
        [("zai", "glm-5"), ("fireworks", "accounts/fireworks/models/glm-5"), ("baseten", "zai-org/GLM-5")],
    )
    async def test_glm5_stops_at_turn_markers(self, loop_env: LoopEnv, mock_llm, endpoint_type, model) -> None:
        body = await first_request(loop_env, mock_llm, model=model, model_endpoint_type=endpoint_type)
        assert body["stop"] == ["<|user|>", "<|assistant|>", "<|observation|>"]

    async def test_other_models_get_no_stop(self, loop_env: LoopEnv, mock_llm) -> None:
        assert "stop" not in await first_request(loop_env, mock_llm, model="glm-5-turbo", model_endpoint_type="zai")


class TestChatTemplateThinking:
    """GLM-5 outside Z.ai's switch and OpenRouter, and Baseten's Kimi K2.5, are asked to think through
    `chat_template_args` while reasoning is on; OpenRouter's GLM-5 leaves some hosts out."""

    @pytest.mark.parametrize(
        ("endpoint_type", "model"),
        [
            ("baseten", "zai-org/GLM-5"),
            ("fireworks", "accounts/fireworks/models/glm-5"),
            ("baseten", "moonshotai/Kimi-K2.5"),
        ],
    )
    async def test_thinking_asked_through_the_chat_template(
        self, loop_env: LoopEnv, mock_llm, endpoint_type, model
    ) -> None:
        body = await first_request(loop_env, mock_llm, model=model, model_endpoint_type=endpoint_type)
        assert body["chat_template_args"] == {"enable_thinking": True}
        off = await first_request(
            loop_env, mock_llm, model=model, model_endpoint_type=endpoint_type, enable_reasoner=False
        )
        assert "chat_template_args" not in off

    async def test_not_where_thinking_has_its_own_switch(self, loop_env: LoopEnv, mock_llm) -> None:
        assert "chat_template_args" not in await first_request(
            loop_env, mock_llm, model="glm-5", model_endpoint_type="zai"
        )
        body = await first_request(loop_env, mock_llm, model="z-ai/glm-5", provider_name="openrouter")
        assert "chat_template_args" not in body
        assert body["provider"] == {
            "ignore": ["deepinfra/fp4", "ambient/fp8", "io-net/fp8", "phala", "siliconflow/fp8"]
        }


class TestOpenRouterReasoning:
    async def test_reasoning_on_by_default(self, loop_env: LoopEnv, mock_llm) -> None:
        body = await first_request(loop_env, mock_llm, model="qwen/qwen3-32b", provider_name="openrouter")
        assert body["reasoning"] == {"enabled": True}

    async def test_effort_and_budget_from_the_config(self, loop_env: LoopEnv, mock_llm) -> None:
        llm = {"model": "x/y", "provider_name": "openrouter", "reasoning_effort": "low", "max_reasoning_tokens": 2048}
        assert (await first_request(loop_env, mock_llm, **llm))["reasoning"] == {"effort": "low", "max_tokens": 2048}

    async def test_none_when_reasoning_is_off_or_elsewhere(self, loop_env: LoopEnv, mock_llm) -> None:
        off = {"model": "x/y", "provider_name": "openrouter", "enable_reasoner": False}
        assert "reasoning" not in await first_request(loop_env, mock_llm, **off)
        assert "reasoning" not in await first_request(loop_env, mock_llm)  # OpenAI itself


async def test_groq_gets_required_where_others_name_the_tool(loop_env: LoopEnv, mock_llm) -> None:
    rules = [{"tool_name": "conversation_search", "type": "run_first"}]
    choices = []
    for llm in ({}, {"model_endpoint_type": "groq", "model_endpoint": mock_llm.base_url}):
        agent = await loop_env.agent(agent_type="memgpt_v2_agent", tool_rules=rules, llm=llm)
        mock_llm.script(Reply.tool_call("conversation_search", {"thinking": "t", "query": "tea"}))
        await loop_env.send(agent, "hi")
        choices.append(mock_llm.requests[-1]["tool_choice"])
    assert choices == [{"type": "function", "function": {"name": "conversation_search"}}, "required"]


class TestEmptyTextFiller:
    """Z.ai, Fireworks and Baseten refuse an empty text: Letta's clients for them send "." in its place (null for an
    assistant's blank text beside its tool calls); other endpoints get the text as it is."""

    async def second_request(self, loop_env: LoopEnv, mock_llm: Any, endpoint_type: str) -> list[dict[str, Any]]:
        llm = {"model": "glm-4", "model_endpoint_type": endpoint_type, "model_endpoint": mock_llm.base_url}
        agent = await loop_env.agent(llm=llm)
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}, content="  "))
        await loop_env.send(agent, " ")
        messages: list[dict[str, Any]] = mock_llm.requests[-1]["messages"]
        return messages

    @pytest.mark.parametrize("endpoint_type", ["zai", "fireworks", "baseten"])
    async def test_blank_texts_are_filled(self, loop_env: LoopEnv, mock_llm, endpoint_type) -> None:
        messages = await self.second_request(loop_env, mock_llm, endpoint_type)
        assert [m["content"] for m in messages if m["role"] == "user"][-1] == "."
        call = next(m for m in messages if m["role"] == "assistant" and m.get("tool_calls"))
        assert call["content"] is None

    async def test_other_endpoints_get_the_text_as_is(self, loop_env: LoopEnv, mock_llm) -> None:
        messages = await self.second_request(loop_env, mock_llm, "openai")
        assert [m["content"] for m in messages if m["role"] == "user"][-1] == " "


async def test_gpt_oss_gets_empty_text_for_null_content(loop_env: LoopEnv, mock_llm) -> None:
    """The gpt-oss models refuse null content: an assistant message with only tool calls carries "" instead, as
    Letta's OpenAI client sends it; other models get null."""
    contents = []
    for model in ("gpt-oss-120b", "gpt-4o-mini"):
        agent = await loop_env.agent(
            llm={"model": model, "model_endpoint_type": "vllm", "model_endpoint": mock_llm.base_url}
        )
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}))
        await loop_env.send(agent, "hi")
        messages = mock_llm.requests[-1]["messages"]
        contents.append(next(m for m in messages if m["role"] == "assistant" and m.get("tool_calls"))["content"])
    assert contents == ["", None]
