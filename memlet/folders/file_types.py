"""The file types an upload may have: extension → media type, and how an agent's view splits each into lines.

Letta 0.16.8's list (PDF, text, Markdown, JSON, CSV, code, HTML, config files, scripts). An upload is accepted when
its Content-Type or its name's type is on the list (else 415), and stored with its name's type first, as Letta does.
"""

import mimetypes
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath


class LineStrategy(StrEnum):
    """How `open_files` and `grep_files` split a file's text into numbered lines."""

    CODE = "code"  # lines with their indentation, blank lines dropped
    STRUCTURED = "structured"  # stripped lines, blank lines dropped
    DOCUMENTATION = "documentation"  # sentences
    LINES = "lines"  # stripped lines (plain text, PDF)


@dataclass(frozen=True)
class FileType:
    media_type: str
    strategy: LineStrategy


_D, _S, _C, _L = LineStrategy.DOCUMENTATION, LineStrategy.STRUCTURED, LineStrategy.CODE, LineStrategy.LINES
_BY_EXTENSION: dict[str, FileType] = {
    ".pdf": FileType("application/pdf", _L),
    ".txt": FileType("text/plain", _L),
    ".md": FileType("text/markdown", _D),
    ".markdown": FileType("text/markdown", _D),
    ".json": FileType("application/json", _S),
    ".jsonl": FileType("application/jsonl", _S),
    ".csv": FileType("text/csv", _S),
    ".xml": FileType("application/xml", _S),
    ".yaml": FileType("text/x-yaml", _S),
    ".yml": FileType("text/x-yaml", _S),
    ".toml": FileType("application/toml", _S),
    ".ini": FileType("text/x-ini", _S),
    ".cfg": FileType("text/x-conf", _S),
    ".conf": FileType("text/x-conf", _S),
    ".css": FileType("text/css", _S),
    ".scss": FileType("text/x-scss", _S),
    ".sass": FileType("text/x-sass", _S),
    ".less": FileType("text/x-less", _S),
    ".html": FileType("text/html", _C),
    ".htm": FileType("text/html", _C),
    ".py": FileType("text/x-python", _C),
    ".js": FileType("text/javascript", _C),
    ".ts": FileType("text/x-typescript", _C),
    ".jsx": FileType("text/x-jsx", _C),
    ".tsx": FileType("text/x-tsx", _C),
    ".vue": FileType("text/x-vue", _C),
    ".java": FileType("text/x-java-source", _C),
    ".c": FileType("text/x-c", _C),
    ".h": FileType("text/x-c", _C),
    ".cpp": FileType("text/x-c++", _C),
    ".cxx": FileType("text/x-c++", _C),
    ".cs": FileType("text/x-csharp", _C),
    ".php": FileType("text/x-php", _C),
    ".rb": FileType("text/x-ruby", _C),
    ".go": FileType("text/x-go", _C),
    ".rs": FileType("text/x-rust", _C),
    ".swift": FileType("text/x-swift", _C),
    ".kt": FileType("text/x-kotlin", _C),
    ".scala": FileType("text/x-scala", _C),
    ".r": FileType("text/x-r", _C),
    ".m": FileType("text/x-objective-c", _C),
    ".sh": FileType("text/x-shellscript", _C),
    ".bash": FileType("text/x-shellscript", _C),
    ".ps1": FileType("text/x-powershell", _C),
    ".bat": FileType("text/x-batch", _C),
    ".cmd": FileType("text/x-batch", _C),
    ".dockerfile": FileType("text/x-dockerfile", _C),
    ".sql": FileType("text/x-sql", _C),
}
_BY_MEDIA_TYPE: dict[str, FileType] = {}
for _type in _BY_EXTENSION.values():
    _BY_MEDIA_TYPE.setdefault(_type.media_type, _type)
# Letta registers these names with Python's `mimetypes` after its own types, so a file name with one of these
# extensions gets the alias, not the registered type; none of them has a line strategy of its own.
_NAME_ALIASES = {
    ".md": "text/x-markdown",
    ".jsonl": "application/x-jsonlines",
    ".xml": "text/xml",
}
ALLOWED_MEDIA_TYPES = frozenset(_BY_MEDIA_TYPE) | frozenset(_NAME_ALIASES.values())

SUPPORTED_SUMMARY = "PDF, text files (.txt, .md), JSON, and code files (.py, .js, .java, etc.)"


def extension_of(file_name: str) -> str:
    return PurePosixPath(file_name).suffix.lower()


def type_of_name(file_name: str) -> str | None:
    """The media type a file name implies: memlet's table (with Letta's aliases), else the system's `mimetypes`."""
    extension = extension_of(file_name)
    if extension in _NAME_ALIASES:
        return _NAME_ALIASES[extension]
    known = _BY_EXTENSION.get(extension)
    return known.media_type if known else mimetypes.guess_type(file_name, strict=True)[0]


def unsupported_upload(content_type: str | None, file_name: str) -> str | None:
    """None when an upload is accepted (its Content-Type or its name's type is supported), else the type refused."""
    declared = (content_type or "").split(";", 1)[0].strip().lower()
    if declared in ALLOWED_MEDIA_TYPES:
        return None
    if not file_name:
        return declared or "unknown"
    by_name = (type_of_name(file_name) or "").lower()
    return None if by_name in ALLOWED_MEDIA_TYPES else by_name or "unknown"


def stored_media_type(content_type: str | None, file_name: str) -> str:
    """The `file_type` an accepted upload is stored with: its stored name's type, else the declared Content-Type."""
    return type_of_name(file_name) or content_type or "unknown"


def line_strategy(media_type: str | None, file_name: str) -> LineStrategy:
    """How a stored file's text is split into numbered lines.

    By its media type when it has one (a type with no strategy of its own, such as `text/x-markdown`, is split into
    plain lines), else by its name's extension.
    """
    if media_type:
        known = _BY_MEDIA_TYPE.get(media_type)
    else:
        known = _BY_EXTENSION.get(extension_of(file_name))
    return known.strategy if known else LineStrategy.LINES
