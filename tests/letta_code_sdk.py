"""The Letta Code SDK (`@letta-ai/letta-code-sdk`, what letta-cowork and LettaBot build on) as a test client: the
published package, installed on first use, driven by a small node script.

    sdk = install()                                     # .cache/letta-code-sdk/<version>/package/dist/index.js
    out = run_sdk(sdk, base_url, home, "const s = createSession(AGENT); ...; out = {...};", AGENT="agent-...")

The SDK spawns Letta Code (`node letta.js --input-format stream-json ...`) and talks to it over stdin/stdout; Letta
Code talks to the server. The SDK is fetched with `npm pack` (see tests/npm.py); the Letta Code it runs is the one
the other tests install (tests/letta_code.py), named by `LETTA_CLI_PATH` as the SDK allows (the 0.19.5 it pins loads
`sharp`, a native module, at start; letta-cowork's SDK takes the latest Letta Code). Each run gets its own HOME so
the machine's Letta Code settings are never read or written.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests import letta_code
from tests.npm import install_packages

SDK = "@letta-ai/letta-code-sdk@0.1.14"
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "letta-code-sdk" / SDK.rsplit("@", 1)[1]


def install(cache: Path = CACHE) -> Path:
    """The SDK's entry module, downloading the SDK into `cache` (and Letta Code into its own) when missing."""
    letta_code.install()
    return install_packages(cache, SDK) / "dist" / "index.js"


def run_sdk(sdk: Path, base_url: str, home: Path, body: str, *, timeout: float = 150, **constants: str) -> Any:
    """Run `body` in an ES module with the SDK's exports in scope and `constants` as JS string constants; `body`
    sets `out`, which is returned parsed from JSON."""
    defined = "".join(f"const {name} = {json.dumps(value)};\n" for name, value in constants.items())
    script = (
        f"import * as sdk from {json.dumps(sdk.as_uri())};\n"
        "const { createAgent, createSession, resumeSession } = sdk;\n"
        f"{defined}let out = null;\n{body}\n"
        "process.stdout.write('\\n@@OUT@@' + JSON.stringify(out) + '\\n');\n"
    )
    path = home / "sdk_driver.mjs"
    path.write_text(script)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "LETTA_BASE_URL": base_url,
        "LETTA_CLI_PATH": str(letta_code.install()),
        "LETTA_CODE_TELEM": "0",
        "DISABLE_AUTOUPDATER": "1",
        "NO_COLOR": "1",
    }
    proc = subprocess.run(
        ["node", str(path)], capture_output=True, text=True, timeout=timeout, env=env, cwd=str(home), check=False
    )
    marker = proc.stdout.rfind("@@OUT@@")
    if proc.returncode != 0 or marker < 0:
        raise AssertionError(f"SDK driver failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout[marker + len("@@OUT@@") :])


if __name__ == "__main__":
    print(install(Path(sys.argv[1]) if len(sys.argv) > 1 else CACHE))
