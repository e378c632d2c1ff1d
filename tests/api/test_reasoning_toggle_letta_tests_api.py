"""The `reasoning` flag of an agent create, per model and agent type, as Letta 0.16.8's tests/test_providers.py
(test_reasoning_toggle_by_provider, test_codex_default_reasoning_effort) pins it: what the created agent's
llm_config then says about enable_reasoner, put_inner_thoughts_in_kwargs, max_reasoning_tokens and reasoning_effort.

Each row is (handle, agent type, reasoning, then the four expected fields); the configs are raw llm_configs, so no
provider has to list the model."""

from typing import Any

import httpx

V2, V1 = "memgpt_v2_agent", "letta_v1_agent"
Row = tuple[str, str, bool, bool, bool, int, str | None]
ROWS: list[Row] = [
    ("openai/gpt-4o-mini", V2, True, True, True, 0, None),
    ("openai/gpt-4o-mini", V2, False, False, False, 0, None),
    ("openai/o3-mini", V2, True, True, False, 0, "medium"),
    ("openai/o3-mini", V2, False, True, False, 0, "medium"),
    ("anthropic/claude-3.5-sonnet", V2, True, True, True, 0, None),
    ("anthropic/claude-3.5-sonnet", V2, False, False, False, 0, None),
    ("anthropic/claude-3-7-sonnet", V2, True, True, False, 1024, None),
    ("anthropic/claude-3-7-sonnet", V2, False, False, False, 0, None),
    ("anthropic/claude-sonnet-4", V2, True, True, False, 1024, None),
    ("anthropic/claude-sonnet-4", V2, False, False, False, 0, None),
    ("anthropic/claude-opus-4-6", V2, True, True, False, 0, None),  # adaptive thinking: no budget
    ("anthropic/claude-opus-4-6", V2, False, False, False, 0, None),
    ("anthropic/claude-sonnet-4-6", V2, True, True, False, 0, None),
    ("anthropic/claude-sonnet-4-6", V2, False, False, False, 0, None),
    ("google_vertex/gemini-2.0-flash", V2, True, True, True, 0, None),
    ("google_vertex/gemini-2.0-flash", V2, False, False, False, 0, None),
    ("google_vertex/gemini-2.5-flash", V2, True, True, True, 1024, None),
    ("google_vertex/gemini-2.5-flash", V2, False, False, False, 0, None),
    ("google_vertex/gemini-2.5-pro", V2, True, True, True, 1024, None),
    ("openai/gpt-4o-mini", V1, True, False, False, 0, None),
    ("openai/gpt-4o-mini", V1, False, False, False, 0, None),
    ("openai/o3-mini", V1, True, True, False, 0, "medium"),
    ("openai/o3-mini", V1, False, True, False, 0, "medium"),
    ("anthropic/claude-3.5-sonnet", V1, True, False, False, 0, None),
    ("anthropic/claude-3.5-sonnet", V1, False, False, False, 0, None),
    ("anthropic/claude-3-7-sonnet", V1, True, True, False, 1024, None),
    ("anthropic/claude-3-7-sonnet", V1, False, False, False, 0, None),
    ("anthropic/claude-sonnet-4", V1, True, True, False, 1024, None),
    ("anthropic/claude-sonnet-4", V1, False, False, False, 0, None),
    ("anthropic/claude-opus-4-6", V1, True, True, False, 0, None),
    ("anthropic/claude-opus-4-6", V1, False, False, False, 0, None),
    ("anthropic/claude-sonnet-4-6", V1, True, True, False, 0, None),
    ("anthropic/claude-sonnet-4-6", V1, False, False, False, 0, None),
    ("google_vertex/gemini-2.0-flash", V1, True, False, False, 0, None),
    ("google_vertex/gemini-2.0-flash", V1, False, False, False, 0, None),
    ("google_vertex/gemini-2.5-flash", V1, True, True, False, 1024, None),
    ("google_vertex/gemini-2.5-flash", V1, False, False, False, 0, None),
    ("google_vertex/gemini-2.5-pro", V1, True, True, False, 1024, None),
    ("google_vertex/gemini-2.5-pro", V1, False, True, False, 1024, None),  # always reasons
]
FIELDS = ("enable_reasoner", "put_inner_thoughts_in_kwargs", "max_reasoning_tokens", "reasoning_effort")


def create(http: httpx.Client, handle: str, agent_type: str, reasoning: bool) -> dict[str, Any]:
    kind, model = handle.split("/")
    config = {"model": model, "model_endpoint_type": kind, "handle": handle, "context_window": 1024}
    body = {"agent_type": agent_type, "reasoning": reasoning, "llm_config": config, "include_base_tools": False}
    response = http.post("/v1/agents/", json=body)
    assert response.status_code == 200, response.text
    return response.json()["llm_config"]  # type: ignore[no-any-return]


def test_reasoning_toggle_by_model_and_agent_type(http: httpx.Client) -> None:
    wrong = []
    for handle, agent_type, reasoning, *expected in ROWS:
        llm = create(http, handle, agent_type, reasoning)
        got = [llm[f] for f in FIELDS]
        if got != expected:
            wrong.append((handle, agent_type, reasoning, dict(zip(FIELDS, got, strict=True))))
    assert wrong == []


def test_codex_reasons_at_medium_effort_whatever_the_flag(http: httpx.Client) -> None:
    efforts = {
        create(http, "openai/gpt-5-codex", agent_type, reasoning)["reasoning_effort"]
        for agent_type in (V2, V1)
        for reasoning in (True, False)
    }
    assert efforts == {"medium"}
