"""`track_provider_trace`: on by default as Letta's; off through memlet's or Letta's environment variable."""

import pytest

from memlet.config import Settings


def test_on_by_default() -> None:
    assert Settings(_env_file=None).track_provider_trace is True  # type: ignore[call-arg]


@pytest.mark.parametrize("name", ["MEMLET_TRACK_PROVIDER_TRACE", "LETTA_TRACK_PROVIDER_TRACE"])
def test_off_through_either_name(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, "false")
    assert Settings(_env_file=None).track_provider_trace is False  # type: ignore[call-arg]
