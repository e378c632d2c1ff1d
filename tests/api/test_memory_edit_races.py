"""The agent's memory tool and REST edits of its blocks, at the same time: every edit reaches the prompt the model is
sent next. A memory edit's commit compiles the prompt outside any transaction and writes it as a compare-and-set
(`loop/edit_write.py`); a REST edit landing during the turn must neither be lost from the prompt nor lose the
agent's own edit. The last REST edit lands while the last turn's model is thinking, so nothing after it rewrites
the prompt but that turn's own commit."""

import threading
import time

import httpx

from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

TURNS = 12
AGENT = {
    "model": "openai/gpt-4o-mini",
    "embedding": "openai/text-embedding-3-small",
    "memory_blocks": [{"label": "human", "value": "Facts:"}, {"label": "persona", "value": "persona 0"}],
}


def _system(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return str(messages[0]["content"])


def test_memory_edits_racing_rest_edits_all_reach_the_prompt(
    server: LiveServer, http: httpx.Client, mock_llm: MockLLM
) -> None:
    agent_id = http.post("/v1/agents/", json=AGENT).json()["id"]
    for n in range(TURNS):
        edit = Reply.tool_call("memory_insert", {"label": "human", "new_string": f"fact-{n}-q"})
        mock_llm.script(edit, Reply.text("noted"))
    stop = threading.Event()
    written: list[str] = []
    failures: list[str] = []

    def edit_persona() -> None:
        with httpx.Client(base_url=server.base_url, timeout=30) as rest:
            n = 0
            while not stop.is_set():
                n += 1
                value = f"persona {n}"
                response = rest.patch(f"/v1/agents/{agent_id}/core-memory/blocks/persona", json={"value": value})
                if response.status_code != 200:
                    failures.append(response.text)
                written.append(value)

    def remember() -> None:
        response = http.post(
            f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": "remember"}]}
        )
        assert response.status_code == 200, response.text
        assert response.json()["stop_reason"]["stop_reason"] == "end_turn"

    editor = threading.Thread(target=edit_persona)
    editor.start()
    try:
        for _ in range(TURNS):
            remember()
    finally:
        stop.set()
        editor.join()
    assert not failures and len(written) > TURNS  # the REST edits really ran alongside the turns
    # The last turn: its model answers late, and one more REST edit lands meanwhile.
    mock_llm.script(
        Reply.delay(0.4, then=Reply.tool_call("memory_insert", {"label": "human", "new_string": "fact-last-q"}))
    )
    mock_llm.script(Reply.text("noted"))
    asked = len(mock_llm.requests)
    turn = threading.Thread(target=remember)
    turn.start()
    for _ in range(300):
        if len(mock_llm.requests) > asked:
            break
        time.sleep(0.01)
    final = http.patch(f"/v1/agents/{agent_id}/core-memory/blocks/persona", json={"value": "persona final"})
    assert final.status_code == 200, final.text
    turn.join()
    written.append("persona final")
    human = http.get(f"/v1/agents/{agent_id}/core-memory/blocks/human").json()["value"]
    assert all(f"fact-{n}-q" in human for n in [*range(TURNS), "last"])
    mock_llm.script(Reply.text("hello"))
    assert http.post(
        f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": "hi"}]}
    ).is_success
    prompt = _system(mock_llm.requests[-1])
    assert all(f"fact-{n}-q" in prompt for n in [*range(TURNS), "last"])
    assert f"{written[-1]}\n" in prompt or f"{written[-1]}<" in prompt, prompt
