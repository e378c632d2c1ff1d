"""Text → passages for embedding: pieces of about `chunk_size` tokens that break at paragraphs, lines, then words.

Tokens are estimated at four characters each (the embedding model's tokenizer is not known here), which keeps
every chunk well inside the 8k-token input of common embedding models for the default chunk size of 300.

A JSON file (`application/json`) holding an object or an array is chunked as Letta does it: one passage per
object (per element of a top-level array), each a line per leaf value, ``<key path> <value>``; see `chunk_json`.
"""

import json
from collections.abc import Iterator
from typing import Any

CHARS_PER_TOKEN = 4
DEFAULT_CHUNK_SIZE = 300


def _split_long(piece: str, limit: int) -> list[str]:
    words, out, current = piece.split(), [], ""
    for word in words:
        while len(word) > limit:  # a single "word" longer than a chunk (minified code, base64)
            if current:
                out.append(current)
                current = ""
            out.append(word[:limit])
            word = word[limit:]
        candidate = f"{current} {word}" if current else word
        if len(candidate) > limit:
            out.append(current)
            current = word
        else:
            current = candidate
    if current:
        out.append(current)
    return out


def chunk_text(text: str, chunk_size: int | None = None) -> list[str]:
    """Split `text` into non-empty chunks of at most `chunk_size` tokens (estimated), in order."""
    limit = max(1, chunk_size or DEFAULT_CHUNK_SIZE) * CHARS_PER_TOKEN
    pieces: list[str] = []
    for line in text.splitlines():
        stripped = line.rstrip()
        if len(stripped) > limit:
            pieces.extend(_split_long(stripped, limit))
        else:
            pieces.append(stripped)
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for piece in pieces:
        if current and size + len(piece) + 1 > limit:
            chunks.append("\n".join(current).strip())
            current, size = [], 0
        current.append(piece)
        size += len(piece) + 1
    if current:
        chunks.append("\n".join(current).strip())
    return [c for c in chunks if c]


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


def chunk_json(text: str, chunk_size: int | None = None) -> list[str] | None:
    """Letta's passages of a JSON document: the leaf lines of the object (or of each element of a top-level array),
    a piece longer than `chunk_size` characters split again as text. None when `text` is not a JSON object or a
    non-empty array (it is then chunked as text). A piece may be empty (``{}``): it counts, but is not embedded."""
    size = max(1, chunk_size or DEFAULT_CHUNK_SIZE)
    try:
        data = json.loads(text)
        if isinstance(data, dict):
            documents = [data]
        elif isinstance(data, list) and data:
            documents = data
        else:
            return None
        pieces = ["\n".join(_leaves(document, [])) for document in documents]
    except (ValueError, RecursionError):
        return None
    chunks: list[str] = []
    for piece in pieces:
        chunks.extend(chunk_text(piece, size) if len(piece) > size else [piece])
    return chunks


def chunk_file(text: str, media_type: str | None, chunk_size: int | None = None) -> list[str]:
    """The chunks of a file's text: `chunk_json` for a JSON file, else `chunk_text`."""
    if media_type == "application/json":
        chunks = chunk_json(text, chunk_size)
        if chunks is not None:
            return chunks
    return chunk_text(text, chunk_size)
