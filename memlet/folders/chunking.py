"""Text → passages for embedding: pieces of about `chunk_size` tokens that break at paragraphs, lines, then words.

Tokens are estimated at four characters each (the embedding model's tokenizer is not known here), which keeps
every chunk well inside the 8k-token input of common embedding models for the default chunk size of 300.
"""

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
