"""Schemathesis over Letta's OpenAPI spec, restricted to the operations memlet serves.

``run_schemathesis(base_url, ...)`` runs the ``st`` CLI (all phases: examples, coverage, fuzzing, stateful) with
the ``not_a_server_error`` check against a live memlet, and reads its JSON and NDJSON reports back into a
``FuzzResult``: how many cases ran and which responses were 5xx. A 5xx is accepted only when it is a failing
dependency the test set up on purpose (``ALLOWED_SERVER_STATUSES``), or Letta's 501 for run traces without a trace
store (``MISSING_TRACE_STORE``); everything else is a memlet bug.
"""

import base64
import json
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[2]
LETTA_SPEC = REPO_ROOT.parent / "shared" / "letta" / "openapi.json"
# 502/504: an LLM provider failed or timed out (a fuzzed agent may point anywhere). 503 only comes from a
# database that is down, which never happens in these runs, so it is not accepted here.
ALLOWED_SERVER_STATUSES = frozenset({502, 504})
PHASES = "examples,coverage,fuzzing,stateful"
# Letta's own answer to GET /v1/runs/{id}/trace without ClickHouse; memlet has no trace store, so it answers it too.
MISSING_TRACE_STORE = (
    "OTEL traces require ClickHouse. Set LETTA_CLICKHOUSE_ENDPOINT and configure ClickHouse connection."
)


@dataclass
class ServerError:
    operation: str
    status: int
    request: str
    body: str

    @property
    def is_expected(self) -> bool:
        """A failing LLM provider, or Letta's 501 for a backend memlet does not have (ClickHouse run traces)."""
        return self.is_failing_llm or self.is_missing_backend

    @property
    def is_missing_backend(self) -> bool:
        try:
            detail = json.loads(self.body).get("detail")
        except (ValueError, AttributeError):
            return False
        return self.status == 501 and detail == MISSING_TRACE_STORE

    @property
    def is_failing_llm(self) -> bool:
        """A provider that is down or unreachable: 502/504, or Letta's 500 ``{"error": {"type": "llm_..."}}``."""
        if self.status in ALLOWED_SERVER_STATUSES:
            return True
        try:
            error = json.loads(self.body).get("error")
        except (ValueError, AttributeError):
            return False
        return self.status == 500 and isinstance(error, dict) and str(error.get("type", "")).startswith("llm_")


@dataclass
class FuzzResult:
    cases: int
    seconds: float
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: list[ServerError] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    errors: list[Any] = field(default_factory=list)
    phases: dict[str, Any] = field(default_factory=dict)
    operations: dict[str, Any] = field(default_factory=dict)  # Schemathesis' counts: selected, tested, errored...
    exercised: set[str] = field(default_factory=set)  # "METHOD /path" of every operation that got a response

    @property
    def bad_server_errors(self) -> list[ServerError]:
        return [e for e in self.server_errors if not e.is_expected]

    def summary(self) -> str:
        distinct = sorted({(e.operation, e.status) for e in self.bad_server_errors})
        lines = [
            f"cases: {self.cases} in {self.seconds:.1f}s; responses recorded: {sum(self.statuses.values())}",
            f"status counts: {dict(sorted(self.statuses.items()))}",
            f"5xx responses: {len(self.server_errors)} ({len(self.bad_server_errors)} not allowed); "
            f"distinct (operation, status): {len(distinct)}",
            f"phases: { {name: p.get('status') for name, p in self.phases.items()} }",
            f"operations: {self.operations}; exercised (got a response): {len(self.exercised)}",
        ]
        lines += [f"  {status} {operation}" for operation, status in distinct]
        for error in self.bad_server_errors[:20]:
            lines.append(f"  e.g. {error.status} {error.request[:300]} -> {error.body[:300]}")
        return "\n".join(lines)


def served_operation_ids(base_url: str, spec_path: Path = LETTA_SPEC) -> list[str]:
    """operationIds present both in memlet's own /openapi.json and in Letta's spec."""
    ours = httpx.get(f"{base_url}/openapi.json", timeout=30).json()
    theirs = json.loads(spec_path.read_text())
    return sorted(_operation_ids(ours) & _operation_ids(theirs))


