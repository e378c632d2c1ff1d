"""What reaches the model (issue #11 item 4): the recorded chat requests, and what the user then sees."""

import asyncio
import base64
import json
from typing import Any

import pytest

from memlet.db import models as orm
from memlet.loop import images
from memlet.loop.events import RunFailed
from memlet.messages.requests import MessageCreate
from tests.mock_llm import MOCK_IMAGE, Call, Reply
from tests.service.loop_factories import CustomTool, LoopEnv, function_schema, loop_env
from tests.service.test_loop_streaming import assert_labels, committed, deltas, views

__all__ = ["loop_env"]

LONG = CustomTool(
    name="long_text",
    source_code='def long_text(n: int) -> str:\n    """Many characters.\n\n    Args:\n        n: how many\n    """\n'
    '    return "x" * n\n',
    json_schema=function_schema("long_text", {"n": {"type": "integer"}}, ["n"]),
)
PICK = CustomTool(
    name="pick",
    source_code='def pick(mode: str) -> str:\n    """Pick.\n\n    Args:\n        mode: which\n    """\n'
    "    return mode\n",
    json_schema=function_schema("pick", {"mode": {"type": "string"}}, ["mode"]),
)


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


class TestParallelToolCalls:
    async def test_on_every_call_runs_and_returns_share_one_row(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(llm={"parallel_tool_calls": True})
        mock_llm.script(
            Reply.tool_calls(
                Call("memory_insert", {"label": "human", "new_string": "Likes tea."}, id="call_a"),
                Call("memory_insert", {"label": "persona", "new_string": "Calm."}, id="call_b"),
            ),
            Reply.text("noted"),
        )
        out = await loop_env.send(agent, "remember two things")
        assert mock_llm.requests[0]["parallel_tool_calls"] is True
        assistant, returns, text = out.messages
        assert [c.id for c in assistant.tool_calls] == ["call_a", "call_b"]
        assert returns.role == "tool" and [r.tool_call_id for r in returns.tool_returns] == ["call_a", "call_b"]
        # The next request answers each call with its own tool message.
        wire = mock_llm.requests[1]["messages"]
        assert [m["tool_call_id"] for m in wire if m["role"] == "tool"] == ["call_a", "call_b"]
        assert text.content[0].text == "noted"

    async def test_off_only_the_first_call_runs(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(
            Reply.tool_calls(
                Call("memory_insert", {"label": "human", "new_string": "One."}, id="call_a"),
                Call("memory_insert", {"label": "human", "new_string": "Two."}, id="call_b"),
            ),
            Reply.text("ok"),
        )
        out = await loop_env.send(agent, "go")
        assert mock_llm.requests[0]["parallel_tool_calls"] is False
        assert [c.id for c in out.messages[0].tool_calls] == ["call_a"]
        rows = await loop_env.in_context(agent.id)
        assert "Two." not in json.dumps([r.content for r in rows])

    async def test_tool_rules_turn_it_off(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "memory_insert", "type": "continue_loop"}]
        agent = await loop_env.agent(llm={"parallel_tool_calls": True}, tool_rules=rules)
        await loop_env.send(agent, "hi")
        assert mock_llm.requests[0]["parallel_tool_calls"] is False


class TestParameters:
    async def test_reasoning_model_gets_developer_role_effort_and_verbosity(self, loop_env: LoopEnv, mock_llm) -> None:
        # A memgpt_v2 agent's (a letta_v1 agent's goes to the Responses API: the next test).
        llm = {"model": "gpt-5-mini", "reasoning_effort": "low", "verbosity": "high", "parallel_tool_calls": True}
        agent = await loop_env.agent(llm=llm, agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.tool_call("send_message", {"message": "hi", "thinking": "greet"}))
        await loop_env.send(agent, "hi")
        body = mock_llm.requests[0]
        assert body["messages"][0]["role"] == "developer"
        assert (body["reasoning_effort"], body["verbosity"], body["temperature"]) == ("low", "high", 1.0)
        assert "parallel_tool_calls" not in body  # reasoning models refuse it

    async def test_a_letta_v1_reasoner_gets_them_in_the_responses_form(self, loop_env: LoopEnv, mock_llm) -> None:
        llm = {"model": "gpt-5-mini", "reasoning_effort": "low", "verbosity": "high", "parallel_tool_calls": True}
        agent = await loop_env.agent(llm=llm)
        await loop_env.send(agent, "hi")
        body = mock_llm.requests[0]
        assert body["_api"] == "responses" and body["input"][0]["role"] == "developer"
        assert (body["reasoning"], body["text"]) == ({"effort": "low", "summary": "detailed"}, {"verbosity": "high"})
        assert body["temperature"] is None and body["parallel_tool_calls"] is False

    async def test_chat_model_gets_penalty_and_format_but_no_effort(self, loop_env: LoopEnv, mock_llm) -> None:
        llm = {"frequency_penalty": 0.5, "response_format": {"type": "json_object"}, "reasoning_effort": "high"}
        agent = await loop_env.agent(llm={**llm, "verbosity": "low"})
        await loop_env.send(agent, "hi")
        body = mock_llm.requests[0]
        assert body["messages"][0]["role"] == "system"
        assert (body["frequency_penalty"], body["response_format"]) == (0.5, {"type": "json_object"})
        assert "reasoning_effort" not in body and "verbosity" not in body

    async def test_strict_tools(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(llm={"strict": True})
        await loop_env.send(agent, "hi")
        tool = next(t["function"] for t in mock_llm.requests[0]["tools"] if t["function"]["name"] == "memory_insert")
        assert tool["strict"] is True and tool["parameters"]["additionalProperties"] is False
        assert set(tool["parameters"]["required"]) == set(tool["parameters"]["properties"])

    @pytest.mark.parametrize("endpoint_type", ["deepseek", "xai"])
    async def test_no_strict_tools_where_the_provider_has_none(
        self, loop_env: LoopEnv, mock_llm, endpoint_type
    ) -> None:
        llm = {"strict": True, "model_endpoint_type": endpoint_type, "model_endpoint": mock_llm.base_url}
        agent = await loop_env.agent(llm=llm)
        await loop_env.send(agent, "hi")
        tool = next(t["function"] for t in mock_llm.requests[0]["tools"] if t["function"]["name"] == "memory_insert")
        assert "strict" not in tool and "additionalProperties" not in tool["parameters"]


class TestToolChoice:
    async def test_vllm_gets_auto_where_others_get_required(self, loop_env: LoopEnv, mock_llm) -> None:
        plain = await loop_env.agent(agent_type="memgpt_v2_agent")
        vllm = await loop_env.agent(agent_type="memgpt_v2_agent", llm={"handle": "vllm/qwen", "model": "qwen"})
        for agent in (plain, vllm):
            mock_llm.script(Reply.tool_call("send_message", {"thinking": "t", "message": "hi"}))
            await loop_env.send(agent, "hi")
        assert [r["tool_choice"] for r in mock_llm.requests] == ["required", "auto"]

    async def test_only_letta_v1_agents_get_auto_on_the_v3_loop(self, loop_env: LoopEnv, mock_llm) -> None:
        sleeptime = await loop_env.agent(agent_type="sleeptime_agent", tool_rules=[])
        v1 = await loop_env.agent(agent_type="letta_v1_agent", tool_rules=[])
        for agent in (sleeptime, v1):
            await loop_env.send(agent, "hi")
        assert [r["tool_choice"] for r in mock_llm.requests] == ["required", "auto"]


class TestThinkingArgument:
    async def test_only_when_put_inner_thoughts_in_kwargs(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent", llm={"put_inner_thoughts_in_kwargs": False})
        mock_llm.script(
            Reply.tool_call("send_message", {"message": "hello"}, content="I should greet."), Reply.text("")
        )
        out = await loop_env.send(agent, "hi")
        schema = next(t["function"] for t in mock_llm.requests[0]["tools"] if t["function"]["name"] == "send_message")
        assert "thinking" not in schema["parameters"]["properties"]
        # The model's own text is its inner thought, stored and shown as reasoning.
        assert out.messages[0].content[0].text == "I should greet."
        with_kwarg = await loop_env.agent(agent_type="memgpt_v2_agent")
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "t", "message": "hello"}))
        await loop_env.send(with_kwarg, "hi")
        schema = next(t["function"] for t in mock_llm.requests[-1]["tools"] if t["function"]["name"] == "send_message")
        assert schema["parameters"]["required"][0] == "thinking"


