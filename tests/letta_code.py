"""Letta Code (the `@letta-ai/letta-code` CLI) as a test client: installed on first use, run headless.

    script = install()                          # .cache/letta-code/<version>/package/letta.js (+ node_modules/ws)
    cli = LettaCode(script, base_url, home)
    result = cli.run("-p", "hello", "--new-agent", "-m", "openai/gpt-4o-mini", "--output-format", "json")

`npm install` of the CLI fails on a missing optional dependency, so the package is fetched with `npm pack` and
unpacked; its bundle `letta.js` needs only `ws` next to it. `python -m tests.letta_code` installs it ahead of the
tests (CI does this in `.ci/run`). Each run gets its own HOME so the machine's Letta Code settings are never read
or written.
"""

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.npm import install_packages

LETTA_CODE = "@letta-ai/letta-code@0.32.18"
WS = "ws@8.19.0"
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "letta-code" / LETTA_CODE.rsplit("@", 1)[1]


def install(cache: Path = CACHE) -> Path:
    """The path of `letta.js`, downloading and unpacking Letta Code and `ws` into `cache` when missing."""
    return install_packages(cache, LETTA_CODE, WS) / "letta.js"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """The `--output-format json` result object."""
        return json.loads(self.stdout)

    def events(self) -> list[dict[str, Any]]:
        """The `--output-format stream-json` lines."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip().startswith("{")]


@dataclass
class LettaCode:
    """One Letta Code installation pointed at a server, with its own HOME."""

    script: Path
    base_url: str
    home: Path
    node: str = "node"

    def run(self, *args: str, timeout: float = 120, cwd: Path | None = None) -> Result:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "LETTA_BASE_URL": self.base_url,
            "LETTA_CODE_TELEM": "0",
            "DISABLE_AUTOUPDATER": "1",
            "NO_COLOR": "1",
        }
        proc = subprocess.run(
            [self.node, str(self.script), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=str(cwd or self.home),
            stdin=subprocess.DEVNULL,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)


if __name__ == "__main__":
    print(install(Path(sys.argv[1]) if len(sys.argv) > 1 else CACHE))
