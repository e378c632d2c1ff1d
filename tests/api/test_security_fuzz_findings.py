"""The 500s Schemathesis found on main, each now a 4xx in Letta's shape (see tests/fuzz for the fuzz suite)."""

import ast
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

MODEL = {"model": "openai/gpt-4o-mini", "embedding": "openai/text-embedding-3-small"}


def make_agent(http: httpx.Client) -> str:
    response = http.post("/v1/agents/", json={"name": "fuzzed", **MODEL})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


@pytest.mark.parametrize("provider_type", [{}, [], 3])
class TestCompactionSettingsProviderType:
    """``compaction_settings.model_settings.provider_type`` that is not a string crashed the union's tag function."""

    def settings(self, provider_type: object) -> dict[str, object]:
        return {"model": "openai/gpt-4o-mini", "model_settings": {"provider_type": provider_type}}

    def assert_422(self, response: httpx.Response) -> None:
        assert response.status_code == 422, response.text
        errors = ast.literal_eval(response.json()["detail"])
        assert ("body", "compaction_settings", "model_settings") in [tuple(e["loc"]) for e in errors]

    def test_create_agent(self, http: httpx.Client, provider_type: object) -> None:
        body = {"name": "c", "compaction_settings": self.settings(provider_type), **MODEL}
        self.assert_422(http.post("/v1/agents/", json=body))
        assert http.get("/v1/agents/").json() == []

    def test_modify_agent(self, http: httpx.Client, provider_type: object) -> None:
        agent_id = make_agent(http)
        body = {"compaction_settings": self.settings(provider_type)}
        self.assert_422(http.patch(f"/v1/agents/{agent_id}", json=body))

    def test_summarize(self, http: httpx.Client, provider_type: object) -> None:
        agent_id = make_agent(http)
        body = {"compaction_settings": self.settings(provider_type)}
        self.assert_422(http.post(f"/v1/agents/{agent_id}/summarize", json=body))


class TestProviderCheck:
    """A key or base URL that cannot be put in an HTTP request crashed the check (UnicodeEncodeError, InvalidURL)."""

    UNSENDABLE = "INVALID_ARGUMENT: The provider's base URL or API key holds characters that cannot be sent over HTTP"

    def test_non_ascii_key(self, http: httpx.Client) -> None:
        body = {"provider_type": "openai", "api_key": "sk-clé", "base_url": "https://api.openai.com/v1"}
        response = http.post("/v1/providers/check", json=body)
        assert response.status_code == 400, response.text
        assert response.json() == {"detail": self.UNSENDABLE}

    def test_control_character_in_base_url(self, http: httpx.Client) -> None:
        body = {"provider_type": "openai", "api_key": "sk-x", "base_url": "https://api.open\x17ai.com/v1"}
        response = http.post("/v1/providers/check", json=body)
        assert response.status_code == 400, response.text
        assert response.json() == {"detail": self.UNSENDABLE}


