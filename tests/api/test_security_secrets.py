"""Secrets stay secret: not in logs (even when a statement carrying them fails), encrypted at rest with
MEMLET_ENCRYPTION_KEY and still usable by tools and BYOK providers, and not in agent responses unless asked for."""

import asyncio
import io
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from letta_client import Letta
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.config import Settings
from memlet.crypto import Keyring
from memlet.db.engine import async_url
from tests.conftest import LiveServer, reset_database
from tests.mock_llm import Reply

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
AGENT_SECRET = "zq-agent-secret-7f3a9c21"
PROVIDER_KEY = "byok-key-at-rest-4242"

READ_ENV = '''
import os

def read_env(name: str) -> str:
    """Read an environment variable.

    Args:
        name: The variable name.
    """
    return os.environ.get(name, "missing")
'''

EXPLODE_ON_INSERT = (
    """CREATE OR REPLACE FUNCTION memlet_test_explode() RETURNS trigger AS $$
    BEGIN
        IF NEW.name = 'explode' THEN RAISE EXCEPTION 'test trigger refused the row'; END IF;
        RETURN NEW;
    END $$ LANGUAGE plpgsql""",
    "CREATE TRIGGER memlet_test_explode BEFORE INSERT ON agents FOR EACH ROW EXECUTE FUNCTION memlet_test_explode()",
)
DROP_EXPLODE = (
    "DROP TRIGGER IF EXISTS memlet_test_explode ON agents",
    "DROP FUNCTION IF EXISTS memlet_test_explode()",
)


def sql(pg_uri: str, *statements: str, **params: Any) -> list[Any]:
    """Run statements directly against the database; the rows of the last one."""

    async def run() -> list[Any]:
        engine = create_async_engine(async_url(pg_uri))
        rows: list[Any] = []
        async with engine.begin() as conn:
            for statement in statements:
                result = await conn.execute(text(statement), params)
                rows = list(result) if result.returns_rows else []
        await engine.dispose()
        return rows

    return asyncio.run(run())


@contextmanager
def server_log() -> Iterator[io.StringIO]:
    """Everything memlet's own log handlers write while the block runs (formatted, as operators see it)."""
    buffer = io.StringIO()
    handlers = [h for h in logging.getLogger("memlet").handlers if isinstance(h, logging.StreamHandler)]
    assert handlers, "memlet configures a stream handler"
    previous = [h.setStream(buffer) for h in handlers]
    try:
        yield buffer
    finally:
        for handler, stream in zip(handlers, previous, strict=True):
            handler.setStream(stream)


@contextmanager
def running(settings: Settings) -> Iterator[LiveServer]:
    server = LiveServer(settings).start()
    try:
        yield server
    finally:
        server.stop()


def make_agent(client: Letta, **kwargs: Any) -> Any:
    return client.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=[], **kwargs)


@pytest.fixture
def key() -> str:
    return Fernet.generate_key().decode()


@pytest.fixture
def encrypted(settings: Settings, pg_uri: str, key: str) -> Iterator[LiveServer]:
    with running(settings.model_copy(update={"encryption_key": SecretStr(key)})) as server:
        yield server
    reset_database(pg_uri)


class TestSecretsNotLogged:
    def test_failed_insert_logs_the_error_but_not_the_secret(self, server: LiveServer, pg_uri: str) -> None:
        sql(pg_uri, *EXPLODE_ON_INSERT)
        try:
            with server_log() as log, httpx.Client(base_url=server.base_url) as http:
                body = {"name": "explode", "model": MODEL, "embedding": EMBEDDING, "secrets": {"TOKEN": AGENT_SECRET}}
                response = http.post("/v1/agents/", json=body)
        finally:
            sql(pg_uri, *DROP_EXPLODE)
        assert response.status_code >= 500
        lines = log.getvalue()
        assert "test trigger refused the row" in lines  # the failure itself is logged ...
        assert AGENT_SECRET not in lines  # ... without the statement's parameters

    async def test_engine_errors_never_carry_parameters(self, settings: Settings) -> None:
        from memlet.db.engine import create_engine

        engine = create_engine(settings.pg_uri or "", settings)
        try:
            async with engine.connect() as conn:
                with pytest.raises(Exception) as caught:
                    # Postgres' own message does not quote the value here (a cast error would).
                    await conn.execute(text("SELECT CAST(:v AS text), 1 / 0"), {"v": "hidden-param-value"})
        finally:
            await engine.dispose()
        assert "division by zero" in str(caught.value)
        assert "hidden-param-value" not in str(caught.value)


