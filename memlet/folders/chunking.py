"""Text → passages for embedding, split as Letta 0.16.8's file processor split them (by the file's media type):

- `text/markdown`: a section per heading (a heading line starts the next section; headings inside ``` fences
  do not), a section longer than `chunk_size` characters split again by sentences;
- `application/json` (and `application/jsonl`) holding an object or an array: one passage per object (per element
  of a top-level array), each a line per leaf value, ``<key path> <value>``, a longer one split again by sentences;
- everything else (text, PDF, CSV, code, HTML, `.md` names' `text/x-markdown`): sentences packed into chunks of
  `chunk_size` tokens with 50 tokens of overlap (`sentence_splitter`).

When a Markdown or JSON file gives no section or object at all (an empty array, JSON that does not parse), Letta
split it again by sentences with its fallback sizes, 384 tokens and 25 of overlap; memlet's passages are those.
"""

import json
import re
from collections.abc import Iterator
from typing import Any

from memlet.folders.sentence_splitter import split_sentences

DEFAULT_CHUNK_SIZE = 300
CHUNK_OVERLAP = 50
FALLBACK_CHUNK_SIZE = 384
FALLBACK_OVERLAP = 25
_HEADING = re.compile(r"(#+)\s(.*)")


def overlap_for(chunk_size: int) -> int:
    """Letta's 50 tokens; under a chunk size of 50 (where Letta failed every file), half the chunk size."""
    return CHUNK_OVERLAP if chunk_size >= CHUNK_OVERLAP else chunk_size // 2


def chunk_text(text: str, chunk_size: int | None = None) -> list[str]:
    """`text` by sentences, in chunks of at most `chunk_size` tokens with Letta's overlap."""
    size = max(1, chunk_size or DEFAULT_CHUNK_SIZE)
    return split_sentences(text, size, overlap_for(size))


def fallback_chunks(text: str) -> list[str]:
    """Letta's second split of a file's text (when its own chunker found nothing, or embedding failed)."""
    return split_sentences(text, FALLBACK_CHUNK_SIZE, FALLBACK_OVERLAP)


def _resplit(pieces: list[str], chunk_size: int) -> list[str]:
    """Each piece as it is, or by sentences when it is longer than `chunk_size` characters (as Letta measured)."""
    chunks: list[str] = []
    for piece in pieces:
        chunks.extend(chunk_text(piece, chunk_size) if len(piece) > chunk_size else [piece])
    return chunks


def markdown_sections(text: str) -> list[str]:
    """The stripped, non-empty sections of a Markdown text, each from a heading line to the next one."""
    sections: list[str] = []
    current: list[str] = []
    fenced = False

    def close() -> None:
        section = "\n".join(current).strip()
        if section:
            sections.append(section)

    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := _HEADING.match(line)):
            close()
            current = [f"{heading.group(1)} {heading.group(2)}"]
            continue
        current.append(line)
    close()
    return sections


def _leaves(value: Any, path: list[str]) -> Iterator[str]:
    """One line per leaf value: the keys above it, then the value, separated by spaces (arrays add no key)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, [*path, str(key)])
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, path)
    else:
        yield " ".join([*path, str(value)])


def json_pieces(text: str) -> list[str] | None:
    """The leaf lines of a JSON object, or of each element of a top-level array ([] for an empty array); None when
    `text` is not JSON. A piece may be empty (``{}``): it counts, but is not embedded. Raises ValueError for a JSON
    scalar and RecursionError for nesting too deep to read (Letta's parser failed on both)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(data, dict):
        documents = [data]
    elif isinstance(data, list):
        documents = data
    else:
        raise ValueError("JSON is invalid")
    return ["\n".join(_leaves(document, [])) for document in documents]


def chunk_file(text: str, media_type: str | None, chunk_size: int | None = None) -> list[str]:
    """The chunks of a file's text of `media_type` (see the module docstring)."""
    size = max(1, chunk_size or DEFAULT_CHUNK_SIZE)
    if media_type == "text/markdown":
        return _resplit(markdown_sections(text), size) or fallback_chunks(text)
    if media_type in ("application/json", "application/jsonl"):
        try:
            pieces = json_pieces(text)
        except (ValueError, RecursionError):  # Letta's chunker then split the text by sentences
            return chunk_text(text, size)
        return (_resplit(pieces, size) if pieces else None) or fallback_chunks(text)
    return chunk_text(text, size)
