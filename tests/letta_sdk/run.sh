#!/usr/bin/env bash
# Run Letta 0.16.8's own SDK CRUD tests (tests/sdk: agents, blocks, tools) unchanged against a live memlet.
# Nothing is downloaded: the test files come from a Letta checkout (or a bare git dir) already on disk.
# See tests/letta_sdk/README.md (run_mcp.sh runs mcp_servers_test.py).
#
#   tests/letta_sdk/run.sh <letta-git-dir-or-checkout> [<rev>]     # rev defaults to the checkout's files / HEAD
#
# Extra pytest arguments go in LETTA_SDK_PYTEST_ARGS (e.g. "-x -rA"). The tests run with memlet's .venv, or with
# the virtualenv LETTA_SDK_VENV names (one with letta-client, pytest and pytest-order, such as run_mcp.sh builds).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="$ROOT/.venv/bin/python"
SRC="${1:?usage: run.sh <letta git dir or checkout> [rev]}"
REV="${2:-}"
TEST_PY="${LETTA_SDK_VENV:+$LETTA_SDK_VENV/bin/python}"
TEST_PY="${TEST_PY:-$PY}"

[ -x "$PY" ] || { echo "no $PY: run 'make dev' first" >&2; exit 2; }
"$TEST_PY" -c "import pytest_order" 2>/dev/null || {
    echo "pytest-order is needed (Letta's harness orders create → update → list → delete with it):" >&2
    echo "  $(dirname "$TEST_PY")/pip install pytest-order" >&2
    exit 2
}
# shellcheck source=tests/letta_sdk/common.sh
. "$ROOT/tests/letta_sdk/common.sh"

# 1. Letta's test files, byte for byte, into a scratch dir outside the repository.
copy_letta_files conftest.py agents_test.py blocks_test.py tools_test.py
# blocks_test.py imports one constant from the letta package; this stub carries Letta 0.16.8's value.
mkdir -p "$WORK/tests/letta"
: > "$WORK/tests/letta/__init__.py"
echo "CORE_MEMORY_BLOCK_CHAR_LIMIT: int = 100000" > "$WORK/tests/letta/constants.py"

# 2. memlet's mock LLM and a memlet server from this worktree on a fresh embedded Postgres.
start_memlet

# 3. Letta's tests, unchanged, with the installed letta-client. -c /dev/null keeps memlet's pytest config out.
cd "$WORK/tests"
set +e
# shellcheck disable=SC2086
LETTA_SERVER_URL="http://127.0.0.1:$PORT" "$TEST_PY" -m pytest -c /dev/null --rootdir "$WORK/tests" -p pytest_order \
    -p no:cacheprovider -q ${LETTA_SDK_PYTEST_ARGS:-} agents_test.py blocks_test.py tools_test.py
STATUS=$?
set -e
[ "$STATUS" -eq 0 ] || { echo "--- memlet server log ---" >&2; tail -50 "$WORK/server.log" >&2; }
exit "$STATUS"
