"""The shared yardstick against a fresh memlet, with Letta 0.16.8's numbers and issue 13's targets beside each row.

    .venv/bin/python bench/yardstick.py [--runs 2] [--checkout PATH] [--phases a,f,b,c,d] [--keep]

Each run starts the shared mock LLM (`../shared/bench/mock_openai.py --latency-ms 0`) and a `memlet server` on an
embedded Postgres of its own (a fresh data dir), then runs `../shared/bench/perf_anchor.py` against it with the
server's pid and the Postgres data dir, so every row also gets the server's and Postgres' CPU per operation. The
rows print with Letta's numbers from `../shared/letta/baseline.md` (measured the same way on the same kind of
machine), the ratio, and the target of issue 13 where it sets one. `--checkout` runs another checkout of memlet
(with this interpreter): run two in turn to compare mains on one machine at one time. Phase e (archival memory)
and row g (RSS after the run) come with the phases; g is always printed.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import stop, wait_healthy
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
ANCHOR = SHARED / "bench" / "perf_anchor.py"
MOCK = SHARED / "bench" / "mock_openai.py"
BASELINE = SHARED / "letta" / "baseline.md"

# perf_anchor's result key for each baseline row: (phase, a word of the row's operation text).
KEYS = {
    ("a", "create"): "a_create_agent_seq",
    ("b", "send"): "b_send_message_seq",
    ("c", "send"): "c_send_message_concurrent",
    ("d", "list"): "d_list_messages",
    ("e", "insert"): "e_archival_insert_seq",
    ("e", "substring"): "e_archival_search",
    ("e", "semantic"): "e_archival_semantic_search",
    ("f", "list"): "f_list_agents",
}
TARGETS = {
    "b_send_message_seq": "target: <= 10 ms server + Postgres CPU, p50 <= 12 ms",
    "c_send_message_concurrent": "target: >= 100 msg/s",
}
RATIO_TARGET = 25  # issue 13: every row >= 25x Letta
RSS_TARGET_MB = 150


def letta_rows() -> dict[str, dict[str, float | None]]:
    """Letta's p50, rate and server CPU per result key, read from the baseline's table."""
    rows: dict[str, dict[str, float | None]] = {}
    for line in BASELINE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7 or len(cells[0]) != 1:
            continue
        phase, operation, _, p50, _, rate, cpu = cells
        key = next((k for (p, word), k in KEYS.items() if p == phase and word in operation), None)
        if key is not None:
            rows[key] = {"p50_ms": _number(p50), "rate": _number(rate), "cpu_ms": _number(cpu)}
    return rows


def _number(cell: str) -> float | None:
    found = re.match(r"[\d.]+", cell)
    return float(found.group()) if found else None


def one_run(checkout: Path, phases: str, label: str, keep: bool) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix="memlet-yardstick."))
    mock_port, port = free_port(), free_port()
    mock = subprocess.Popen(
        [sys.executable, str(MOCK), "--port", str(mock_port), "--latency-ms", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = {
        **os.environ,
        "MEMLET_DATA_DIR": str(data),
        "MEMLET_LOG_LEVEL": "WARNING",
        "OPENAI_API_KEY": "sk-mock",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{mock_port}/v1",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "memlet", "server", "--port", str(port)],
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    out = data / "yardstick.json"
    try:
        wait_healthy(f"http://127.0.0.1:{mock_port}/v1/models", mock)
        wait_healthy(f"http://127.0.0.1:{port}/v1/health/", server, timeout_s=120)
        command = [
            sys.executable,
            str(ANCHOR),
            "--base-url",
            f"http://127.0.0.1:{port}",
            "--label",
            label,
            "--server-pid",
            str(server.pid),
            "--pg-data",
            str(data / "pgdata"),
            "--phases",
            phases,
            "--out",
            str(out),
        ]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        results: dict[str, Any] = json.loads(out.read_text())["results"]
        return results
    finally:
        stop(server, mock)
        if keep:
            print(f"data dir kept: {data}")
        else:
            shutil.rmtree(data, ignore_errors=True)


def report(run: int, results: dict[str, Any], letta: dict[str, dict[str, float | None]]) -> None:
    print(f"run {run} (load average at the end: {' '.join(results.get('loadavg_end', []))})")
    for key, row in sorted(results.items()):
        if not isinstance(row, dict) or "p50_ms" not in row:
            continue
        base = letta.get(key, {})
        cpu = row.get("cpu") or {}
        server_cpu, both_cpu = cpu.get("server_cpu_ms_per_op"), cpu.get("server_plus_pg_cpu_ms_per_op")
        line = f"  {key:<28} p50 {row['p50_ms']:8.2f} ms  p99 {row['p99_ms']:8.2f} ms"
        if key == "c_send_message_concurrent":
            rate = row.get("msgs_per_s") or row.get("per_s")
            letta_rate = base.get("rate")
            line += f"  {rate} msg/s"
            if rate and letta_rate:
                line += f"  Letta {letta_rate} msg/s: {rate / letta_rate:5.1f}x"
        elif base.get("p50_ms"):
            ratio = base["p50_ms"] / row["p50_ms"]
            mark = "" if ratio >= RATIO_TARGET else f"  (< {RATIO_TARGET}x)"
            line += f"  Letta {base['p50_ms']} ms: {ratio:5.1f}x{mark}"
        if server_cpu is not None:
            line += f"  CPU server {server_cpu} + Postgres = {both_cpu} ms/op"
            if base.get("cpu_ms"):
                line += f" (Letta server {base['cpu_ms']:.0f})"
        print(line)
        if key in TARGETS:
            print(f"  {'':<28} {TARGETS[key]}")
    rss = (results.get("g_server") or {}).get("rss_mb_after")
    if rss:
        print(f"  {'g_server RSS after the run':<28} {rss:.1f} MB (Letta 568 MB; target <= {RSS_TARGET_MB} MB)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the memlet checkout to run (default: this one)")
    parser.add_argument("--phases", default="a,f,b,c,d")
    parser.add_argument("--keep", action="store_true", help="keep each run's data dir (Postgres, the JSON results)")
    args = parser.parse_args()
    for required in (ANCHOR, MOCK, BASELINE):
        if not required.is_file():
            raise SystemExit(f"{required} is missing: the yardstick lives in ../shared next to the repository")
    letta = letta_rows()
    checkout = args.checkout.resolve()
    print(f"memlet at {checkout}; Letta 0.16.8 from {BASELINE.relative_to(SHARED.parent)}")
    for run in range(1, args.runs + 1):
        report(run, one_run(checkout, args.phases, f"memlet-{run}", args.keep), letta)


if __name__ == "__main__":
    main()