class TestUploadBody:
    """Multipart bodies the parser refuses, or file names outside latin-1, crashed the upload (500)."""

    def folder(self, http: httpx.Client) -> str:
        response = http.post("/v1/folders/", json={"name": "uploads", "embedding": MODEL["embedding"]})
        assert response.status_code == 200, response.text
        return str(response.json()["id"])

    def post_raw(self, http: httpx.Client, folder_id: str, body: bytes) -> httpx.Response:
        headers = {"content-type": "multipart/form-data; boundary=XX"}
        return http.post(f"/v1/folders/{folder_id}/upload", content=body, headers=headers)

    def test_file_name_outside_latin1_is_kept(self, http: httpx.Client) -> None:
        folder_id = self.folder(http)
        for name in ["\u202eevil.txt", "日本語.txt"]:
            response = http.post(f"/v1/folders/{folder_id}/upload", files={"file": (name, b"hello", "text/plain")})
            assert response.status_code == 200, response.text
            assert response.json()["original_file_name"] == name

    @pytest.mark.parametrize(
        "body",
        [
            b"garbage without a boundary",
            b'--XX\nContent-Disposition: form-data; name="file"; filename="a.txt"\n\nabc\n--XX--\n',
            b"--XX\r\nContent-Dispo\x00sition: form-data\r\n\r\nabc\r\n--XX--\r\n",
        ],
    )
    def test_malformed_multipart_is_400_and_stores_nothing(self, http: httpx.Client, body: bytes) -> None:
        folder_id = self.folder(http)
        response = self.post_raw(http, folder_id, body)
        assert response.status_code == 400, response.text
        assert response.json()["detail"].startswith("INVALID_ARGUMENT: the multipart body is malformed")
        assert http.get(f"/v1/folders/{folder_id}/files").json() == []

    def test_part_headers_are_bounded(self, http: httpx.Client) -> None:
        folder_id = self.folder(http)
        header = b'Content-Disposition: form-data; name="file"; filename="a.txt"\r\nX-Pad: ' + b"p" * 100_000
        response = self.post_raw(http, folder_id, b"--XX\r\n" + header + b"\r\n\r\nabc\r\n--XX--\r\n")
        assert response.status_code == 400, response.text
        assert http.get(f"/v1/folders/{folder_id}/files").json() == []


class TestResumeCursor:
    """A ``starting_after`` past the chunk log's 32-bit ``seq_id`` broke the resumed stream mid-response."""

    def test_starting_after_out_of_range_is_422(self, http: httpx.Client, mock_llm: "object") -> None:
        agent_id = make_agent(http)
        send = {"messages": [{"role": "user", "content": "hi"}], "background": True}
        streamed = http.post(f"/v1/agents/{agent_id}/messages/stream", json=send)
        assert streamed.status_code == 200, streamed.text
        run_id = http.get("/v1/runs/", params={"agent_id": agent_id}).json()[0]["id"]
        for cursor in [2**31, 2**40, 2**63 - 1]:
            response = http.post(f"/v1/runs/{run_id}/stream", json={"starting_after": cursor})
            assert response.status_code == 422, response.text
            assert "starting_after" in response.json()["detail"]
        last = http.post(f"/v1/runs/{run_id}/stream", json={"starting_after": 2**31 - 1})
        assert last.status_code == 200 and last.text.rstrip().endswith("data: [DONE]"), last.text


class TestGrepBacktracking:
    """grep_files ran Python's `re` in a thread: a catastrophic pattern held the GIL and froze the whole server
    (health checks included) long after the tool's own timeout."""

    def test_a_catastrophic_pattern_times_out_and_the_server_keeps_answering(
        self, http: httpx.Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from memlet.loop import file_tools

        monkeypatch.setattr(file_tools, "GREP_TIMEOUT_S", 2)
        agent_id = make_agent(http)
        folder = http.post("/v1/folders/", json={"name": "evil", "embedding": MODEL["embedding"]}).json()["id"]
        assert http.patch(f"/v1/agents/{agent_id}/folders/attach/{folder}").status_code == 200
        upload = http.post(f"/v1/folders/{folder}/upload", files={"file": ("evil.txt", b"a" * 36 + b"!\n")})
        file_id = upload.json()["id"]
        deadline = time.monotonic() + 20
        while http.get(f"/v1/folders/{folder}/files/{file_id}").json()["processing_status"] != "completed":
            assert time.monotonic() < deadline
            time.sleep(0.1)

        with ThreadPoolExecutor(1) as pool:
            body = {"args": {"pattern": "(a|aa)+$"}}
            grep = pool.submit(http.post, f"/v1/agents/{agent_id}/tools/grep_files/run", json=body)
            time.sleep(0.5)
            started = time.monotonic()
            health = httpx.get(f"{str(http.base_url).rstrip('/')}/v1/health/", timeout=30)
            assert health.status_code == 200 and time.monotonic() - started < 1.5
            result = grep.result(timeout=30).json()
        assert result["status"] == "error"
        assert "timed out" in result["stderr"][0]