class TestScrubbedThoughts:
    """Letta's `scrub_inner_thoughts_from_messages`: with reasoning fully off, text beside a call is not sent."""

    async def test_text_beside_a_call_goes_out_as_null_content(self, loop_env: LoopEnv, mock_llm) -> None:
        # What the catalog gives a letta_v1 agent on openai/gpt-4o-mini.
        agent = await loop_env.agent(llm={"enable_reasoner": False, "max_reasoning_tokens": 0})
        mock_llm.script(
            Reply.tool_call("conversation_search", {"query": "tea"}, content="Let me check"), Reply.text("Nothing.")
        )
        out = await loop_env.send(agent, "what did I say about tea?")
        [assistant] = [m for m in mock_llm.requests[1]["messages"] if m.get("tool_calls")]
        assert assistant["content"] is None
        assert out.messages[0].content[0].text == "Let me check"  # still stored and shown

    async def test_kept_while_a_reasoner_is_on(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(llm={"enable_reasoner": True, "max_reasoning_tokens": 0})
        mock_llm.script(
            Reply.tool_call("conversation_search", {"query": "tea"}, content="Let me check"), Reply.text("Nothing.")
        )
        await loop_env.send(agent, "what did I say about tea?")
        [assistant] = [m for m in mock_llm.requests[1]["messages"] if m.get("tool_calls")]
        assert assistant["content"] == "Let me check"


class TestPastCallArguments:
    async def test_v2_thoughts_go_back_first_in_indented_json(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent")  # put_inner_thoughts_in_kwargs on
        mock_llm.script(
            Reply.tool_call("conversation_search", {"query": "tea", "request_heartbeat": True}),  # no thoughts
            Reply.tool_call("conversation_search", {"thinking": "Again.", "query": "tea", "request_heartbeat": True}),
            Reply.tool_call("send_message", {"thinking": "Tell them.", "message": "Nothing."}),
        )
        await loop_env.send(agent, "tea?")
        calls = [m for m in mock_llm.requests[2]["messages"] if m.get("tool_calls")]
        assert [m["content"] for m in calls] == [None, None]
        assert [m["tool_calls"][0]["function"]["arguments"] for m in calls] == [
            '{\n  "thinking": null,\n  "query": "tea",\n  "request_heartbeat": true\n}',
            '{\n  "thinking": "Again.",\n  "query": "tea",\n  "request_heartbeat": true\n}',
        ]


class TestNames:
    async def test_a_user_name_is_sent_when_openai_takes_it(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        await loop_env.send(agent, MessageCreate(role="user", content="hi", name="Bob"))
        await loop_env.send(agent, MessageCreate(role="user", content="again", name="Bob Smith"))  # a space: left out
        users = [m for m in mock_llm.requests[1]["messages"] if m["role"] == "user"]
        assert [(m["content"], m.get("name")) for m in users] == [("hi", "Bob"), ("again", None)]


class TestResponseFormat:
    async def test_json_schema_shapes_send_message(self, loop_env: LoopEnv, mock_llm) -> None:
        answer = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        fmt = {"type": "json_schema", "json_schema": {"name": "answer", "schema": answer}}
        agent = await loop_env.agent(agent_type="memgpt_v2_agent", response_format=fmt)
        mock_llm.script(Reply.tool_call("send_message", {"thinking": "t", "message": {"city": "Paris"}}))
        await loop_env.send(agent, "where?")
        send = next(t["function"] for t in mock_llm.requests[0]["tools"] if t["function"]["name"] == "send_message")
        assert list(send["parameters"]["properties"]) == ["thinking", "message"]
        assert send["parameters"]["properties"]["message"] == answer

    async def test_json_object_takes_any_object_on_letta_v1_too(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(
            tools=["send_message", "conversation_search"], response_format={"type": "json_object"}
        )
        await loop_env.send(agent, "hi")
        tools = {t["function"]["name"]: t["function"] for t in mock_llm.requests[0]["tools"]}
        message = tools["send_message"]["parameters"]["properties"]["message"]
        assert (message["type"], message["additionalProperties"], message["properties"]) == ("object", True, {})
        assert "message" not in tools["conversation_search"]["parameters"]["properties"]


class TestImages:
    def image_message(self, url: str) -> MessageCreate:
        parts = [{"type": "text", "text": "what is this?"}, {"type": "image", "source": {"type": "url", "url": url}}]
        return MessageCreate.model_validate({"role": "user", "content": parts})

    async def test_url_image_is_fetched_and_sent_as_base64(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        url = mock_llm.base_url.removesuffix("/v1") + "/_mock/image.png"
        await loop_env.send(agent, self.image_message(url))
        user = mock_llm.requests[0]["messages"][-1]
        encoded = base64.b64encode(MOCK_IMAGE).decode()
        assert user["content"][1]["image_url"]["url"] == f"data:image/png;base64,{encoded}"
        stored = [r for r in await loop_env.in_context(agent.id) if r.role == "user"][-1]
        assert stored.content[1]["source"] == {"type": "base64", "media_type": "image/png", "data": encoded}

    async def test_several_images_are_fetched_at_once(
        self, loop_env: LoopEnv, mock_llm, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        real_fetch, in_flight, peak = images._fetch, [0], [0]

        async def slow_fetch(fetcher: Any, url: str) -> tuple[str, str]:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            try:
                await asyncio.sleep(0.2)
                return await real_fetch(fetcher, url)
            finally:
                in_flight[0] -= 1

        monkeypatch.setattr(images, "_fetch", slow_fetch)
        monkeypatch.setattr(images, "CONCURRENT_FETCHES", 3, raising=False)
        agent = await loop_env.agent()
        url = mock_llm.base_url.removesuffix("/v1") + "/_mock/image.png"
        parts = [{"type": "text", "text": "compare"}] + [
            {"type": "image", "source": {"type": "url", "url": f"{url}?n={n}"}} for n in range(6)
        ]
        await loop_env.send(agent, MessageCreate.model_validate({"role": "user", "content": parts}))
        assert peak[0] == 3  # six images, three at a time
        sent = mock_llm.requests[0]["messages"][-1]["content"][1:]
        encoded = base64.b64encode(MOCK_IMAGE).decode()
        assert [p["image_url"]["url"] for p in sent] == [f"data:image/png;base64,{encoded}"] * 6

    async def test_an_image_past_the_size_limit_is_refused(
        self, loop_env: LoopEnv, mock_llm, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(images, "MAX_IMAGE_BYTES", len(MOCK_IMAGE) - 1)
        agent = await loop_env.agent()
        url = mock_llm.base_url.removesuffix("/v1") + "/_mock/image.png"
        out = await loop_env.send(agent, self.image_message(url))
        assert isinstance(out.final, RunFailed)
        assert f"is larger than {len(MOCK_IMAGE) - 1} bytes" in str(out.final.error)
        assert mock_llm.requests == []

    async def test_private_url_is_refused(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        out = await loop_env.send(agent, self.image_message("http://169.254.169.254/latest/image.png"))
        assert isinstance(out.final, RunFailed)
        assert "not allowed" in str(out.final.error)
        assert mock_llm.requests == []


class TestToolReturnCap:
    async def test_long_return_is_cut_in_the_request_but_stored_whole(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(custom_tools=[LONG], context_window=8000)  # cap: max(5000, 8000*0.8)
        mock_llm.script(Reply.tool_call("long_text", {"n": 9000}), Reply.text("done"))
        await loop_env.send(agent, "go")
        sent = next(m for m in mock_llm.requests[1]["messages"] if m["role"] == "tool")["content"]
        assert len(sent) < 6500 and sent.endswith("chars]") and "... [truncated " in sent
        stored = [r for r in await loop_env.in_context(agent.id) if r.role == "tool"][-1]
        assert len(stored.content[0]["text"]) > 9000


class TestRules:
    async def test_max_count_per_step_continues_like_a_child_rule(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [
            {"tool_name": "send_message", "type": "exit_loop"},
            {"tool_name": "conversation_search", "type": "max_count_per_step", "max_count_limit": 1},
        ]
        agent = await loop_env.agent(agent_type="memgpt_v2_agent", tool_rules=rules)
        mock_llm.script(
            Reply.tool_call("conversation_search", {"thinking": "t", "query": "x", "request_heartbeat": False}),
            Reply.tool_call("send_message", {"thinking": "t", "message": "done"}),
        )
        out = await loop_env.send(agent, "search")
        assert len(mock_llm.requests) == 2  # no heartbeat asked, yet the loop went on
        heartbeat = [m for m in out.messages if m.role == "user"]
        assert heartbeat and "child tool rule" in heartbeat[0].content[0].text

    async def test_client_tools_are_offered_whatever_the_rules(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "conversation_search", "type": "run_first"}]
        agent = await loop_env.agent(tool_rules=rules)
        client = [{"name": "open_file", "description": "Open.", "parameters": {"type": "object", "properties": {}}}]
        await loop_env.send(agent, "hi", client_tools=client)
        assert tool_names(mock_llm.requests[0]) == ["conversation_search", "open_file"]
        assert mock_llm.requests[0]["tool_choice"] == "required"

    async def test_bad_prefilled_arguments_stop_with_invalid_tool_call(self, loop_env: LoopEnv, mock_llm) -> None:
        rules = [{"tool_name": "pick", "type": "run_first", "args": {"mode": 3, "other": "x"}}]
        agent = await loop_env.agent(custom_tools=[PICK], tool_rules=rules)
        mock_llm.script(Reply.tool_call("pick", {"mode": "a"}))
        out = await loop_env.send(agent, "go")
        assert out.final.stop_reason == "invalid_tool_call"
        returned = json.loads(out.messages[-1].content[0].text)
        assert returned["status"] == "Failed" and "other" in returned["message"] and "'mode' = 3" in returned["message"]
        run = await loop_env.get(orm.Run, out.run_id)
        assert run.stop_reason == "invalid_tool_call"


class TestThinkingInContentStreamed:
    async def test_content_streams_as_the_stored_reasoning(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent(agent_type="memgpt_v2_agent", llm={"put_inner_thoughts_in_kwargs": False})
        mock_llm.script(Reply.tool_call("send_message", {"message": "hello"}, content="I should greet."))
        out = await loop_env.send(agent, "hi", stream_tokens=True)
        assistant = committed(out)[0]
        reasoning_view, message_view = [v for v in views(committed(out), v2=True) if v.id == assistant.id]
        assert reasoning_view.message_type == "reasoning_message"
        assert_labels(deltas(out, "reasoning"), reasoning_view)
        assert "".join(d.text or "" for d in deltas(out, "reasoning")) == reasoning_view.reasoning == "I should greet."
        assert_labels(deltas(out, "assistant"), message_view)


class TestModelOverride:
    async def test_llm_config_override_applies_to_this_request_only(self, loop_env: LoopEnv, mock_llm) -> None:
        agent = await loop_env.agent()
        mock_llm.script(Reply.text("a"), Reply.text("b"))
        await loop_env.send(agent, "hi", override_model="openai/gpt-4o", llm_config_override={"model": "gpt-4o"})
        await loop_env.send(agent, "again")
        assert [r["model"] for r in mock_llm.requests] == ["gpt-4o", "gpt-4o-mini"]
        assert (await loop_env.get(orm.Agent, agent.id)).llm_config["model"] == "gpt-4o-mini"
