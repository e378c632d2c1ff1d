"""GET /v1/agents/ parameters as Letta 0.16.8's route and `_apply_filters` / `_apply_pagination_async` read them."""

import httpx
from letta_client import Letta

from tests.api.test_agents_api import make_agent


def _ids(http: httpx.Client, **params: object) -> list[str]:
    response = http.get("/v1/agents/", params=params)  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    return [a["id"] for a in response.json()]


class TestListParameters:
    def test_unknown_cursor_is_ignored(self, client: Letta, http: httpx.Client) -> None:
        first, second, gone = (make_agent(client, name, memory_blocks=[]).id for name in ("a", "b", "c"))
        client.agents.delete(gone)
        assert _ids(http, after=gone) == [second, first]
        assert _ids(http, before=gone, order="asc") == [first, second]
        assert _ids(http, after="agent-00000000-0000-4000-8000-000000000000", limit=1) == [second]
        # A known cursor still pages.
        assert _ids(http, after=second) == [first]

    def test_ascending_alone_is_ignored(self, client: Letta, http: httpx.Client) -> None:
        first, second = (make_agent(client, name, memory_blocks=[]).id for name in ("a", "b"))
        # `order` defaults to desc, and Letta reads the deprecated `ascending` only when `order` is empty.
        assert _ids(http, ascending="true") == [second, first]
        assert _ids(http, order="asc", ascending="false") == [first, second]

    def test_invalid_last_stop_reason_422(self, http: httpx.Client) -> None:
        assert http.get("/v1/agents/", params={"last_stop_reason": "nope"}).status_code == 422
        assert http.get("/v1/agents/count", params={"last_stop_reason": "nope"}).status_code == 422
        assert http.get("/v1/agents/", params={"last_stop_reason": "end_turn"}).json() == []

    def test_empty_name_and_project_id_are_ignored(self, client: Letta, http: httpx.Client) -> None:
        agent = make_agent(client, "named", memory_blocks=[])
        assert _ids(http, name="") == [agent.id]
        assert _ids(http, project_id="", template_id="", base_template_id="") == [agent.id]
        assert http.get("/v1/agents/count", params={"name": ""}).json() == 1

    def test_last_run_completion_puts_agents_that_never_ran_last(self, client: Letta, http: httpx.Client) -> None:
        never, early, late = (make_agent(client, name, memory_blocks=[]).id for name in ("never", "early", "late"))
        client.agents.update(early, last_run_completion="2025-01-01T00:00:00Z")
        client.agents.update(late, last_run_completion="2025-06-01T00:00:00Z")
        assert _ids(http, order_by="last_run_completion", order="asc") == [early, late, never]
        assert _ids(http, order_by="last_run_completion", order="desc") == [late, early, never]
        for order in ("asc", "desc"):
            walked = [a.id for a in client.agents.list(order_by="last_run_completion", order=order, limit=1)]  # type: ignore[arg-type]
            assert walked == _ids(http, order_by="last_run_completion", order=order)
