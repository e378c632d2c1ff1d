"""The edge layer (`memlet.api.edge`) as a client meets it: every response carries a request id, refusals included,
and the request metrics count every answer, the edge's own refusals too (the order the five middlewares had)."""

import re
import uuid

import httpx
from prometheus_client.parser import text_string_to_metric_families

from memlet.config import Settings
from tests.api.test_metrics_api import scrape, value
from tests.conftest import LiveServer


class TestRequestId:
    def test_a_new_uuid4_per_request(self, http: httpx.Client) -> None:
        ids = [http.get("/v1/health/").headers["x-request-id"] for _ in range(3)]
        assert len(set(ids)) == 3
        for rid in ids:
            assert re.fullmatch(r"[0-9a-f]{32}", rid)
            assert uuid.UUID(hex=rid).version == 4 and uuid.UUID(hex=rid).variant == uuid.RFC_4122

    def test_the_callers_id_is_echoed_cut_to_64(self, http: httpx.Client) -> None:
        assert http.get("/v1/health/", headers={"X-Request-ID": "trace-1"}).headers["x-request-id"] == "trace-1"
        long = "r" * 100
        assert http.get("/v1/agents/", headers={"X-Request-ID": long}).headers["x-request-id"] == "r" * 64

    def test_refusals_carry_it_too(self, settings: Settings, http: httpx.Client) -> None:
        foreign = http.get("/v1/agents/", headers={"Host": "evil.example", "X-Request-ID": "host-1"})
        assert (foreign.status_code, foreign.headers["x-request-id"]) == (400, "host-1")
        small = LiveServer(settings.model_copy(update={"max_body_bytes": 1000})).start()
        try:
            huge = httpx.post(
                f"{small.base_url}/v1/agents/",
                json={"name": "x" * 5000},
                headers={"X-Request-ID": "big-1"},
            )
        finally:
            small.stop()
        assert (huge.status_code, huge.headers["x-request-id"]) == (413, "big-1")
        missing = http.get("/v1/nothing/here", headers={"X-Request-ID": "miss-1"})
        assert (missing.status_code, missing.headers["x-request-id"]) == (404, "miss-1")


class TestMetricsAtTheEdge:
    def test_refused_requests_are_counted_unmatched(self, http: httpx.Client) -> None:
        before = scrape(http)
        for _ in range(2):
            assert http.get("/v1/agents/", headers={"Host": "evil.example"}).status_code == 400
        after = scrape(http)
        labels = {"method": "GET", "route": "unmatched", "status": "400"}
        counted = value(after, "memlet_http_requests_total", **labels) - value(
            before, "memlet_http_requests_total", **labels
        )
        assert counted == 2
        timed = {"method": "GET", "route": "unmatched"}
        assert (
            value(after, "memlet_http_request_duration_seconds_count", **timed)
            - value(before, "memlet_http_request_duration_seconds_count", **timed)
            >= 2
        )

    def test_families_are_exposed(self, http: httpx.Client) -> None:
        http.get("/v1/health/")
        names = {family.name for family in text_string_to_metric_families(http.get("/metrics").text)}
        assert {"memlet_http_requests", "memlet_http_request_duration_seconds"} <= names
