"""With PROMETHEUS_MULTIPROC_DIR, `/metrics` sums every worker's counters (each worker a separate process)."""

import subprocess
import sys
from pathlib import Path

WORKER = """
from memlet import metrics
metrics.run_finished("completed", "end_turn")
"""
SCRAPE = """
from pathlib import Path
import sys
from memlet import metrics
sys.stdout.write(metrics.render(None, Path(sys.argv[1])).decode())
"""


def run(code: str, shared: Path, *args: str) -> str:
    env = {"PROMETHEUS_MULTIPROC_DIR": str(shared), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True)
    return done.stdout


def test_counters_summed_over_workers(tmp_path: Path) -> None:
    for _ in range(3):
        run(WORKER, tmp_path)
    text = run(SCRAPE, tmp_path, str(tmp_path))
    assert 'memlet_runs_total{status="completed",stop_reason="end_turn"} 3.0' in text