class TestEncryptionAtRest:
    def test_agent_secret_encrypted_and_used_by_tools(self, encrypted: LiveServer, pg_uri: str, mock_llm: Any) -> None:
        client = Letta(base_url=encrypted.base_url, max_retries=0, timeout=60)
        agent = make_agent(client, secrets={"MY_TOKEN": AGENT_SECRET})
        assert [(s.key, s.value) for s in agent.secrets] == [("MY_TOKEN", AGENT_SECRET)]  # Letta echoes it
        stored = sql(pg_uri, "SELECT secrets::text FROM agents WHERE id = :id", id=agent.id)[0][0]
        assert AGENT_SECRET not in stored and "fernet:" in stored

        tool = client.tools.create(source_code=READ_ENV)
        client.agents.tools.attach(tool.id, agent_id=agent.id)
        run = client.agents.tools.run(agent_id=agent.id, tool_name="read_env", args={"name": "MY_TOKEN"})
        assert (run.status, run.func_return) == ("success", AGENT_SECRET)

        mock_llm.reset()
        mock_llm.script(Reply.tool_call("read_env", {"name": "MY_TOKEN"}), Reply.text("done"))
        sent = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "read it"}])
        returns = [m for m in sent.messages if m.message_type == "tool_return_message"]
        assert [r.tool_return for r in returns] == [AGENT_SECRET]

    def test_plaintext_rows_keep_working_and_are_encrypted_on_write(self, encrypted: LiveServer, pg_uri: str) -> None:
        client = Letta(base_url=encrypted.base_url, max_retries=0, timeout=60)
        agent = make_agent(client)
        legacy = '[{"id": "agent-env-00000000", "key": "OLD", "value": "plain-old-value", "description": null}]'
        sql(pg_uri, "UPDATE agents SET secrets = CAST(:s AS jsonb) WHERE id = :id", s=legacy, id=agent.id)
        tool = client.tools.create(source_code=READ_ENV)
        client.agents.tools.attach(tool.id, agent_id=agent.id)
        run = client.agents.tools.run(agent_id=agent.id, tool_name="read_env", args={"name": "OLD"})
        assert run.func_return == "plain-old-value"

        client.agents.update(agent.id, description="touched")
        stored = sql(pg_uri, "SELECT secrets::text FROM agents WHERE id = :id", id=agent.id)[0][0]
        assert "plain-old-value" not in stored and "fernet:" in stored
        again = client.agents.tools.run(agent_id=agent.id, tool_name="read_env", args={"name": "OLD"})
        assert again.func_return == "plain-old-value"

    def test_provider_key_encrypted_and_sent_decrypted(self, encrypted: LiveServer, pg_uri: str, mock_llm: Any) -> None:
        mock_llm.reset()
        with httpx.Client(base_url=encrypted.base_url) as http:
            body = {"name": "byok", "provider_type": "openai", "api_key": PROVIDER_KEY, "base_url": mock_llm.base_url}
            created = http.post("/v1/providers/", json=body)
            assert created.status_code == 200, created.text
            provider_id = created.json()["id"]
            stored = sql(pg_uri, "SELECT api_key FROM providers WHERE id = :id", id=provider_id)[0][0]
            assert stored.startswith("fernet:") and PROVIDER_KEY not in stored
            assert http.post(f"/v1/providers/{provider_id}/check").status_code == 200
            models = http.get("/v1/models/", params={"provider_name": "byok"}).json()
        assert {m["handle"] for m in models} >= {"byok/gpt-4o-mini"}
        # Listing at creation and the check both called the provider with the decrypted key.
        assert mock_llm.authorizations.count(f"Bearer {PROVIDER_KEY}") >= 2

    def test_wrong_key_is_a_clear_error(self, encrypted: LiveServer, settings: Settings, pg_uri: str) -> None:
        client = Letta(base_url=encrypted.base_url, max_retries=0, timeout=60)
        agent = make_agent(client, secrets={"MY_TOKEN": AGENT_SECRET})
        tool = client.tools.create(source_code=READ_ENV)
        client.agents.tools.attach(tool.id, agent_id=agent.id)
        other = settings.model_copy(update={"encryption_key": SecretStr(Fernet.generate_key().decode())})
        with running(other) as server, httpx.Client(base_url=server.base_url) as http:
            run = http.post(f"/v1/agents/{agent.id}/tools/read_env/run", json={"args": {"name": "MY_TOKEN"}})
            assert run.status_code == 200
            assert run.json()["status"] == "error"
            assert "Cannot decrypt the stored agent secret 'MY_TOKEN'" in run.json()["stderr"][0]
            assert AGENT_SECRET not in run.text
            shown = http.get(f"/v1/agents/{agent.id}", params={"include": "agent.secrets"})
            assert shown.status_code == 500
            assert "MEMLET_ENCRYPTION_KEY" in shown.json()["detail"]
            assert http.get("/v1/agents/").status_code == 200  # everything that needs no secret still works


