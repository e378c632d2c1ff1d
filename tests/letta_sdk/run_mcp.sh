#!/usr/bin/env bash
# Run Letta 0.16.8's SDK MCP-server tests (tests/sdk/mcp_servers_test.py with its mock_mcp_server.py) unchanged
# against a live memlet. See tests/letta_sdk/README.md.
#
#   tests/letta_sdk/run_mcp.sh <letta-git-dir-or-checkout> [<rev>]
#
# Letta's mock MCP server is written for the `mcp` SDK 1.x (FastMCP), and the test starts it with the interpreter
# that runs pytest, so the tests run from their own virtualenv (LETTA_SDK_VENV, default /tmp/memlet-letta-sdk-venv),
# built on first use from PyPI: memlet's letta-client version, mcp<2, pytest, pytest-order, requests, python-dotenv.
# memlet itself runs from this worktree's .venv with stdio MCP servers enabled.
# Extra pytest arguments go in LETTA_SDK_PYTEST_ARGS, split on spaces (e.g. "-rA -kcomprehensive").
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="$ROOT/.venv/bin/python"
SRC="${1:?usage: run_mcp.sh <letta git dir or checkout> [rev]}"
REV="${2:-}"
VENV="${LETTA_SDK_VENV:-/tmp/memlet-letta-sdk-venv}"

[ -x "$PY" ] || { echo "no $PY: run 'make dev' first" >&2; exit 2; }
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import letta_client, mcp.server.fastmcp, pytest_order, dotenv"; then
    client_version="$("$PY" -c 'import importlib.metadata as m; print(m.version("letta-client"))')"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "letta-client==$client_version" "mcp<2" pytest pytest-order requests python-dotenv
fi
# shellcheck source=tests/letta_sdk/common.sh
. "$ROOT/tests/letta_sdk/common.sh"

# 1. Letta's files, byte for byte, into a scratch dir outside the repository.
copy_letta_files conftest.py mcp_servers_test.py mock_mcp_server.py
# mcp_servers_test.py imports four names from Letta's own package. Stubs stand in for them: the two configs build
# the same JSON that Letta 0.16.8's LLMConfig / EmbeddingConfig `default_config` sends for these arguments; the rest
# are bare classes (type hints, and isinstance checks that never match letta-client's objects, as with real Letta).
# With letta==0.16.8 itself installed in the virtualenv (as run_search.sh needs), the real classes are used.
if ! "$VENV/bin/python" -c "import letta.schemas.llm_config" 2>/dev/null; then
    mkdir -p "$WORK/tests/letta/schemas"
    : > "$WORK/tests/letta/__init__.py"
    : > "$WORK/tests/letta/schemas/__init__.py"
    cat > "$WORK/tests/letta/schemas/llm_config.py" <<'PY'
from pydantic import BaseModel


class LLMConfig(BaseModel):
    model: str
    model_endpoint_type: str
    model_endpoint: str | None = None
    model_wrapper: str | None = None
    context_window: int
    put_inner_thoughts_in_kwargs: bool | None = None

    @classmethod
    def default_config(cls, model_name: str) -> "LLMConfig":
        if model_name != "gpt-4o-mini":
            raise ValueError(f"stub: no default config for {model_name}")
        return cls(
            model=model_name,
            model_endpoint_type="openai",
            model_endpoint="https://api.openai.com/v1",
            model_wrapper=None,
            context_window=128000,
            put_inner_thoughts_in_kwargs=False,
        )
PY
    cat > "$WORK/tests/letta/schemas/embedding_config.py" <<'PY'
from pydantic import BaseModel


class EmbeddingConfig(BaseModel):
    embedding_model: str
    embedding_endpoint_type: str
    embedding_endpoint: str | None = None
    embedding_dim: int
    embedding_chunk_size: int | None = None

    @classmethod
    def default_config(cls, model_name: str | None = None, provider: str | None = None) -> "EmbeddingConfig":
        if provider != "openai" or model_name not in (None, "text-embedding-3-small"):
            raise ValueError(f"stub: no default config for {model_name} / {provider}")
        return cls(
            embedding_model="text-embedding-3-small",
            embedding_endpoint_type="openai",
            embedding_endpoint="https://api.openai.com/v1",
            embedding_dim=1536,
            embedding_chunk_size=300,
        )
PY
    printf 'class AgentState:\n    pass\n' > "$WORK/tests/letta/schemas/agent.py"
    printf 'class ToolCallMessage:\n    pass\n\n\nclass ToolReturnMessage:\n    pass\n' > "$WORK/tests/letta/schemas/letta_message.py"
fi

# 2. memlet's mock LLM and a memlet server with stdio MCP servers on (Letta's tests create several). Servers the
# tests start with `npx -y @modelcontextprotocol/server-everything` need npm (and its registry, unless cached), and
# several point at commands or hosts that do not exist; their tool listing fails, which create and update
# tolerate (as in Letta), and a short connect deadline keeps those tests quick.
start_memlet MEMLET_MCP_STDIO=true MEMLET_MCP_CONNECT_TIMEOUT_S="${LETTA_SDK_MCP_CONNECT_TIMEOUT_S:-10}"

# 3. Letta's tests, unchanged. -c /dev/null keeps memlet's pytest config out.
cd "$WORK/tests"
set +e
# shellcheck disable=SC2086
LETTA_SERVER_URL="http://127.0.0.1:$PORT" "$VENV/bin/python" -m pytest -c /dev/null --rootdir "$WORK/tests" \
    -p pytest_order -p no:cacheprovider -q ${LETTA_SDK_PYTEST_ARGS:-} mcp_servers_test.py
STATUS=$?
set -e
[ "$STATUS" -eq 0 ] || { echo "--- memlet server log ---" >&2; tail -50 "$WORK/server.log" >&2; }
exit "$STATUS"
