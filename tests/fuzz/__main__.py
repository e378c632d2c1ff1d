"""``make fuzz``: a long Schemathesis run against a fresh memlet (own embedded Postgres, the tests' mock LLM).

    python -m tests.fuzz [--max-examples N] [--max-time S] [--seed N] [--report-dir DIR] [--operation-id ID ...]

Prints the number of cases and the status counts; exits 1 when any response was a disallowed 5xx.
"""

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from memlet import migrations
from memlet.config import Settings
from memlet.db.embedded import EmbeddedPostgres
from tests.conftest import LiveServer
from tests.fuzz.harness import run_schemathesis
from tests.mock_llm import MockLLM


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz")
    parser.add_argument("--max-examples", type=int, default=40)
    parser.add_argument("--max-time", type=float, default=900)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--report-dir", type=Path, default=Path("fuzz-report"))
    parser.add_argument(
        "--operation-id", action="append", dest="operation_ids", help="fuzz only this operation (repeatable)"
    )
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="memlet-fuzz-pg-"))
    postgres = EmbeddedPostgres(root / "pgdata", database="memlet_fuzz")
    mock = MockLLM.start()
    server = None
    try:
        uri = postgres.start()
        asyncio.run(migrations.upgrade(uri))
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            pg_uri=uri,
            openai_api_key="sk-mock",
            openai_base_url=mock.base_url,
            llm_timeout_s=5,
            llm_retry_base_delay_s=0.05,
            tool_timeout_s=10,
            log_level="CRITICAL",
        )
        server = LiveServer(settings).start()
        result = run_schemathesis(
            server.base_url,
            args.report_dir,
            max_examples=args.max_examples,
            max_time=args.max_time,
            seed=args.seed,
            operation_ids=args.operation_ids,
        )
        print(result.summary())
        print(f"reports in {args.report_dir}/")
        return 1 if result.bad_server_errors else 0
    finally:
        if server is not None:
            server.stop()
        mock.stop()
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
