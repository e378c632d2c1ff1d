"""Safe to expose: no blank passwords, no unprotected server beyond loopback, no browser-driven requests.

`memlet server` runs as a subprocess, as an operator starts it; refusals must come before the embedded Postgres
starts, so they are fast and leave no database behind.
"""

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from letta_client import Letta
from pydantic import SecretStr

from memlet.api.edge import EdgeMiddleware
from memlet.app import create_app
from memlet.config import Settings
from tests.api.test_cli_server import postgres_pids
from tests.conftest import LiveServer, free_port

REFUSAL_BUDGET_S = 10  # a refusal starts nothing; Postgres alone takes longer than this under load
AGENT = {"name": "csrf", "llm_config": {"model": "m", "model_endpoint_type": "openai", "context_window": 8000}}


def operator_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLET_", "LETTA_", "SECURE"))}
    env.update(MEMLET_DATA_DIR=str(data_dir), OPENAI_API_KEY="sk-none", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    env.update(extra)
    return env


def run_refused(data_dir: Path, args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memlet", "server", "--port", str(free_port()), *args],
        env=operator_env(data_dir, **extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        output, _ = proc.communicate(timeout=REFUSAL_BUDGET_S)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=30)
        pytest.fail(f"the server started instead of refusing:\n{output}")
    assert time.monotonic() - started < REFUSAL_BUDGET_S
    assert not (data_dir / "pgdata").exists(), "refused only after starting the embedded Postgres"
    return subprocess.CompletedProcess(proc.args, proc.returncode, output)


def json_lines(output: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.fixture
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = Path(tmp_path_factory.mktemp("memlet-exposure"))
    yield path
    for pid in postgres_pids(path):
        os.kill(pid, signal.SIGKILL)


class TestBlankPassword:
    @pytest.mark.parametrize("variable", ["MEMLET_SERVER_PASSWORD", "LETTA_SERVER_PASSWORD"])
    @pytest.mark.parametrize("value", ["", "   "])
    def test_blank_is_no_password(self, monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
        monkeypatch.setenv(variable, value)
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
        assert settings.server_password is None
        assert settings.password is None

    def test_blank_password_serves_openly_without_auth(
        self, monkeypatch: pytest.MonkeyPatch, settings: Settings
    ) -> None:
        monkeypatch.setenv("MEMLET_SERVER_PASSWORD", "   ")
        blank = Settings(_env_file=None, pg_uri=settings.pg_uri, log_level="WARNING")  # type: ignore[call-arg]
        [edge] = [m for m in create_app(blank).user_middleware if m.cls is EdgeMiddleware]
        assert edge.kwargs["password"] is None
        server = LiveServer(blank).start()
        try:
            assert httpx.get(f"{server.base_url}/v1/agents/").status_code == 200
        finally:
            server.stop()

    @pytest.mark.parametrize("variable", ["MEMLET_SERVER_PASSWORD", "LETTA_SERVER_PASSWORD"])
    def test_secure_with_blank_password_refuses_to_start(self, data_dir: Path, variable: str) -> None:
        result = run_refused(data_dir, [], SECURE="true", **{variable: " "})
        assert result.returncode == 2
        assert "SECURE is set but MEMLET_SERVER_PASSWORD / LETTA_SERVER_PASSWORD is unset or empty" in result.stdout
        assert "Traceback" not in result.stdout


class TestExposure:
    @pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.77.10", "memlet.example.internal"])
    def test_exposed_without_password_refuses_fast(self, data_dir: Path, host: str) -> None:
        result = run_refused(data_dir, ["--host", host])
        assert result.returncode == 2
        assert f"refusing to listen on {host}:" in result.stdout
        assert "MEMLET_SERVER_PASSWORD" in result.stdout
        assert "MEMLET_ALLOW_INSECURE=true" in result.stdout

    def test_host_from_the_environment_counts_too(self, data_dir: Path) -> None:
        result = run_refused(data_dir, [], MEMLET_HOST="0.0.0.0")
        assert result.returncode == 2
        assert "refusing to listen on 0.0.0.0:" in result.stdout

    def test_blank_password_does_not_count(self, data_dir: Path) -> None:
        result = run_refused(data_dir, ["--host", "0.0.0.0"], MEMLET_SERVER_PASSWORD="")
        assert result.returncode == 2
        assert "refusing to listen on 0.0.0.0:" in result.stdout

    def test_opt_out_starts_workers_with_a_loud_warning(self, data_dir: Path) -> None:
        """`MEMLET_ALLOW_INSECURE=true` serves on 0.0.0.0 and says so; workers see the real bind address."""
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "memlet", "server", "--host", "0.0.0.0", "--port", str(port), "--workers", "2"],
            env=operator_env(data_dir, MEMLET_ALLOW_INSECURE="true"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            wait_healthy(f"http://127.0.0.1:{port}", proc)
            # Bound beyond loopback there is no Host restriction; a worker still thinking it is on 127.0.0.1 would 400.
            for _ in range(4):
                answer = httpx.get(f"http://127.0.0.1:{port}/v1/agents/", headers={"Host": "memlet.lan:8283"})
                assert answer.status_code == 200, answer.text
        finally:
            proc.send_signal(signal.SIGINT)
            output, _ = proc.communicate(timeout=60)
        events = {line.get("event"): line for line in json_lines(output)}
        warning = events["insecure_exposure"]
        assert warning["level"] == "warning"
        assert warning["host"] == "0.0.0.0"
        assert warning["port"] == port
        assert ("running_as_root" in events) == (os.geteuid() == 0)
        assert postgres_pids(data_dir) == []


def wait_healthy(url: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{url}/v1/health/", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"server did not answer: {proc.communicate()[0]}")


class TestBrowserRequests:
    @pytest.mark.parametrize("content_type", ["text/plain", None])
    def test_json_without_json_content_type_is_rejected(
        self, http: httpx.Client, client: Letta, content_type: str | None
    ) -> None:
        headers = {"content-type": content_type} if content_type else {}
        request = http.build_request("POST", "/v1/agents/", content=json.dumps(AGENT), headers=headers)
        assert request.headers.get("content-type") == content_type  # a Blob with no type sends none
        response = http.send(request)
        assert response.status_code == 422, response.text
        assert http.get("/v1/agents/").json() == []
        # The SDK sends application/json and keeps working.
        assert client.agents.create(**AGENT).name == "csrf"  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        "host", ["evil.example", "evil.example:8283", "127.0.0.1.nip.io", "localhost.evil.example"]
    )
    def test_foreign_host_rejected_on_loopback(self, http: httpx.Client, host: str) -> None:
        response = http.get("/v1/agents/", headers={"Host": host})
        assert response.status_code == 400
        assert response.json()["detail"].startswith("Invalid Host header")
        assert http.post("/v1/agents/", json=AGENT, headers={"Host": host}).status_code == 400
        assert http.get("/v1/agents/").json() == []

    def test_loopback_names_accepted(self, server: LiveServer, http: httpx.Client) -> None:
        for host in ("localhost", f"localhost:{server.port}", f"127.0.0.1:{server.port}", "127.8.9.10", "[::1]:80"):
            assert http.get("/v1/agents/", headers={"Host": host}).status_code == 200, host


class TestDocsUnderPassword:
    def test_docs_and_schema_need_the_password(self, settings: Settings) -> None:
        secured = settings.model_copy(update={"server_password": SecretStr("s3cret")})
        server = LiveServer(secured).start()
        try:
            with httpx.Client(base_url=server.base_url, timeout=60) as http:  # the schema's first build takes a while
                for path in ("/openapi.json", "/docs", "/redoc", "/"):
                    assert http.get(path).status_code == 401, path
                token = {"Authorization": "Bearer s3cret"}
                spec = http.get("/openapi.json", headers=token)
                assert spec.status_code == 200
                assert spec.json()["openapi"].startswith("3.")
                assert http.get("/docs", headers=token).status_code == 200
                for probe in ("/v1/health/", "/v1/ready/"):
                    assert http.get(probe).status_code == 200, probe
        finally:
            server.stop()
