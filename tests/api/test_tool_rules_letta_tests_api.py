"""What Letta 0.16.8's own tool-graph tests (`integration_test_agent_tool_graph.py`) assert about the server, checked
through letta-client against the live server and the mock LLM: rule arguments (`run_first.args`,
`child_arg_nodes`) replace the model's values in the call the user and the model then see, arguments that do
not fit the tool stop the turn, and a new agent with several `run_first` rules needs a structured-output model.
"""

import json
from typing import Any

import pytest
from letta_client import BadRequestError, Letta

from tests.mock_llm import MockLLM, Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
REAL = "REAL_KEY_123"

VALIDATE = f'''def validate_api_key(secret_key: str) -> str:
    """Validates an API key; errors if incorrect.

    Args:
        secret_key: The provided key.
    """
    if secret_key != "{REAL}":
        raise RuntimeError(f"Invalid secret key: {{secret_key}}")
    return "api key accepted"
'''
NOOP = '''def noop() -> str:
    """Returns a simple confirmation string."""
    return "ok"
'''
COMPLEX = '''def complex_child(arr: list, text: str, num: float, flag: bool) -> str:
    """Accepts complex typed arguments and returns a summary string.

    Args:
        arr: Items.
        text: Text to include.
        num: A number to include.
        flag: A flag to include.
    """
    return f"ok:{text}:{num}:{flag}:{len(arr)}"
'''


def make_agent(
    client: Letta,
    sources: list[str],
    rules: list[dict[str, Any]],
    model: str = MODEL,
    agent_type: str = "letta_v1_agent",
) -> Any:
    tool_ids = [client.tools.upsert(source_code=source).id for source in sources]
    return client.agents.create(
        agent_type=agent_type,
        model=model,
        embedding=EMBEDDING,
        memory_blocks=[],
        tool_ids=tool_ids,
        tool_rules=rules,
    )


def calls(messages: list[Any], name: str) -> list[dict[str, Any]]:
    """The arguments of every call to `name`, as the messages show them."""
    return [
        json.loads(m.tool_call.arguments)
        for m in messages
        if m.message_type == "tool_call_message" and m.tool_call.name == name
    ]


def returns(messages: list[Any]) -> list[tuple[str, str]]:
    return [(m.status, m.tool_return) for m in messages if m.message_type == "tool_return_message"]


