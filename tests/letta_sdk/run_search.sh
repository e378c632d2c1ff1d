#!/usr/bin/env bash
# Run Letta 0.16.8's SDK search tests (tests/sdk/search_test.py: passage, message and tool search) unchanged against a
# live memlet. See tests/letta_sdk/README.md.
#
#   LETTA_SDK_VENV=<venv with letta==0.16.8> tests/letta_sdk/run_search.sh <letta-git-dir-or-checkout> [<rev>]
#
# search_test.py imports Letta's server modules (settings, SyncServer), so it needs letta==0.16.8 itself installed;
# the README gives the pip line. Its tests skip unless Letta's settings say Turbopuffer, OpenAI and message / tool
# embedding are on: this script sets those variables for the test process only (memlet never reads them; the
# Turbopuffer clean-up the tests attempt fails and is logged, which they tolerate).
# Extra pytest arguments go in LETTA_SDK_PYTEST_ARGS.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="$ROOT/.venv/bin/python"
SRC="${1:?usage: LETTA_SDK_VENV=<venv> run_search.sh <letta git dir or checkout> [rev]}"
REV="${2:-}"
VENV="${LETTA_SDK_VENV:?set LETTA_SDK_VENV to a virtualenv with letta==0.16.8 (see tests/letta_sdk/README.md)}"

[ -x "$PY" ] || { echo "no $PY: run 'make dev' first" >&2; exit 2; }
"$VENV/bin/python" -c "import letta.server.server, letta_client, pytest" || {
    echo "$VENV cannot import letta's server, letta_client and pytest: see tests/letta_sdk/README.md" >&2
    exit 2
}
# shellcheck source=tests/letta_sdk/common.sh
. "$ROOT/tests/letta_sdk/common.sh"

copy_letta_files conftest.py search_test.py
start_memlet

cd "$WORK/tests"
set +e
# shellcheck disable=SC2086
LETTA_USE_TPUF=true LETTA_TPUF_API_KEY=unused LETTA_EMBED_ALL_MESSAGES=true LETTA_EMBED_TOOLS=true \
    OPENAI_API_KEY=sk-unused LETTA_SERVER_URL="http://127.0.0.1:$PORT" \
    "$VENV/bin/python" -m pytest -c /dev/null --rootdir "$WORK/tests" -p no:cacheprovider -q ${LETTA_SDK_PYTEST_ARGS:-} \
    search_test.py
STATUS=$?
set -e
[ "$STATUS" -eq 0 ] || { echo "--- memlet server log ---" >&2; tail -50 "$WORK/server.log" >&2; }
exit "$STATUS"
