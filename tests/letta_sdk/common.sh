# Shared by run.sh, run_mcp.sh, run_search.sh and run_legacy_sdk.sh (sourced, not run): copy Letta's test files
# into a scratch dir, start memlet's mock LLM and a memlet server on a fresh embedded Postgres, and stop all of it
# on exit.
# The caller sets ROOT, PY (memlet's interpreter) and SRC / REV (where Letta's files are). LETTA_SDK_SERVER_LOG, if
# set, is where the server's log is copied on exit.

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
    [ -n "${LETTA_SDK_SERVER_LOG:-}" ] && cp "$WORK/server.log" "$LETTA_SDK_SERVER_LOG"
    rm -rf "$WORK"
}
trap cleanup EXIT

# copy_letta_files FILE...: Letta's tests/sdk/FILE, byte for byte, into $WORK/tests.
copy_letta_files() {
    mkdir -p "$WORK/tests"
    local f
    for f in "$@"; do
        if [ -n "$REV" ] || [ ! -f "$SRC/tests/sdk/$f" ]; then
            git --git-dir="$( [ -d "$SRC/.git" ] && echo "$SRC/.git" || echo "$SRC")" show "${REV:-HEAD}:tests/sdk/$f" \
                > "$WORK/tests/$f"
        else
            cp "$SRC/tests/sdk/$f" "$WORK/tests/$f"
        fi
    done
}

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_memlet [VAR=value...]: the mock LLM (serves gpt-4o-mini and text-embedding-3-small) and a memlet server
# from this worktree, with any extra environment given; sets MOCK_PORT, and PORT once /v1/health/ answers.
start_memlet() {
    MOCK_PORT="$(free_port)"
    local mock_port="$MOCK_PORT"
    PORT="$(free_port)"
    (cd "$ROOT" && exec "$PY" -m tests.mock_llm --port "$mock_port") > "$WORK/mock.log" 2>&1 &
    MOCK_PID=$!
    # `python -m memlet` from $ROOT imports this checkout's memlet even when .venv's editable install points at
    # another one (a git worktree sharing the main checkout's .venv); the `memlet` script would run that other one.
    (cd "$ROOT" && exec env "$@" MEMLET_DATA_DIR="$WORK/data" OPENAI_API_KEY=sk-mock \
        OPENAI_BASE_URL="http://127.0.0.1:$mock_port/v1" "$PY" -m memlet server --host 127.0.0.1 --port "$PORT") \
        > "$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 120); do
        curl -sf "http://127.0.0.1:$PORT/v1/health/" > /dev/null && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 2; }
        sleep 0.5
    done
    cat "$WORK/server.log" >&2
    exit 2
}