def sent_calls(request: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The arguments of every call to `name` in the history a model request carried."""
    return [
        json.loads(call["function"]["arguments"])
        for message in request["messages"]
        for call in message.get("tool_calls") or []
        if call["function"]["name"] == name
    ]


class TestPrefilledArguments:
    def test_run_first_args_replace_the_models_in_the_call_shown_and_sent_back(
        self, client: Letta, mock_llm: MockLLM
    ) -> None:
        rules = [
            {"type": "run_first", "tool_name": "validate_api_key", "args": {"secret_key": REAL}},
            {"type": "constrain_child_tools", "tool_name": "validate_api_key", "children": ["noop"]},
        ]
        agent = make_agent(client, [VALIDATE, NOOP], rules)
        mock_llm.script(
            Reply.tool_call("validate_api_key", {"secret_key": "FAKE_KEY_999"}),
            Reply.tool_call("noop", {}),
            Reply.text("Your key is valid."),
        )
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "FAKE_KEY_999"}])
        assert calls(response.messages, "validate_api_key") == [{"secret_key": REAL}]
        assert returns(response.messages) == [("success", "api key accepted"), ("success", "ok")]
        listed = client.agents.messages.list(agent.id, limit=50).items
        assert calls(listed, "validate_api_key") == [{"secret_key": REAL}]
        # The model's next request carries the call as it ran.
        assert sent_calls(mock_llm.requests[1], "validate_api_key") == [{"secret_key": REAL}]

    def test_a_memgpt_v2_agent_uses_them_too(self, client: Letta, mock_llm: MockLLM) -> None:
        # Letta's V2 loop ignored rule arguments (only its V3 loop applied them); memlet applies them for every
        # agent type (README, compatibility notes).
        rules = [{"type": "run_first", "tool_name": "validate_api_key", "args": {"secret_key": REAL}}]
        agent = make_agent(client, [VALIDATE], rules, agent_type="memgpt_v2_agent")
        mock_llm.script(
            Reply.tool_call("validate_api_key", {"secret_key": "FAKE", "request_heartbeat": False}),
        )
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "FAKE"}])
        ((args,),) = [calls(response.messages, "validate_api_key")]
        assert args["secret_key"] == REAL
        assert returns(response.messages) == [("success", "api key accepted")]

    def test_child_arg_nodes_replace_complex_values(self, client: Letta, mock_llm: MockLLM) -> None:
        prefilled = {"arr": [1, 2, 3], "text": "HELLO", "num": 3.14159, "flag": True}
        rules = [
            {"type": "run_first", "tool_name": "noop"},
            {
                "type": "constrain_child_tools",
                "tool_name": "noop",
                "children": ["complex_child"],
                "child_arg_nodes": [{"name": "complex_child", "args": prefilled}],
            },
        ]
        agent = make_agent(client, [NOOP, COMPLEX], rules)
        mock_llm.script(
            Reply.tool_call("noop", {}),
            Reply.tool_call("complex_child", {"arr": [9, 9], "text": "fake", "num": 0, "flag": False}),
            Reply.text("done"),
        )
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "go"}])
        assert calls(response.messages, "complex_child") == [prefilled]
        assert returns(response.messages)[-1] == ("success", "ok:HELLO:3.14159:True:3")

    @pytest.mark.parametrize("args", [{"secret_key": 123}, {"not_a_param": "value"}])
    def test_args_that_do_not_fit_the_tool_stop_the_turn(
        self, client: Letta, mock_llm: MockLLM, args: dict[str, Any]
    ) -> None:
        rules = [
            {"type": "run_first", "tool_name": "validate_api_key", "args": args},
            {"type": "constrain_child_tools", "tool_name": "validate_api_key", "children": ["noop"]},
        ]
        agent = make_agent(client, [VALIDATE, NOOP], rules)
        mock_llm.script(Reply.tool_call("validate_api_key", {"secret_key": "guess"}), Reply.tool_call("noop", {}))
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "go"}])
        assert response.stop_reason.stop_reason == "invalid_tool_call"
        assert len(mock_llm.requests) == 1  # nothing runs after it
        assert calls(response.messages, "validate_api_key") == [{"secret_key": "guess"}]  # the model's, as sent
        ((status, text),) = returns(response.messages)
        assert status == "error" and next(iter(args)) in text


MULTIPLE_INIT = (
    "Multiple initial tools are not supported for non-structured models. Please use only one initial tool rule."
)


class TestSeveralRunFirstRules:
    RULES = [{"type": "run_first", "tool_name": "validate_api_key"}, {"type": "run_first", "tool_name": "noop"}]

    @pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "openai/gpt-4o"])
    def test_a_structured_output_model_takes_them(self, client: Letta, model: str) -> None:
        agent = make_agent(client, [VALIDATE, NOOP], self.RULES, model=model)
        assert [r.type for r in agent.tool_rules or []].count("run_first") == 2

    @pytest.mark.parametrize("model", ["openai/mock-model", "letta/letta-free"])
    def test_any_other_model_is_a_400(self, client: Letta, model: str) -> None:
        with pytest.raises(BadRequestError) as raised:
            make_agent(client, [VALIDATE, NOOP], self.RULES, model=model)
        assert raised.value.status_code == 400
        assert raised.value.body == {"detail": MULTIPLE_INIT}
        assert list(client.agents.list()) == []

    def test_one_run_first_rule_is_fine_with_any_model(self, client: Letta) -> None:
        agent = make_agent(client, [VALIDATE, NOOP], self.RULES[:1], model="openai/mock-model")
        assert [r.type for r in agent.tool_rules or []].count("run_first") == 1


SAVE_DATA = '''def save_data() -> str:
    """Saves important data before exiting."""
    return "Data saved successfully"
'''
WRAP_UP = '''def wrap_up() -> str:
    """Ends the work."""
    return "done"
'''


def test_a_memgpt_v2_agent_held_back_by_required_before_exit_records_that_the_loop_went_on(
    client: Letta, mock_llm: MockLLM
) -> None:
    # Letta's V2 loop decides "go on, a required tool is still uncalled" with the call, so the stored call says
    # `request_heartbeat: true`, and the model reads the heartbeat naming the tool.
    rules = [
        {"type": "required_before_exit", "tool_name": "save_data"},
        {"type": "exit_loop", "tool_name": "wrap_up"},
    ]
    agent = make_agent(client, [SAVE_DATA, WRAP_UP], rules, agent_type="memgpt_v2_agent")
    mock_llm.script(
        Reply.tool_call("wrap_up", {"request_heartbeat": False}),
        Reply.tool_call("save_data", {"request_heartbeat": False}),
    )
    response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "go"}])
    assert response.stop_reason.stop_reason == "end_turn"
    assert calls(response.messages, "wrap_up") == [{"request_heartbeat": True}]
    assert calls(response.messages, "save_data") == [{"request_heartbeat": False}]
    second = mock_llm.requests[1]
    assert [c["request_heartbeat"] for c in sent_calls(second, "wrap_up")] == [True]
    heartbeat = json.loads(second["messages"][-1]["content"])
    assert heartbeat["type"] == "heartbeat"
    assert heartbeat["reason"] == (
        "[This is an automated system message hidden from the user] "
        "Continuing, user expects these tools: [save_data] to be called still."
    )


def test_a_run_first_rule_on_a_tool_the_agent_lacks_offers_every_tool(client: Letta, mock_llm: MockLLM) -> None:
    # Letta offered no tool at all until the first call, so such an agent could never call one (README,
    # compatibility notes); memlet falls back to every tool, as both do when child rules leave nothing.
    agent = make_agent(client, [NOOP], [{"type": "run_first", "tool_name": "send_message"}])
    mock_llm.script(Reply.tool_call("noop", {}), Reply.text("done"))
    response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "go"}])
    assert returns(response.messages) == [("success", "ok")]
    first = mock_llm.requests[0]
    assert "noop" in [t["function"]["name"] for t in first["tools"]]
    assert first["tool_choice"] == "required"


def test_an_approved_required_before_exit_tool_counts_as_called_on_a_memgpt_v2_agent(
    client: Letta, mock_llm: MockLLM
) -> None:
    save = client.tools.create(source_code=SAVE_DATA, default_requires_approval=True)
    agent = client.agents.create(
        agent_type="memgpt_v2_agent",
        model=MODEL,
        embedding=EMBEDDING,
        memory_blocks=[],
        tool_ids=[save.id],
        tool_rules=[{"type": "required_before_exit", "tool_name": "save_data"}],
    )
    mock_llm.script(Reply.tool_call("save_data", {"request_heartbeat": False}, id="call_save"))
    asked = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "save"}])
    assert asked.stop_reason.stop_reason == "requires_approval"
    approval = {"type": "approval", "approvals": [{"type": "approval", "tool_call_id": "call_save", "approve": True}]}
    response = client.agents.messages.create(agent.id, messages=[approval])
    # The tool ran and was owed nothing more, so the turn ends without asking the model again.
    assert response.stop_reason.stop_reason == "end_turn"
    assert returns(response.messages) == [("success", "Data saved successfully")]
    assert len(mock_llm.requests) == 1


def offered(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def test_a_max_count_rule_allows_its_limit_of_calls_on_a_letta_v1_agent(client: Letta, mock_llm: MockLLM) -> None:
    # Letta's letta_v1 loop recorded every call twice, so a limit of 2 allowed one call (README, compatibility
    # notes); memlet counts each call once for every agent type.
    agent = make_agent(client, [NOOP], [{"type": "max_count_per_step", "tool_name": "noop", "max_count_limit": 2}])
    mock_llm.script(Reply.tool_call("noop", {}), Reply.tool_call("noop", {}), Reply.text("done"))
    response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "go"}])
    assert returns(response.messages) == [("success", "ok"), ("success", "ok")]
    assert [("noop" in offered(r)) for r in mock_llm.requests] == [True, True, False]
    assert "conversation_search" in offered(mock_llm.requests[2])  # the other tools stay
