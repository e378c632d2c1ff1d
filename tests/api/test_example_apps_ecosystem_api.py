"""What Letta's example apps need from memlet, driven the way they drive it (see each test for the app).

- deep-research (letta-client 0.1.256) and sleep-time-compute upsert tools from Python functions
  (`client.tools.upsert_from_function`: the function's source, and for deep-research a pydantic model's
  `model_json_schema()` as `args_json_schema`), attach them with Letta's memory tools and talk to the agent. Letta
  0.16.8 keeps a tool's JSON schema as it was built (a `json` column), so the model sees the parameters in the
  function's order; Postgres `jsonb` would sort an object's keys by length.
- The same holds for a structured-output schema (`model_settings.response_format`, a conversation's model settings,
  an agent's `response_format`): the model writes its answer's keys in the schema's order.
"""

from typing import Any

from letta_client import Letta
from pydantic import BaseModel, Field

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"

# sleep-time-compute's tool, as `inspect.getsource` hands it to the server (docstring shortened).
RETHINK_MEMORY = '''def rethink_memory(agent_state: "AgentState", new_memory: str, target_block_label: Optional[str], source_block_label: Optional[str]) -> Optional[str]:  # type: ignore
    """
    Used for "thinking" about a situation and storing useful inferences.

    Args:
        new_memory (str): The new text that will be stored in the rethink_memory_block.
        source_block_label (str): The name of the block to integrate information from.
        target_block_label (str): The name of the block to write to.
    Returns:
        Optional[str]: None is always returned as this function does not produce a response.
    """
    if target_block_label is not None:
        agent_state.memory.update_block_value(label=target_block_label, value=new_memory)
    return None
'''

# deep-research's tool and its args model.
CREATE_RESEARCH_PLAN = '''def create_research_plan(agent_state: "AgentState", research_plan: List[str], topic: str):
    """Initiate a research process by coming up with an initial plan.

    Args:
        research_plan (List[str]): The sequential research plan to help guide the search process
        topic (str): The research topic
    """
    steps = "".join(f"- [ ] Step {i + 1} - {step}\\n" for i, step in enumerate(research_plan))
    agent_state.memory.update_block_value(label="research_plan", value=f"Research `{topic}`:\\n{steps}")
    return "Research plan successfully created, time to execute the plan!"
'''


class ResearchPlanData(BaseModel):
    research_plan: list[str] = Field(..., description="The sequential research plan to help guide the search process")
    topic: str = Field(..., description="The research topic to investigate")


def _properties(schema: dict[str, Any]) -> list[str]:
    return list(schema["parameters"]["properties"])


def _sent_tools(mock_llm: MockLLM) -> dict[str, list[str]]:
    """Each tool's parameters, in the order the model was shown them on the first request."""
    return {t["function"]["name"]: _properties(t["function"]) for t in mock_llm.requests[0]["tools"]}


def test_tools_from_functions_keep_their_parameter_order(client: Letta, mock_llm: MockLLM) -> None:
    rethink = client.tools.upsert(source_code=RETHINK_MEMORY)
    plan = client.tools.upsert(source_code=CREATE_RESEARCH_PLAN, args_json_schema=ResearchPlanData.model_json_schema())
    signature = ["new_memory", "target_block_label", "source_block_label"]
    for shown in (rethink, client.tools.retrieve(rethink.id), client.tools.list(name="rethink_memory").items[0]):
        assert _properties(shown.json_schema or {}) == signature
    for shown in (plan, client.tools.retrieve(plan.id)):
        assert _properties(shown.json_schema or {}) == ["research_plan", "topic"]
        assert list((shown.args_json_schema or {})["properties"]) == ["research_plan", "topic"]

    agent = client.agents.create(
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=[{"label": "research_plan", "value": "Ready"}],
        tools=["create_research_plan", "memory_replace"],
        tool_ids=[rethink.id],
    )
    mock_llm.reset()
    mock_llm.script(Reply.text("ok"))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "Research postgres"}])
    sent = _sent_tools(mock_llm)
    assert sent["rethink_memory"] == signature
    assert sent["create_research_plan"] == ["research_plan", "topic"]
    # Letta's own tools too: memory_replace(label, old_string, new_string).
    assert sent["memory_replace"] == ["label", "old_string", "new_string"]
    attached = {t.name: _properties(t.json_schema or {}) for t in client.agents.tools.list(agent.id).items}
    assert attached["memory_replace"] == ["label", "old_string", "new_string"]


# A structured answer whose reasoning comes first: OpenAI writes the keys in the schema's order.
ANSWER_SCHEMA = {
    "name": "answer",
    "schema": {
        "type": "object",
        "properties": {"reasoning": {"type": "string"}, "answer": {"type": "string"}},
        "required": ["reasoning", "answer"],
    },
}
JSON_ANSWER = {"provider_type": "openai", "response_format": {"type": "json_schema", "json_schema": ANSWER_SCHEMA}}


def _sent_format(mock_llm: MockLLM) -> list[str]:
    return list(mock_llm.requests[0]["response_format"]["json_schema"]["schema"]["properties"])


def test_a_structured_output_schema_keeps_its_key_order(client: Letta, http: Any, mock_llm: MockLLM) -> None:
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, model_settings=JSON_ANSWER)  # type: ignore[arg-type]
    stored = http.get(f"/v1/agents/{agent.id}").json()["llm_config"]["response_format"]
    assert list(stored["json_schema"]["schema"]["properties"]) == ["reasoning", "answer"]
    mock_llm.reset()
    mock_llm.script(Reply.text('{"reasoning": "r", "answer": "a"}'))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
    assert _sent_format(mock_llm) == ["reasoning", "answer"]

    # A conversation's own model settings too.
    conversation = http.post(
        "/v1/conversations/", params={"agent_id": agent.id}, json={"model_settings": JSON_ANSWER}
    ).json()
    mock_llm.reset()
    mock_llm.script(Reply.text('{"reasoning": "r", "answer": "a"}'))
    sent = http.post(
        f"/v1/conversations/{conversation['id']}/messages",
        json={"messages": [{"role": "user", "content": "hi"}], "streaming": False},
    )
    assert sent.status_code == 200, sent.text
    assert _sent_format(mock_llm) == ["reasoning", "answer"]


def test_an_agents_response_format_shapes_send_message_in_its_key_order(client: Letta, mock_llm: MockLLM) -> None:
    agent = client.agents.create(
        agent_type="memgpt_v2_agent",
        model=MODEL,
        embedding=EMBEDDING,
        response_format={"type": "json_schema", "json_schema": ANSWER_SCHEMA},
    )
    assert list((agent.response_format.json_schema or {})["schema"]["properties"]) == ["reasoning", "answer"]  # type: ignore[union-attr]
    mock_llm.reset()
    mock_llm.script(Reply.tool_call("send_message", {"message": {"reasoning": "r", "answer": "a"}}))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
    send = next(t["function"] for t in mock_llm.requests[0]["tools"] if t["function"]["name"] == "send_message")
    assert list(send["parameters"]["properties"]["message"]["properties"]) == ["reasoning", "answer"]
