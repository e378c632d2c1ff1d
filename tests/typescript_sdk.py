"""Letta's TypeScript SDK (`@letta-ai/letta-client` on npm) as a test client, run by node.

    sdk = install()                                   # .cache/letta-client-ts/<version>/package
    out = run_js(sdk, base_url, '''
        const agent = await client.agents.create({model: "openai/gpt-4o-mini", embedding: "openai/text-embedding-3-small"});
        return agent.id;
    ''')

The snippet is the body of an async function in an ES module that has imported the SDK as `Letta` (its error
classes included), its `toFile` and node's `readFile`, and built `client` at the server, the way a TypeScript user writes it. What the snippet returns is
printed as JSON and comes back as `out`. An SDK error that escapes the snippet comes back as
``{"thrown": <class name>, "status": ..., "error": <the parsed body>, "message": ...}``, so a test can check which
error class a user would catch. `python -m tests.typescript_sdk` installs the SDK ahead of the tests (CI does this
in `.ci/run`).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.npm import install_packages

SDK = "@letta-ai/letta-client@1.12.1"  # the same release as the Python letta-client the tests use
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "letta-client-ts" / SDK.rsplit("@", 1)[1]
NODE = shutil.which("node")

_MODULE = """\
import Letta, {{ toFile }} from {entry};
import {{ readFile }} from "node:fs/promises";
const {{ APIError, NotFoundError, UnprocessableEntityError, AuthenticationError, ConflictError }} = Letta;
const client = new Letta({{ baseURL: process.env.MEMLET_URL, apiKey: process.env.MEMLET_KEY || null, maxRetries: 0,
  timeout: 60000 }});
async function scenario() {{
{body}
}}
let out;
try {{
  out = await scenario();
}} catch (e) {{
  if (!(e instanceof Letta.LettaError)) throw e;
  out = {{ thrown: e.constructor.name, status: e.status ?? null, error: e.error ?? null, message: e.message }};
}}
process.stdout.write(JSON.stringify(out === undefined ? null : out));
"""


def install(cache: Path = CACHE) -> Path:
    """The SDK's package directory, downloaded and unpacked into `cache` when missing."""
    return install_packages(cache, SDK)


def run_js(sdk: Path, base_url: str, body: str, *, api_key: str | None = None, timeout: float = 90) -> Any:
    """Run ``body`` against the server with the SDK at ``sdk``; its return value, decoded from JSON."""
    if NODE is None:
        raise RuntimeError("node is needed to run the TypeScript SDK")
    module = _MODULE.format(entry=json.dumps((sdk / "index.mjs").as_uri()), body=body)
    with tempfile.TemporaryDirectory(prefix="memlet-ts-sdk-") as tmp:
        script = Path(tmp) / "scenario.mjs"
        script.write_text(module)
        env = {"PATH": os.environ.get("PATH", ""), "MEMLET_URL": base_url, "MEMLET_KEY": api_key or ""}
        proc = subprocess.run(
            [NODE, str(script)], capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL
        )
    if proc.returncode != 0:
        raise AssertionError(f"node exited {proc.returncode}\n{proc.stderr}\n{proc.stdout}")
    return json.loads(proc.stdout)


if __name__ == "__main__":
    print(install(Path(sys.argv[1]) if len(sys.argv) > 1 else CACHE))
