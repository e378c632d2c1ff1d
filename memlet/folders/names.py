"""Upload names: an uploaded file's name reduced to a safe base name (no directories, no control characters, no
leading dot), as Letta sanitizes it; a custom `name` keeps its folders (`docs/specs/api.md`), as Letta stores it."""

import re
import unicodedata
from pathlib import PurePosixPath

from memlet.errors import BadRequestError

MAX_FILE_NAME = 255
_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"|?*\\/]')


def _invalid(given: str) -> BadRequestError:
    return BadRequestError(f"INVALID_ARGUMENT: Invalid file name: {given!r}")


def safe_file_name(given: str) -> str:
    """The base name of `given` (either path separator), with unsafe characters replaced; 400 when nothing
    usable is left."""
    base = unicodedata.normalize("NFC", given).replace("\\", "/").rsplit("/", 1)[-1]
    base = _UNSAFE.sub("_", base).strip()
    if not base or base.startswith("."):
        raise _invalid(given)
    path = PurePosixPath(base)
    if len(base) > MAX_FILE_NAME:
        suffix = path.suffix[:16]
        base = path.stem[: MAX_FILE_NAME - len(suffix)] + suffix
    return base


def custom_file_name(given: str) -> str:
    """A custom upload name: its folders kept (empty and `.` segments dropped, `..` refused), each cleaned of
    unsafe characters, and its last segment a safe base name; 400 when nothing usable is left."""
    segments = [s.strip() for s in unicodedata.normalize("NFC", given).replace("\\", "/").split("/")]
    segments = [s for s in segments if s not in ("", ".")]
    if not segments or ".." in segments:
        raise _invalid(given)
    folders = "".join(f"{_UNSAFE.sub('_', s)}/" for s in segments[:-1])
    if len(folders) > MAX_FILE_NAME // 2:
        raise BadRequestError(f"INVALID_ARGUMENT: File name too long: {given!r}")
    leaf = safe_file_name(segments[-1])
    room = MAX_FILE_NAME - len(folders)
    if len(leaf) > room:
        suffix = PurePosixPath(leaf).suffix[:16]
        leaf = PurePosixPath(leaf).stem[: room - len(suffix)] + suffix
    return folders + leaf


def suffixed(file_name: str, count: int) -> str:
    """`report.pdf` → `report_(2).pdf` (`docs/report.pdf` → `docs/report_(2).pdf`), as Letta names the second and
    later uploads of one name."""
    folders, _, leaf = file_name.rpartition("/")
    path = PurePosixPath(leaf)
    stem, suffix = (path.stem, path.suffix) if path.stem else (leaf, "")
    prefix = f"{folders}/" if folders else ""
    return f"{prefix}{stem[: MAX_FILE_NAME - len(prefix) - len(suffix) - 6]}_({count}){suffix}"
