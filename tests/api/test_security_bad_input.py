"""Bad input is a 4xx in Letta's error shape and writes nothing; only a real database outage is a 503.

Before this, every database error answered 503 "try again" (so clients retried bad data forever), 300-deep
metadata was a 500, a lone surrogate in an agent name crashed the error handler, and a 12,000-word tool search
froze the server's event loop for minutes.
"""

import ast
import contextlib
import json
import socket
import threading
import time
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer

MODEL = {"model": "openai/gpt-4o-mini", "embedding": "openai/text-embedding-3-small"}
INT64_MAX = 2**63 - 1


def assert_validation_error(response: httpx.Response, *loc: object) -> None:
    """A 422 in Letta's validation shape whose error list names ``loc`` (e.g. "body", "metadata", "k")."""
    assert response.status_code == 422, response.text
    body = response.json()
    assert set(body) == {"trace_id", "detail"}
    errors = ast.literal_eval(body["detail"])
    assert tuple(loc) in [tuple(e["loc"]) for e in errors], errors
    assert "retry-after" not in response.headers


def raw_json(http: httpx.Client, method: str, path: str, text: str) -> httpx.Response:
    """Send JSON text as is: lone surrogates cannot be encoded by json.dumps + UTF-8 on the client side."""
    return http.request(method, path, content=text.encode("ascii"), headers={"content-type": "application/json"})


def agent_names(http: httpx.Client) -> list[str]:
    return [a["name"] for a in http.get("/v1/agents/", params={"limit": 100}).json()]


def block_labels(http: httpx.Client) -> list[str]:
    return [b["label"] for b in http.get("/v1/blocks/", params={"limit": 100}).json()]


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


class TestNulAndSurrogates:
    def test_nul_in_agent_name(self, http: httpx.Client) -> None:
        assert_validation_error(http.post("/v1/agents/", json={"name": "a\x00b", **MODEL}), "body", "name")
        assert agent_names(http) == []

    def test_nul_in_block_label(self, http: httpx.Client) -> None:
        assert_validation_error(http.post("/v1/blocks/", json={"label": "a\x00b", "value": "v"}), "body", "label")
        assert block_labels(http) == []

    def test_nul_in_tag(self, http: httpx.Client) -> None:
        response = http.post("/v1/agents/", json={"name": "tagged", "tags": ["ok", "a\x00"], **MODEL})
        assert_validation_error(response, "body", "tags", 1)
        assert agent_names(http) == []

    def test_nul_in_metadata_key_and_value(self, http: httpx.Client) -> None:
        key = http.post("/v1/agents/", json={"name": "m1", "metadata": {"k\x00": 1}, **MODEL})
        assert_validation_error(key, "body", "metadata", "k\\x00")
        value = http.post("/v1/blocks/", json={"label": "m2", "value": "v", "metadata": {"k": "v\x00"}})
        assert_validation_error(value, "body", "metadata", "k")
        assert agent_names(http) == []
        assert block_labels(http) == []

    def test_nul_in_query_parameter(self, http: httpx.Client) -> None:
        assert_validation_error(http.get("/v1/agents/", params={"name": "a\x00"}), "query", "name")
        assert_validation_error(http.get("/v1/agents/", params={"tags": "a\x00"}), "query", "tags")

    def test_block_value_nul_is_still_stripped(self, http: httpx.Client) -> None:
        # Letta drops NULs from block values instead of failing; that stays.
        response = http.post("/v1/blocks/", json={"label": "clean", "value": "a\x00b"})
        assert response.status_code == 200, response.text
        assert response.json()["value"] == "ab"

    def test_lone_surrogate_in_agent_name(self, http: httpx.Client) -> None:
        text = json.dumps({"name": "x", **MODEL}).replace('"x"', '"\\ud800"')
        assert_validation_error(raw_json(http, "POST", "/v1/agents/", text), "body", "name")
        assert agent_names(http) == []

    def test_lone_surrogate_in_block_value_and_metadata(self, http: httpx.Client) -> None:
        value = raw_json(http, "POST", "/v1/blocks/", '{"label": "s", "value": "a\\udc00"}')
        assert_validation_error(value, "body", "value")
        meta = raw_json(http, "POST", "/v1/blocks/", '{"label": "s", "value": "v", "metadata": {"k": "\\ud800"}}')
        assert_validation_error(meta, "body", "metadata", "k")
        assert block_labels(http) == []

    def test_paired_surrogates_are_fine(self, http: httpx.Client) -> None:
        response = raw_json(http, "POST", "/v1/blocks/", '{"label": "emoji", "value": "\\ud83d\\ude00"}')
        assert response.status_code == 200, response.text
        assert response.json()["value"] == "\U0001f600"