def _operation_ids(spec: dict[str, Any]) -> set[str]:
    return {
        op["operationId"]
        for item in spec.get("paths", {}).values()
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    }


def _config_file(report_dir: Path) -> Path:
    # Every status passes the CLI's own check; the 5xx are judged here, from the recorded bodies.
    statuses = ", ".join(f'"{s}"' for s in ["1XX", "2XX", "3XX", "4XX", "5XX"])
    path = report_dir / "schemathesis.toml"
    path.write_text(f"[checks.not_a_server_error]\nexpected-statuses = [{statuses}]\n")
    return path


def st_command(
    base_url: str,
    operation_ids: list[str],
    report_dir: Path,
    *,
    max_examples: int,
    max_time: float | None,
    seed: int | None,
    workers: int = 1,
) -> list[str]:
    command = [
        str(Path(sys.executable).with_name("st")),
        "--config-file",
        str(_config_file(report_dir)),
        "run",
        str(LETTA_SPEC),
        "--url",
        base_url,
        "--phases",
        PHASES,
        "--checks",
        "not_a_server_error",
        "--max-examples",
        str(max_examples),
        "--workers",
        str(workers),
        "--request-timeout",
        "30",
        "--generation-database",
        "none",
        "--continue-on-failure",
        "--report",
        "json,ndjson",
        "--report-json-path",
        str(report_dir / "report.json"),
        "--report-ndjson-path",
        str(report_dir / "events.ndjson"),
        "--no-color",
        "--warnings",
        "off",
    ]
    if max_time is not None:
        command += ["--max-time", str(int(max_time))]
    if seed is not None:
        command += ["--seed", str(seed)]
    for operation_id in operation_ids:
        command += ["--include-operation-id", operation_id]
    return command


def run_schemathesis(
    base_url: str,
    report_dir: Path,
    *,
    max_examples: int = 20,
    max_time: float | None = None,
    seed: int | None = None,
    operation_ids: list[str] | None = None,
) -> FuzzResult:
    report_dir.mkdir(parents=True, exist_ok=True)
    ops = operation_ids if operation_ids is not None else served_operation_ids(base_url)
    command = st_command(base_url, ops, report_dir, max_examples=max_examples, max_time=max_time, seed=seed)
    started = time.monotonic()
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    (report_dir / "stdout.txt").write_text(completed.stdout + completed.stderr)
    report_path = report_dir / "report.json"
    if not report_path.exists():
        raise RuntimeError(f"schemathesis wrote no report:\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}")
    return read_reports(report_dir, time.monotonic() - started)


def read_reports(report_dir: Path, seconds: float) -> FuzzResult:
    report = json.loads((report_dir / "report.json").read_text())
    result = FuzzResult(
        cases=int(report["test_cases"]["generated"]),
        seconds=seconds,
        failures=report.get("failures", []),
        errors=report.get("errors", []),
        phases=report.get("phases", {}),
        operations=report.get("operations", {}),
    )
    for line in (report_dir / "events.ndjson").read_text().splitlines():
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if not finished:
            continue
        recorder = finished.get("recorder") or {}
        for interaction in (recorder.get("interactions") or {}).values():
            _record(result, recorder.get("label", "?"), interaction)
    return result


def _record(result: FuzzResult, label: str, interaction: dict[str, Any]) -> None:
    response = interaction.get("response") or {}
    status = response.get("status_code")
    if status is None:
        return
    result.statuses[status] += 1
    result.exercised.add(label)
    if status >= 500:
        request = interaction.get("request", {})
        result.server_errors.append(
            ServerError(
                operation=label,
                status=status,
                request=f"{request.get('method')} {request.get('uri')} {_decode(request.get('body'))}",
                body=_decode(response.get("content")),
            )
        )


def _decode(content: Any) -> str:
    if isinstance(content, dict) and "$base64" in content:
        return base64.b64decode(content["$base64"]).decode("utf-8", errors="replace")
    return "" if content is None else str(content)
