"""Docker cannot run here, so the compose file and Dockerfile are checked for the properties that matter."""

from pathlib import Path

import yaml

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


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme
    assert "make test" in ci
