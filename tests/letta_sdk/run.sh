#!/usr/bin/env bash
# Run Letta 0.16.8's own SDK CRUD tests (tests/sdk: agents, blocks, tools) unchanged against a live memlet.
# Nothing is downloaded: the test files come from a Letta checkout (or a bare git dir) already on disk.
# See tests/letta_sdk/README.md.
#
#   tests/letta_sdk/run.sh <letta-git-dir-or-checkout> [<rev>]     # rev defaults to the checkout's files / HEAD
#
# Extra pytest arguments go in LETTA_SDK_PYTEST_ARGS (e.g. "-x -rA").
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="$ROOT/.venv/bin/python"
SRC="${1:?usage: run.sh <letta git dir or checkout> [rev]}"
REV="${2:-}"
FILES=(conftest.py agents_test.py blocks_test.py tools_test.py)

[ -x "$PY" ] || { echo "no $PY: run 'make dev' first" >&2; exit 2; }
"$PY" -c "import pytest_order" 2>/dev/null || {
    echo "pytest-order is needed (Letta's harness orders create → update → list → delete with it):" >&2
    echo "  $ROOT/.venv/bin/pip install pytest-order" >&2
    exit 2
}

WORK="$(mktemp -d /tmp/memlet-letta-sdk.XXXXXX)"
MOCK_PID="" SERVER_PID=""
cleanup() {
    set +e
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    [ -n "$MOCK_PID" ] && kill "$MOCK_PID" 2>/dev/null && wait "$MOCK_PID" 2>/dev/null
    # The embedded Postgres outlives the server process; stop the one this run started (fast shutdown).
    local pidfile="$WORK/data/pgdata/postmaster.pid" pg_pid
    if [ -f "$pidfile" ]; then
        pg_pid="$(head -1 "$pidfile")"
        kill -INT "$pg_pid" 2>/dev/null
        for _ in $(seq 40); do kill -0 "$pg_pid" 2>/dev/null || break; sleep 0.25; done
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# 1. Letta's test files, byte for byte, into a scratch dir outside the repository.
mkdir -p "$WORK/tests/letta"
for f in "${FILES[@]}"; do
    if [ -n "$REV" ] || [ ! -f "$SRC/tests/sdk/$f" ]; then
        git --git-dir="$( [ -d "$SRC/.git" ] && echo "$SRC/.git" || echo "$SRC")" show "${REV:-HEAD}:tests/sdk/$f" \
            > "$WORK/tests/$f"
    else
        cp "$SRC/tests/sdk/$f" "$WORK/tests/$f"
    fi
done
# blocks_test.py imports one constant from the letta package; this stub carries Letta 0.16.8's value.
: > "$WORK/tests/letta/__init__.py"
echo "CORE_MEMORY_BLOCK_CHAR_LIMIT: int = 100000" > "$WORK/tests/letta/constants.py"

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
MOCK_PORT="$(free_port)"
PORT="$(free_port)"

# 2. memlet's mock LLM (serves gpt-4o-mini and text-embedding-3-small, so the handles the tests use exist).
(cd "$ROOT" && exec "$PY" -m tests.mock_llm --port "$MOCK_PORT") > "$WORK/mock.log" 2>&1 &
MOCK_PID=$!

# 3. A memlet server from this worktree on a fresh embedded Postgres.
MEMLET_DATA_DIR="$WORK/data" OPENAI_API_KEY=sk-mock OPENAI_BASE_URL="http://127.0.0.1:$MOCK_PORT/v1" \
    "$ROOT/.venv/bin/memlet" server --host 127.0.0.1 --port "$PORT" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 120); do
    curl -sf "http://127.0.0.1:$PORT/v1/health/" > /dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 2; }
    sleep 0.5
done
curl -sf "http://127.0.0.1:$PORT/v1/health/" > /dev/null || { cat "$WORK/server.log" >&2; exit 2; }

# 4. Letta's tests, unchanged, with the installed letta-client. -c /dev/null keeps memlet's pytest config out.
cd "$WORK/tests"
set +e
# shellcheck disable=SC2086
LETTA_SERVER_URL="http://127.0.0.1:$PORT" "$PY" -m pytest -c /dev/null --rootdir "$WORK/tests" -p pytest_order \
    -p no:cacheprovider -q ${LETTA_SDK_PYTEST_ARGS:-} agents_test.py blocks_test.py tools_test.py
STATUS=$?
set -e
[ "$STATUS" -eq 0 ] || { echo "--- memlet server log ---" >&2; tail -50 "$WORK/server.log" >&2; }
exit "$STATUS"
