"""Schemathesis over every operation memlet serves from Letta's spec: no response may be a server error.

A short, bounded run for CI (all phases, a time budget of ``CI_BUDGET_S``); ``make fuzz`` runs the long one
(``python -m tests.fuzz``). A 5xx fails the test with the request that caused it, unless it is a failing LLM
provider (502/504, or Letta's ``{"error": {"type": "llm_..."}}`` body), which a fuzzed agent can point anywhere.
"""

from pathlib import Path

import pytest

from tests.conftest import LiveServer
from tests.fuzz.harness import LETTA_SPEC, run_schemathesis, served_operation_ids

CI_BUDGET_S = 60


def test_spec_is_there_and_covers_what_memlet_serves(server: LiveServer) -> None:
    assert LETTA_SPEC.is_file(), f"the Letta contract is missing: {LETTA_SPEC}"
    operations = served_operation_ids(server.base_url)
    assert len(operations) >= 80
    assert {"create_agent", "send_message", "search_tools", "modify_core_memory_block"} <= set(operations)


@pytest.mark.timeout(CI_BUDGET_S * 4)  # the budget, plus start-up and a slow request finishing under load
def test_no_server_errors(server: LiveServer, tmp_path: Path) -> None:
    served = served_operation_ids(server.base_url)
    result = run_schemathesis(
        server.base_url, tmp_path, max_examples=5, max_time=CI_BUDGET_S, seed=7, operation_ids=served
    )
    print(result.summary())
    assert result.cases >= 500, result.summary()
    # Every served operation (archives, folders, batches, run streams included) gets requests within the budget.
    assert result.operations.get("tested") == len(served), result.summary()
    assert len(result.exercised - {"Stateful tests"}) >= len(served), result.summary()
    assert not result.errors, result.errors
    assert result.bad_server_errors == [], result.summary()
