"""Letta 0.16.8's multi-agent tool `send_message_to_agents_matching_tags` finds its recipients through the agent
list (`client.agents.list`), which leaves hidden agents out: a subagent (tagged `role:subagent`) or an agent
created with `hidden: true` is never asked, whatever its tags."""

import ast
from typing import Any

from letta_client import Letta

from tests.mock_llm import MockLLM, Reply

TAGS = "send_message_to_agents_matching_tags"


def make_agent(client: Letta, *, tags: list[str], **extra: Any) -> Any:
    return client.agents.create(
        agent_type="letta_v1_agent",
        model="openai/gpt-4o-mini",
        embedding="openai/text-embedding-3-small",
        tags=tags,
        extra_body=extra,
    )


def test_hidden_agents_are_not_among_the_recipients(client: Letta, mock_llm: MockLLM) -> None:
    supervisor = make_agent(client, tags=[], include_multi_agent_tools=True)
    worker = make_agent(client, tags=["team", "a"])
    subagent = make_agent(client, tags=["team", "a", "role:subagent"])
    hidden = make_agent(client, tags=["team", "a"], hidden=True)
    mock_llm.reset()
    mock_llm.script(
        Reply.tool_call(TAGS, {"message": "roll call", "match_all": ["team"], "match_some": ["a"]}),
        Reply.text("worker here"),
        Reply.text("done"),
    )
    response = client.agents.messages.create(supervisor.id, messages=[{"role": "user", "content": "go"}])
    (ret,) = [m for m in response.messages if m.message_type == "tool_return_message"]
    assert ast.literal_eval(ret.tool_return) == [{"agent_id": worker.id, "response": ["worker here"]}]
    assert len(mock_llm.requests) == 3
    for agent in (subagent, hidden):
        assert list(client.runs.list(agent_id=agent.id).items) == []
