"""Heavy SDKs stay out of a started server until it needs them (issue #13: server RSS).

Each check runs in a fresh interpreter, since this test process has long since imported everything.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BUILD_APP = """
import json, sys
from memlet.app import create_app
from memlet.config import Settings
create_app(Settings(_env_file=None, pg_uri="postgresql://memlet@127.0.0.1:1/memlet"))
{then}
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in {modules!r})))
"""

# Loaded on first use: an Anthropic model, an MCP server, a PDF upload, the tokenizer (~40 MB: compaction and the
# context window count tokens), the grep tool's regex engine, cryptography (~7 MB: only with MEMLET_ENCRYPTION_KEY
# set). Never loaded by the server: the fuzzer, Alembic (migrations run in a child process), httpx's command-line
# client (rich, pygments), the openai SDK (LLM calls and embeddings post JSON through aiohttp themselves), httpx
# and httpcore. httpx2 (httpcore2, h11) loads with the Anthropic or MCP SDK, which need it: memlet's own outbound
# calls (LLM calls, embeddings, model lists, key checks, image fetches, callbacks) go through aiohttp.
LAZY = (
    "openai",
    "anthropic",
    "mcp",
    "mcp_types",
    "pdfminer",
    "tiktoken",
    "cryptography",
    "schemathesis",
    "alembic",
    "rich",
    "pygments",
    "regex",
    "httpx",
    "httpcore",
    "httpx2",
    "httpcore2",
    "h11",
)


def _loaded_after(then: str = "") -> set[str]:
    code = BUILD_APP.format(then=then, modules=set(LAZY))
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return {name.split(".")[0] for name in json.loads(result.stdout.strip().splitlines()[-1])}


def test_building_the_app_imports_no_lazy_sdk() -> None:
    assert _loaded_after() == set()


@pytest.mark.parametrize(
    ("then", "expected"),
    [
        (
            'from memlet.llm.client import client_for\nclient_for("anthropic", "http://127.0.0.1:1/v1", None, 5.0)',
            "anthropic",
        ),
        (
            "from memlet.llm.client import client_for\nfrom memlet.net.outbound import OutboundPolicy\n"
            'client_for("anthropic", "http://127.0.0.1:1/v1", None, 5.0, policy=OutboundPolicy())',
            "httpx2",
        ),
        (
            "from memlet.mcp.client import _guarded_factory\nfrom memlet.net.outbound import OutboundPolicy\n"
            "_guarded_factory(OutboundPolicy(), set())",
            "httpcore2",
        ),
        ("from memlet.loop.file_tools import _compile\n_compile('a+')", "regex"),
        ('from memlet.crypto import Keyring\nKeyring(("' + "A" * 43 + '=",))', "cryptography"),
        (
            "from memlet.folders.parsing import pdf_text\ntry:\n    pdf_text(b'not a pdf')\nexcept Exception:\n    pass",
            "pdfminer",
        ),
    ],
)
def test_first_use_imports_the_sdk(then: str, expected: str) -> None:
    """The lazy imports really happen where they are used (the check above is not vacuous)."""
    assert expected in _loaded_after(then)


SERVE = """
import json, sys, uvicorn
from memlet import __main__ as cli
seen = {}
def run(app, **options):
    seen.update(alembic=sorted(n for n in sys.modules if n.split(".")[0] == "alembic"), ws=options.get("ws"))
uvicorn.run = run
code = cli.main(["server", "--port", "1"])
print(json.dumps({"code": code, **seen}))
"""


def test_server_migrates_in_a_child_process(pg_uri: str) -> None:
    """`memlet server` applies the migrations, yet Alembic (~8 MB) never loads into the serving process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLET_")} | {"MEMLET_PG_URI": pg_uri}
    result = subprocess.run(
        [sys.executable, "-c", SERVE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "database schema up to date" in result.stderr  # the child did run them
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"code": 0, "alembic": [], "ws": "none"}


def test_failed_migrations_stop_the_server() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLET_")}
    env["MEMLET_PG_URI"] = "postgresql://memlet@127.0.0.1:1/memlet"  # nothing listens on port 1
    result = subprocess.run(
        [sys.executable, "-c", SERVE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"code": 1}
    assert "database migrations failed" in result.stderr
