"""npm packages as test clients: fetched with `npm pack` (npm checks the registry's integrity hash) and unpacked
into a cache directory, so no `npm install` runs and nothing is resolved at test time.

    package = install_packages(cache, "@letta-ai/letta-client@1.12.1")          # cache/package/
    package = install_packages(cache, "@letta-ai/letta-code@0.32.18", "ws@8.19.0")  # + package/node_modules/ws
"""

import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path


def _npm_pack(spec: str, into: Path) -> Path:
    """`npm pack spec` into a directory; returns the tarball."""
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(f"npm is needed to fetch {spec} (node is installed but npm is not)")
    out = subprocess.run(
        [npm, "pack", spec, "--silent", "--pack-destination", str(into)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return into / out.stdout.strip().splitlines()[-1]


def _unpack(tarball: Path, into: Path) -> None:
    """An npm tarball's `package/` directory becomes `into`."""
    with tarfile.open(tarball) as tar:
        tar.extractall(into.parent / "unpack", filter="data")
    (into.parent / "unpack" / "package").rename(into)
    shutil.rmtree(into.parent / "unpack")


def _name(spec: str) -> str:
    """`@scope/name@1.2.3` → `@scope/name`."""
    return spec.rsplit("@", 1)[0]


def install_packages(cache: Path, spec: str, *dependencies: str) -> Path:
    """`cache/package`: the package of ``spec`` with each dependency under its `node_modules/`, fetched when missing.

    A concurrent installer either wins the final rename or finds the package already there."""
    package = cache / "package"
    if package.exists():
        return package
    cache.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache.parent) as tmp:
        work = Path(tmp)
        build = work / "build" / "package"
        build.parent.mkdir()
        _unpack(_npm_pack(spec, work), build)
        for dependency in dependencies:
            target = build / "node_modules" / _name(dependency)
            target.parent.mkdir(parents=True, exist_ok=True)
            _unpack(_npm_pack(dependency, work), target)
        try:
            (work / "build").rename(cache)
        except OSError:
            if not package.exists():
                raise
    return package
