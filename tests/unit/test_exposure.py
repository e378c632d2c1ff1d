"""The exposure rule and the start-up warnings, without a server."""

import json
import logging
from collections.abc import Iterator

import pytest

from memlet.api.middleware import host_name
from memlet.config import Settings
from memlet.exposure import UnsafeExposureError, is_loopback_host, refuse_unsafe_exposure, warn_at_startup
from memlet.log import JsonFormatter


def make(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


class TestLoopback:
    @pytest.mark.parametrize("host", ["127.0.0.1", "127.3.2.1", "localhost", "LOCALHOST", "::1", "[::1]", "localhost."])
    def test_loopback(self, host: str) -> None:
        assert is_loopback_host(host)

    @pytest.mark.parametrize(
        "host",
        ["0.0.0.0", "::", "", "192.168.1.2", "10.0.0.1", "example.com", "localhost.example.com", "127.0.0.1.nip.io"],
    )
    def test_not_loopback(self, host: str) -> None:
        assert not is_loopback_host(host)

    @pytest.mark.parametrize(
        ("header", "name"),
        [
            ("localhost:8283", "localhost"),
            ("[::1]:8283", "[::1]"),
            ("[::1]", "[::1]"),
            ("evil.example", "evil.example"),
        ],
    )
    def test_host_header_name(self, header: str, name: str) -> None:
        assert host_name(header) == name


class TestRefusal:
    def test_exposed_without_password_refused(self) -> None:
        with pytest.raises(UnsafeExposureError, match="MEMLET_ALLOW_INSECURE=true"):
            refuse_unsafe_exposure(make(host="0.0.0.0"))

    @pytest.mark.parametrize(
        "values",
        [{"host": "127.0.0.1"}, {"host": "0.0.0.0", "server_password": "pw"}, {"host": "::", "allow_insecure": True}],
    )
    def test_allowed(self, values: dict[str, object]) -> None:
        refuse_unsafe_exposure(make(**values))

    def test_create_app_applies_the_same_rule(self) -> None:
        from memlet.app import create_app

        with pytest.raises(UnsafeExposureError):
            create_app(make(host="0.0.0.0", pg_uri="postgresql://unused/db"))


@pytest.fixture
def records() -> Iterator[list[dict[str, object]]]:
    lines: list[dict[str, object]] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(json.loads(JsonFormatter().format(record)))

    logger = logging.getLogger("memlet.exposure")
    handler = Collect()
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)


class TestStartupWarnings:
    def test_root_is_warned_about(self, records: list[dict[str, object]]) -> None:
        warn_at_startup(make(), euid=0)
        assert [(r["level"], r["event"]) for r in records] == [("warning", "running_as_root")]

    def test_other_users_are_not(self, records: list[dict[str, object]]) -> None:
        warn_at_startup(make(), euid=1000)
        warn_at_startup(make(), euid=None)
        assert records == []

    def test_opt_out_is_warned_about_only_when_it_matters(self, records: list[dict[str, object]]) -> None:
        warn_at_startup(make(host="127.0.0.1", allow_insecure=True), euid=1000)
        warn_at_startup(make(host="0.0.0.0", allow_insecure=True, server_password="pw"), euid=1000)
        assert records == []
        warn_at_startup(make(host="0.0.0.0", allow_insecure=True), euid=1000)
        assert [(r["event"], r["host"]) for r in records] == [("insecure_exposure", "0.0.0.0")]
