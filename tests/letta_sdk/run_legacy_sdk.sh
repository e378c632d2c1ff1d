#!/usr/bin/env bash
# Run programs written for the pre-1.0 Letta Python SDK (letta-client==0.1.324, Fern-generated) unchanged against a
# live memlet: legacy_smoke/ drives the usual flows with that SDK and says, call by call, whether the route
# answered and the old SDK's types accept the answer. See tests/letta_sdk/README.md. Not part of CI.
#
#   tests/letta_sdk/run_legacy_sdk.sh
#
# The old SDK lives in its own virtualenv, LEGACY_SDK_VENV (default /tmp/memlet-legacy-sdk-venv), built from PyPI on
# first use; memlet's .venv (letta-client 1.x) is left alone. LETTA_SDK_SERVER_LOG=<file> keeps memlet's log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="$ROOT/.venv/bin/python"
VENV="${LEGACY_SDK_VENV:-/tmp/memlet-legacy-sdk-venv}"
SRC="" REV=""

[ -x "$PY" ] || { echo "no $PY: run 'make dev' first" >&2; exit 2; }
if ! "$VENV/bin/python" -c "import letta_client" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q letta-client==0.1.324
fi
"$VENV/bin/python" - <<'PYCHECK' || { echo "$VENV must hold letta-client 0.1.324" >&2; exit 2; }
import importlib.metadata, sys
sys.exit(importlib.metadata.version("letta-client") != "0.1.324")
PYCHECK

# shellcheck source=tests/letta_sdk/common.sh
. "$ROOT/tests/letta_sdk/common.sh"

# memlet's demo MCP server (streamable HTTP) for the old /v1/tools/mcp/servers routes.
MCP_PORT="$(free_port)" MCP_PID=""
(cd "$ROOT" && exec "$PY" tests/mcp_servers/demo_server.py streamable-http "$MCP_PORT") > "$WORK/mcp.log" 2>&1 &
MCP_PID=$!
trap '[ -n "$MCP_PID" ] && kill "$MCP_PID" 2>/dev/null; cleanup' EXIT

start_memlet MEMLET_ALLOWED_HOSTS=127.0.0.1
for _ in $(seq 40); do
    (exec 3<>"/dev/tcp/127.0.0.1/$MCP_PORT") 2>/dev/null && break
    sleep 0.25
done

cd "$WORK"
set +e
"$VENV/bin/python" "$ROOT/tests/letta_sdk/legacy_smoke" "http://127.0.0.1:$PORT" \
    "http://127.0.0.1:$MOCK_PORT/v1" "http://127.0.0.1:$MCP_PORT/mcp"
STATUS=$?
set -e
[ "$STATUS" -eq 0 ] || { echo "--- memlet server log ---" >&2; tail -50 "$WORK/server.log" >&2; }
exit "$STATUS"
