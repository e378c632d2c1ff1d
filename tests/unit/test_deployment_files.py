"""Docker cannot run here, so the compose file and Dockerfile are checked for the properties that matter."""

import json
import re
from pathlib import Path

import pytest
import yaml

from memlet.config import Settings
from memlet.exposure import UnsafeExposureError, refuse_unsafe_exposure

ROOT = Path(__file__).resolve().parents[2]


def test_compose_runs_memlet_beside_pgvector() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert services["db"]["image"].startswith("pgvector/pgvector")
    assert "healthcheck" in services["db"] and "healthcheck" in services["memlet"]
    assert services["memlet"]["depends_on"]["db"]["condition"] == "service_healthy"
    # Only memlet's API port is published; the database is reachable only on the compose network.
    assert services["memlet"]["ports"] == ["8283:8283"]
    assert "ports" not in services["db"]
    # A named volume keeps the data.
    assert any(v.startswith("pgdata:") for v in services["db"]["volumes"])
    assert "pgdata" in compose["volumes"]
    # Credentials come from the environment, none hard-coded.
    assert "${POSTGRES_PASSWORD" in services["db"]["environment"]["POSTGRES_PASSWORD"]
    assert "@db:5432/" in services["memlet"]["environment"]["MEMLET_PG_URI"]


def test_dockerfile_serves_on_8283_as_non_root() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "EXPOSE 8283" in text
    assert "USER memlet" in text
    assert "HEALTHCHECK" in text
    assert '"--port", "8283"' in text


def test_compose_requires_the_server_password() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    password = compose["services"]["memlet"]["environment"]["MEMLET_SERVER_PASSWORD"]
    # `${VAR:?message}`: compose stops with the message when the variable is unset or empty.
    assert re.fullmatch(r"\$\{MEMLET_SERVER_PASSWORD:\?[^}]+\}", password)


def test_image_command_starts_only_with_a_password() -> None:
    """The image binds 0.0.0.0: without the password compose requires it refuses, with one it starts."""
    cmd_line = next(line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("CMD "))
    command = json.loads(cmd_line.removeprefix("CMD "))
    host = command[command.index("--host") + 1]
    assert host == "0.0.0.0"
    with pytest.raises(UnsafeExposureError):
        refuse_unsafe_exposure(Settings(_env_file=None, host=host))  # type: ignore[call-arg]
    refuse_unsafe_exposure(Settings(_env_file=None, host=host, server_password="from-compose"))  # type: ignore[call-arg]


def test_image_isolates_tools_and_protects_its_code() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "apt-get install -y --no-install-recommends bubblewrap" in text
    assert "chown" not in text  # /app stays root-owned: the memlet user cannot rewrite the server's code
    ci = (ROOT / ".ci" / "run").read_text()
    assert "command -v bwrap" in ci and "apt-get install -y -q bubblewrap" in ci


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme
    assert "make test" in ci


def test_readme_documents_every_size_limit() -> None:
    table = (ROOT / "README.md").read_text().split("## Configuration", 1)[1].split("\n## ", 1)[0]
    limits = [name for name in Settings.model_fields if name.startswith("max_") and name.endswith("_bytes")]
    assert limits and [n for n in limits if f"`MEMLET_{n.upper()}`" not in table] == []