class TestNumbers:
    def test_huge_limit(self, http: httpx.Client) -> None:
        response = http.get("/v1/agents/", params={"limit": "100000000000000000000"})
        assert_validation_error(response, "query", "limit")
        assert_validation_error(http.get("/v1/blocks/", params={"limit": INT64_MAX + 1}), "query", "limit")

    def test_limit_within_bounds_still_works(self, http: httpx.Client) -> None:
        assert http.get("/v1/agents/", params={"limit": 1000}).status_code == 200

    def test_every_list_bounds_limit_at_1000(self, http: httpx.Client) -> None:
        # Letta bounded only the runs list; memlet bounds every list (README compatibility note).
        for path in ("/v1/agents/", "/v1/blocks/", "/v1/tools/", "/v1/runs/"):
            assert_validation_error(http.get(path, params={"limit": 1001}), "query", "limit")

    def test_integer_filter_past_int64(self, http: httpx.Client) -> None:
        for name in ("connected_to_agents_count_gt", "connected_to_agents_count_lt"):
            assert_validation_error(http.get("/v1/blocks/", params={name: INT64_MAX + 1}), "query", name)
        response = http.get("/v1/blocks/", params={"connected_to_agents_count_eq": [1, INT64_MAX + 1]})
        assert_validation_error(response, "query", "connected_to_agents_count_eq", 1)

    def test_integer_in_body_past_int64(self, http: httpx.Client) -> None:
        response = http.post("/v1/blocks/", json={"label": "big", "value": "v", "metadata": {"n": INT64_MAX + 1}})
        assert_validation_error(response, "body", "metadata", "n")
        assert block_labels(http) == []

    def test_int32_column_overflow_is_400_not_503(self, http: httpx.Client) -> None:
        # A block's character limit is an int4 column: past it, the database's refusal is the client's error.
        response = http.post("/v1/blocks/", json={"label": "wide", "value": "v", "limit": 2**31})
        assert response.status_code in {400, 422}, response.text
        assert "detail" in response.json()
        assert "retry-after" not in response.headers
        assert block_labels(http) == []


class TestDeepJson:
    def test_300_deep_metadata(self, http: httpx.Client) -> None:
        agent = http.post("/v1/agents/", json={"name": "deep", "metadata": nested(300), **MODEL})
        block = http.post("/v1/blocks/", json={"label": "deep", "value": "v", "metadata": nested(300)})
        for response in (agent, block):
            assert response.status_code == 422, response.text
            [error] = ast.literal_eval(response.json()["detail"])
            assert error["loc"][:3] == ("body", "metadata", "a")
            assert error["msg"] == "JSON should be nested at most 64 levels deep"
        assert agent_names(http) == []
        assert block_labels(http) == []

    def test_moderately_nested_metadata_is_kept(self, http: httpx.Client) -> None:
        response = http.post("/v1/blocks/", json={"label": "nested", "value": "v", "metadata": nested(30)})
        assert response.status_code == 200, response.text
        assert response.json()["metadata"] == nested(30)


class TestManyWordSearch:
    WORDS = " ".join(f"word{i}" for i in range(12_000))

    def test_tool_search(self, http: httpx.Client) -> None:
        code = (
            'def weather(x: int) -> int:\n    """Weather.\n\n    Args:\n        x: A number.\n    """\n    return x\n'
        )
        assert http.post("/v1/tools/", json={"source_code": code}).status_code == 200
        started = time.monotonic()
        response = http.post("/v1/tools/search", json={"query": "weather " + self.WORDS})
        assert response.status_code == 200, response.text
        assert [r["tool"]["name"] for r in response.json()] == ["weather"]
        assert time.monotonic() - started < 10

    def test_message_search(self, http: httpx.Client) -> None:
        agent = http.post("/v1/agents/", json={"name": "talker", **MODEL}).json()
        sent = http.post(f"/v1/agents/{agent['id']}/messages", json={"input": "hello there"})
        assert sent.status_code == 200, sent.text
        for path in ("/v1/agents/messages/search", "/v1/messages/search"):
            started = time.monotonic()
            response = http.post(path, json={"query": "hello " + self.WORDS})
            assert response.status_code == 200, response.text
            assert time.monotonic() - started < 10
            # Full-text search matches any query word (the user's "hello there" holds one of them), never more.
            assert len(response.json()) <= 1
            assert http.post(path, json={"query": "hello"}).json() != []


class _ClosablePostgresProxy:
    """A TCP port in front of the test Postgres' unix socket, which the test can take down like an outage."""

    def __init__(self, socket_path: str) -> None:
        self.target = socket_path
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.open = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while self.open:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.target)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.close()

    def take_down(self) -> None:
        """Refuse new connections and cut the open ones."""
        self.open = False
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread; close() alone would not
        self.listener.close()
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
                s.close()


def test_database_outage_is_503_with_retry_after(settings: Any, pg_uri: str) -> None:
    from sqlalchemy.engine import make_url

    url = make_url(pg_uri)
    proxy = _ClosablePostgresProxy(f"{url.query['host']}/.s.PGSQL.{url.port or 5432}")
    proxied = url.set(host="127.0.0.1", port=proxy.port, query={}).render_as_string(hide_password=False)
    server = LiveServer(settings.model_copy(update={"pg_uri": proxied})).start()
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            assert http.get("/v1/agents/").status_code == 200
            proxy.take_down()
            for _ in range(2):  # the pooled connection that died, then a new one that is refused
                response = http.get("/v1/agents/")
                assert response.status_code == 503, response.text
                assert response.headers["retry-after"] == "1"
                assert response.json() == {"detail": "The database is unavailable; try again"}
    finally:
        server.stop()


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e999"])
def test_non_finite_numbers_are_rejected(http: httpx.Client, number: str) -> None:
    response = raw_json(http, "POST", "/v1/blocks/", f'{{"label": "n", "value": "v", "metadata": {{"x": {number}}}}}')
    assert_validation_error(response, "body", "metadata", "x")
    assert block_labels(http) == []
