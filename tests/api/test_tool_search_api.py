"""``POST /v1/tools/search`` through letta-client: text search over name, description and tags."""

import httpx
import pytest
from letta_client import Letta, UnprocessableEntityError


def make_tool(client: Letta, name: str, doc: str, tags: list[str] | None = None) -> str:
    code = f'def {name}(x: int) -> int:\n    """{doc}\n\n    Args:\n        x: A number.\n    """\n    return x\n'
    return client.tools.create(source_code=code, tags=tags or []).id


def test_search_ranks_name_above_description_and_tags(client: Letta) -> None:
    by_name = make_tool(client, "weather_report", "Say something.")
    by_doc = make_tool(client, "forecast", "Tell the weather for a city.")
    by_tag = make_tool(client, "umbrella", "Decide on an umbrella.", tags=["weather"])
    make_tool(client, "unrelated", "Nothing to see.")

    results = client.tools.search(query="weather")
    ids = [r.tool.id for r in results]
    assert ids == [by_name, by_doc, by_tag]
    assert [r.fts_rank for r in results] == [1, 2, 3]
    assert results[0].combined_score > results[1].combined_score > results[2].combined_score > 0
    assert results[0].vector_rank is None
    assert results[0].embedded_text is None
    assert results[0].tool.name == "weather_report"


def test_search_case_insensitive_exact_name_first_and_limit(client: Letta) -> None:
    make_tool(client, "fetch_weather", "Fetch the weather.")
    exact = make_tool(client, "weather", "Weather lookup.")
    results = client.tools.search(query="WEATHER", search_mode="vector", limit=1)
    assert [r.tool.id for r in results] == [exact]


def test_search_filters_by_type_and_tags(client: Letta) -> None:
    tagged = make_tool(client, "memo_a", "Write a memo.", tags=["office", "paper"])
    make_tool(client, "memo_b", "Write a memo.", tags=["home"])

    custom = client.tools.search(query="memo", tool_types=["custom"], tags=["paper", "nothing"])
    assert [r.tool.id for r in custom] == [tagged]

    core = client.tools.search(query="memory", tool_types=["letta_core"])
    assert core and {r.tool.tool_type for r in core} == {"letta_core"}
    assert "conversation_search" not in {r.tool.name for r in core}  # "memory" is nowhere in it

    names = {r.tool.name for r in client.tools.search(query="message", tool_types=["letta_core"])}
    assert "send_message" in names


def test_search_without_query_lists_filtered_tools(client: Letta) -> None:
    make_tool(client, "beta_tool", "B.")
    make_tool(client, "alpha_tool", "A.")
    results = client.tools.search(tool_types=["custom"])
    assert [r.tool.name for r in results] == ["alpha_tool", "beta_tool"]
    assert all(r.fts_rank is None and r.combined_score == 0 for r in results)


def test_search_no_match_is_empty(client: Letta) -> None:
    assert client.tools.search(query="zzz-no-such-tool") == []


def test_search_rejects_bad_request(client: Letta, http: httpx.Client) -> None:
    with pytest.raises(UnprocessableEntityError):
        client.tools.search(query="x", limit=0)
    assert http.post("/v1/tools/search", json={"query": "x", "bogus": 1}).status_code == 422
