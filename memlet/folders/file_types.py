"""The file types an upload may have: extension → media type, and how an agent's view splits each into lines.

Letta 0.16.8's list (PDF, text, Markdown, JSON, CSV, code, HTML, config files, scripts). Anything else is a 415.
"""

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
# Other names clients send for the same types.
_ALIASES = {
    "text/x-markdown": "text/markdown",
    "application/x-jsonlines": "application/jsonl",
    "text/xml": "application/xml",
    "application/x-yaml": "text/x-yaml",
    "text/x-script.python": "text/x-python",
    "application/javascript": "text/javascript",
}

SUPPORTED_SUMMARY = "PDF, text files (.txt, .md), JSON, CSV, HTML, and code files (.py, .js, .java, etc.)"


def extension_of(file_name: str) -> str:
    return PurePosixPath(file_name).suffix.lower()


def resolve_media_type(content_type: str | None, file_name: str) -> str | None:
    """The upload's media type: its Content-Type when supported, else its extension's; None when unsupported."""
    declared = (content_type or "").split(";", 1)[0].strip().lower()
    declared = _ALIASES.get(declared, declared)
    if declared in _BY_MEDIA_TYPE:
        return declared
    by_extension = _BY_EXTENSION.get(extension_of(file_name))
    return by_extension.media_type if by_extension else None


def line_strategy(media_type: str | None, file_name: str) -> LineStrategy:
    """How a stored file's text is split into numbered lines (by media type, else by extension)."""
    known = _BY_MEDIA_TYPE.get(media_type or "") or _BY_EXTENSION.get(extension_of(file_name))
    return known.strategy if known else LineStrategy.LINES