class TestResponses:
    def test_values_only_when_asked_for(self, encrypted: LiveServer) -> None:
        client = Letta(base_url=encrypted.base_url, max_retries=0, timeout=60)
        agent = make_agent(client, secrets={"MY_TOKEN": AGENT_SECRET})
        with httpx.Client(base_url=encrypted.base_url, headers={"user-agent": "curl/8.0"}) as http:
            plain = http.get(f"/v1/agents/{agent.id}")
            listed = http.get("/v1/agents/")
            asked = http.get(f"/v1/agents/{agent.id}", params={"include": "agent.secrets"}).json()
        assert plain.status_code == 200 and plain.json()["tools"]  # the other relationships still come
        assert plain.json()["secrets"] == [] and plain.json()["tool_exec_environment_variables"] == []
        assert AGENT_SECRET not in plain.text and AGENT_SECRET not in listed.text
        assert [(s["key"], s["value"], s["value_enc"]) for s in asked["secrets"]] == [("MY_TOKEN", AGENT_SECRET, None)]
        assert asked["tool_exec_environment_variables"] == asked["secrets"]
        updated = client.agents.update(agent.id, secrets={"MY_TOKEN": "rotated-value-1"})
        assert [(s.key, s.value) for s in updated.secrets] == [("MY_TOKEN", "rotated-value-1")]


class TestKeyRotation:
    def test_reencrypt_command_moves_every_row_to_the_first_key(
        self, settings: Settings, pg_uri: str, mock_llm: Any, tmp_path: Any
    ) -> None:
        old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
        try:
            with running(settings.model_copy(update={"encryption_key": SecretStr(old)})) as server:
                client = Letta(base_url=server.base_url, max_retries=0, timeout=60)
                agent = make_agent(client, secrets={"MY_TOKEN": AGENT_SECRET})
                body = {
                    "name": "byok",
                    "provider_type": "openai",
                    "api_key": PROVIDER_KEY,
                    "base_url": mock_llm.base_url,
                }
                assert httpx.post(f"{server.base_url}/v1/providers/", json=body).status_code == 200
            env = {"PATH": os.environ["PATH"], "MEMLET_PG_URI": pg_uri, "MEMLET_ENCRYPTION_KEY": f"{new},{old}"}
            done = subprocess.run(
                [sys.executable, "-m", "memlet", "secrets", "reencrypt"],
                env=env,
                cwd=tmp_path,
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, done.stderr
            assert "1 agents and the keys of 1 providers" in done.stderr
            only_new = Keyring((new,))
            secrets = sql(pg_uri, "SELECT secrets FROM agents WHERE id = :id", id=agent.id)[0][0]
            assert [s["value"] for s in only_new.reveal_secrets(secrets)] == [AGENT_SECRET]
            stored_key = sql(pg_uri, "SELECT api_key FROM providers")[0][0]
            assert only_new.reveal(stored_key) == PROVIDER_KEY
        finally:
            reset_database(pg_uri)
