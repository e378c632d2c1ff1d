"""Upload names reduced to a safe base name: no directories, no control characters, no leading dot."""

import re
import unicodedata
from pathlib import PurePosixPath

from memlet.errors import BadRequestError

MAX_FILE_NAME = 255
_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"|?*\\/]')


def safe_file_name(given: str) -> str:
    """The base name of `given` (either path separator), with unsafe characters replaced; 400 when nothing
    usable is left."""
    base = unicodedata.normalize("NFC", given).replace("\\", "/").rsplit("/", 1)[-1]
    base = _UNSAFE.sub("_", base).strip()
    if not base or base.startswith("."):
        raise BadRequestError(f"INVALID_ARGUMENT: Invalid file name: {given!r}")
    path = PurePosixPath(base)
    if len(base) > MAX_FILE_NAME:
        suffix = path.suffix[:16]
        base = path.stem[: MAX_FILE_NAME - len(suffix)] + suffix
    return base


def suffixed(file_name: str, count: int) -> str:
    """`report.pdf` → `report_(2).pdf`, as Letta names the second and later uploads of one name."""
    path = PurePosixPath(file_name)
    stem, suffix = (path.stem, path.suffix) if path.stem else (file_name, "")
    return f"{stem[: MAX_FILE_NAME - len(suffix) - 6]}_({count}){suffix}"
