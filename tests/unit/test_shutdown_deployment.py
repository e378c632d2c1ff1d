"""docker stop gives memlet time to drain its runs: the stop grace outlasts the server's own shutdown grace."""

import re
from pathlib import Path

import yaml

from memlet.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_compose_stop_grace_outlasts_the_shutdown_grace() -> None:
    memlet = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["memlet"]
    match = re.fullmatch(r"(\d+)s", str(memlet["stop_grace_period"]))
    assert match is not None
    default_grace = Settings(_env_file=None).shutdown_grace_s  # type: ignore[call-arg]
    assert int(match.group(1)) >= default_grace + 5  # the drain, then closing runs and their callbacks
