"""Sleeptime agents through letta-client: creation, firing every Nth turn, shared-memory edits, lifecycle."""

import json

import httpx
import pytest
from letta_client import Letta

from tests.api.sleeptime_support import (
    RUN_TYPE,
    SLEEPTIME_PROMPT_MARK,
    groups,
    make_main,
    say,
    sleeptime_of,
    sleeptime_requests,
    sleeptime_runs,
    wait_all_ended,
    wait_for,
)
from tests.api.test_multi_agent_tools_api import WAIT, make_agent
from tests.mock_llm import MockLLM, Reply


@pytest.fixture(autouse=True)
def sleeptime_replies_apart(server: object, mock_llm: MockLLM) -> None:
    """The sleeptime agent's requests never take a reply scripted for the main agent (they answer "OK"). After
    `server`, whose reset of the mock would otherwise drop the route."""
    mock_llm.script_when(SLEEPTIME_PROMPT_MARK)


class TestEnableSleeptime:
    def test_creates_the_sleeptime_agent_and_group(self, client: Letta, http: httpx.Client) -> None:
        main = make_main(client)
        assert main.enable_sleeptime is True
        assert sorted(a.name for a in client.agents.list()) == ["main", "main-sleeptime"]
        helper = sleeptime_of(client, main)
        assert helper.agent_type == "sleeptime_agent"
        assert sorted(t.name for t in helper.tools) == [
            "memory_finish_edits",
            "memory_insert",
            "memory_replace",
            "memory_rethink",
        ]
        rules = {(r.tool_name, r.type) for r in helper.tool_rules or []}
        assert rules == {
            ("memory_replace", "continue_loop"),
            ("memory_insert", "continue_loop"),
            ("memory_rethink", "continue_loop"),
            ("memory_finish_edits", "exit_loop"),
        }
        main_blocks = {b.id for b in client.agents.blocks.list(main.id)}
        helper_blocks = {b.label: b.id for b in helper.blocks}
        assert main_blocks < set(helper_blocks.values())
        assert set(helper_blocks) == {"human", "persona", "memory_persona"}
        assert helper.llm_config.model == main.llm_config.model
        assert client.agents.messages.list(helper.id).items[0].message_type == "system_message"
        assert len(client.agents.messages.list(helper.id).items) == 1
        (group,) = groups(http)
        assert group["manager_type"] == "sleeptime"
        assert group["manager_agent_id"] == main.id
        assert group["agent_ids"] == [helper.id]
        assert (group["sleeptime_agent_frequency"], group["turns_counter"], group["description"]) == (5, -1, "")

    def test_main_agent_replies_with_send_message(self, client: Letta, mock_llm: MockLLM) -> None:
        main = make_main(client)
        tools = {t.name for t in client.agents.tools.list(main.id)}
        assert tools == {"send_message", "conversation_search", "archival_memory_search"}
        response = say(client, mock_llm, main.id, "hello")
        assert response.stop_reason.stop_reason == "tool_rule"
        # As Letta's V3 loop renders a send's messages: the call and its return, whatever use_assistant_message says.
        call, returned = response.messages[-2:]
        assert (call.message_type, returned.message_type) == ("tool_call_message", "tool_return_message")
        assert call.tool_call.name == "send_message"
        assert json.loads(call.tool_call.arguments)["message"] == "re: hello"
        mock_llm.script(Reply.tool_call("send_message", {"message": "re: again"}))
        streamed = list(
            client.agents.messages.stream(main.id, messages=[{"role": "user", "content": "again"}], stream_tokens=True)
        )
        assert "assistant_message" not in {getattr(c, "message_type", None) for c in streamed}
        assert "tool_call_message" in {getattr(c, "message_type", None) for c in streamed}
        # A listing still shows the reply as an assistant message.
        listed = client.agents.messages.list(main.id, limit=100).items
        assert "re: hello" in [m.content for m in listed if m.message_type == "assistant_message"]

    def test_patch_enables_it_once(self, client: Letta, http: httpx.Client) -> None:
        main = client.agents.create(name="later", model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
        assert groups(http) == []
        client.agents.update(main.id, enable_sleeptime=True)
        client.agents.update(main.id, enable_sleeptime=True)
        assert sorted(a.name for a in client.agents.list()) == ["later", "later-sleeptime"]
        assert len(groups(http)) == 1

    def test_a_main_agent_with_its_own_memory_persona_shares_it(self, client: Letta) -> None:
        # As Letta's own sleeptime test does: the sleeptime agent takes that block instead of a second one (409).
        main = client.agents.create(
            name="facts",
            agent_type="sleeptime_agent",
            memory_blocks=[{"label": "memory_persona", "value": "Keep facts."}, {"label": "facts", "value": "x"}],
            model="openai/gpt-4o-mini",
            embedding="openai/text-embedding-3-small",
            enable_sleeptime=True,
        )
        helper = sleeptime_of(client, main)
        personas = [b for b in helper.blocks if b.label == "memory_persona"]
        assert [b.value for b in personas] == ["Keep facts."]
        assert {b.id for b in main.memory.blocks} <= {b.id for b in helper.blocks}

    def test_a_block_attached_later_reaches_the_sleeptime_agent(self, client: Letta) -> None:
        main = make_main(client)
        block = client.blocks.create(label="project", value="memlet")
        client.agents.blocks.attach(block.id, agent_id=main.id)
        helper = sleeptime_of(client, main)
        assert block.id in {b.id for b in helper.blocks}


class TestFiring:
    def test_every_fifth_turn_from_the_first(self, client: Letta, mock_llm: MockLLM, http: httpx.Client) -> None:
        main = make_main(client)
        helper = sleeptime_of(client, main)
        fired: list[list[str] | None] = []
        for turn in range(1, 8):
            response = say(client, mock_llm, main.id, f"turn {turn}")
            fired.append(response.usage.run_ids)
            wait_all_ended(client, helper.id, 1 if turn < 6 else 2)
        runs = sleeptime_runs(client, helper.id)
        assert [r.status for r in runs] == ["completed", "completed"]
        assert all(r.metadata["run_type"] == RUN_TYPE for r in runs)
        assert [i for i, ids in enumerate(fired, 1) if ids] == [1, 6]
        assert fired[0] == [runs[0].id] and fired[5] == [runs[1].id]  # only the sleeptime runs, as in Letta
        (first, second) = [r for r in sleeptime_requests(mock_llm) if r["messages"][-1]["role"] == "user"]
        sent = first["messages"][-1]["content"]
        assert sent.startswith("<system-reminder>")
        assert "Messages:\nuser: turn 1\nassistant: re: turn 1" in sent
        later = second["messages"][-1]["content"]
        assert "user: turn 2" in later and "user: turn 6" in later and "turn 1" not in later.split("Messages:")[1]
        (group,) = groups(http)
        assert group["turns_counter"] == 1

    def test_a_sleeptime_edit_reaches_the_main_agents_next_prompt(self, client: Letta, mock_llm: MockLLM) -> None:
        main = make_main(client)
        helper = sleeptime_of(client, main)
        mock_llm.script_when(
            SLEEPTIME_PROMPT_MARK,
            Reply.tool_call(
                "memory_replace",
                {"label": "human", "old_string": "not known yet.", "new_string": "Ada; she likes tea."},
            ),
            Reply.tool_call("memory_insert", {"label": "human", "new_string": "Lives in Lyon."}),
            Reply.tool_call("memory_finish_edits", {}),
        )
        say(client, mock_llm, main.id, "I'm Ada, I like tea and live in Lyon")
        (run,) = wait_all_ended(client, helper.id, 1)
        assert run.status == "completed"
        assert run.metadata["agent_id"] == helper.id
        # The response is stored with the run's completion (Letta's metadata.result).
        result = wait_for(lambda: client.runs.retrieve(run.id).metadata.get("result"), "the run's result")
        assert [m["message_type"] for m in result["messages"]].count("tool_call_message") == 3
        assert result["stop_reason"]["stop_reason"] == "tool_rule"
        human = client.agents.blocks.retrieve("human", agent_id=main.id)
        assert "Ada; she likes tea." in human.value and "Lives in Lyon." in human.value
        say(client, mock_llm, main.id, "what do you remember?")
        system = mock_llm.requests[-1]["messages"][0]["content"]
        assert "Ada; she likes tea." in system and "Lives in Lyon." in system

    def test_run_ids_of_a_turn_that_does_not_fire(self, client: Letta, mock_llm: MockLLM) -> None:
        # Letta's legacy runner (memgpt-style main agents) always sets the list; the letta_v1 runner leaves it null.
        v1 = make_main(client, "v1")
        legacy = make_main(client, "legacy", agent_type="memgpt_v2_agent")
        for agent in (v1, legacy):
            assert say(client, mock_llm, agent.id, "first").usage.run_ids
            wait_all_ended(client, sleeptime_of(client, agent).id, 1)
        assert say(client, mock_llm, v1.id, "second").usage.run_ids is None
        assert say(client, mock_llm, legacy.id, "second").usage.run_ids == []
        mock_llm.script(Reply.tool_call("send_message", {"message": "streamed"}))
        chunks = list(client.agents.messages.stream(legacy.id, messages=[{"role": "user", "content": "third"}]))
        (usage,) = [c for c in chunks if c.message_type == "usage_statistics"]
        assert usage.run_ids is None  # Letta's stream sends its usage before the firing

    def test_streaming_turns_fire_too(self, client: Letta, mock_llm: MockLLM) -> None:
        main = make_main(client)
        helper = sleeptime_of(client, main)
        mock_llm.script(Reply.tool_call("send_message", {"message": "streamed"}))
        chunks = list(client.agents.messages.stream(main.id, messages=[{"role": "user", "content": "hi"}]))
        usage = [c for c in chunks if c.message_type == "usage_statistics"][-1]
        (run,) = wait_all_ended(client, helper.id, 1)
        assert usage.run_ids == [run.id]

    def test_frequency_one_fires_every_turn(self, client: Letta, mock_llm: MockLLM, http: httpx.Client) -> None:
        main = make_main(client)
        helper = sleeptime_of(client, main)
        (group,) = groups(http)
        config = {"manager_config": {"manager_type": "sleeptime", "sleeptime_agent_frequency": 1}}
        assert http.patch(f"/v1/groups/{group['id']}", json=config).status_code == 200
        for turn in range(1, 4):
            assert say(client, mock_llm, main.id, f"turn {turn}").usage.run_ids
            wait_all_ended(client, helper.id, turn)
        assert [r.status for r in sleeptime_runs(client, helper.id)] == ["completed"] * 3

    def test_the_main_agents_inputs_are_the_groups_messages(
        self, client: Letta, mock_llm: MockLLM, http: httpx.Client
    ) -> None:
        main = make_main(client)
        say(client, mock_llm, main.id, "remember this")
        (group,) = groups(http)
        listed = http.get(f"/v1/groups/{group['id']}/messages").json()
        assert [(m["message_type"], m["content"]) for m in listed] == [("user_message", "remember this")]


class TestLifecycle:
    def test_deleting_the_main_agent_deletes_both(self, client: Letta, http: httpx.Client) -> None:
        main = make_main(client)
        client.agents.delete(main.id)
        assert list(client.agents.list()) == []
        assert groups(http) == []

    def test_deleting_the_sleeptime_agent_turns_it_off(self, client: Letta, http: httpx.Client) -> None:
        main = make_main(client)
        client.agents.delete(sleeptime_of(client, main).id)
        assert groups(http) == []
        assert client.agents.retrieve(main.id).enable_sleeptime is None
        assert [a.name for a in client.agents.list()] == ["main"]


def every_turn(http: httpx.Client) -> None:
    (group,) = groups(http)
    config = {"manager_config": {"manager_type": "sleeptime", "sleeptime_agent_frequency": 1}}
    assert http.patch(f"/v1/groups/{group['id']}", json=config).status_code == 200


class TestEveryRouteFires:
    def test_async_send(self, client: Letta, mock_llm: MockLLM, http: httpx.Client) -> None:
        main = make_main(client)
        helper = sleeptime_of(client, main)
        every_turn(http)
        mock_llm.script(Reply.tool_call("send_message", {"message": "later"}))
        client.agents.messages.create_async(main.id, messages=[{"role": "user", "content": "async hi"}])
        (run,) = wait_all_ended(client, helper.id, 1)
        assert run.status == "completed"

    def test_conversation_send(self, client: Letta, mock_llm: MockLLM, http: httpx.Client) -> None:
        main = make_main(client)
        helper = sleeptime_of(client, main)
        every_turn(http)
        conv = client.conversations.create(agent_id=main.id)
        mock_llm.script(Reply.tool_call("send_message", {"message": "in a thread"}))
        list(client.conversations.messages.create(conv.id, messages=[{"role": "user", "content": "thread hi"}]))
        (run,) = wait_all_ended(client, helper.id, 1)
        assert run.status == "completed"
        (first,) = [r for r in sleeptime_requests(mock_llm) if r["messages"][-1]["role"] == "user"]
        assert "user: thread hi\nassistant: in a thread" in first["messages"][-1]["content"]

    def test_a_stream_the_client_dropped(self, client: Letta, mock_llm: MockLLM, http: httpx.Client) -> None:
        main = make_main(client)
        helper = sleeptime_of(client, main)
        mock_llm.script(Reply.delay(0.5, then=Reply.tool_call("send_message", {"message": "nobody listens"})))
        body = {"messages": [{"role": "user", "content": "bye"}], "stream_tokens": True}
        with http.stream("POST", f"/v1/agents/{main.id}/messages/stream", json=body) as response:
            assert response.status_code == 200
            next(response.iter_lines())  # the first chunk, then the client goes away
        (run,) = wait_all_ended(client, helper.id, 1)
        assert run.status == "completed"

    def test_a_multi_agent_tool_turn(self, client: Letta, mock_llm: MockLLM, http: httpx.Client) -> None:
        # Letta's tools send through the /messages route, so the target's sleeptime group sees the turn.
        supervisor = make_agent(client, multi=True)
        main = make_main(client)
        helper = sleeptime_of(client, main)
        mock_llm.script(
            Reply.tool_call(WAIT, {"message": "note this", "other_agent_id": main.id}),
            Reply.tool_call("send_message", {"message": "noted"}),
            Reply.text("done"),
        )
        client.agents.messages.create(supervisor.id, messages=[{"role": "user", "content": "go"}])
        (run,) = wait_all_ended(client, helper.id, 1)
        assert run.status == "completed"
        (group,) = groups(http)
        assert group["turns_counter"] == 0
        listed = http.get(f"/v1/groups/{group['id']}/messages").json()
        assert [m["message_type"] for m in listed][:1] == ["system_message"]
        assert listed[0]["content"].endswith("] note this")
        (first,) = [r for r in sleeptime_requests(mock_llm) if r["messages"][-1]["role"] == "user"]
        assert "Messages:\nassistant: noted" in first["messages"][-1]["content"]  # system inputs are left out


class TestApprovals:
    def test_an_approval_answer_is_one_of_the_groups_messages(
        self, client: Letta, mock_llm: MockLLM, http: httpx.Client
    ) -> None:
        main = make_main(client, tool_rules=[{"type": "requires_approval", "tool_name": "conversation_search"}])
        mock_llm.script(Reply.tool_call("conversation_search", {"query": "tea"}, id="call_tea"))
        asked = client.agents.messages.create(main.id, messages=[{"role": "user", "content": "search"}])
        assert asked.stop_reason.stop_reason == "requires_approval"
        wait_all_ended(client, sleeptime_of(client, main).id, 1)
        mock_llm.script(Reply.tool_call("send_message", {"message": "found nothing"}))
        answer = {"type": "approval", "tool_call_id": "call_tea", "approve": True}
        client.agents.messages.create(main.id, messages=[{"type": "approval", "approvals": [answer]}])
        (group,) = groups(http)
        listed = http.get(f"/v1/groups/{group['id']}/messages").json()
        assert [m["message_type"] for m in listed] == ["user_message", "approval_response_message"]
