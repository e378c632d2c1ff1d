"""Sentence-aware, token-sized chunks with overlap: the boundaries Letta 0.16.8's file chunks have.

Letta split a file's text with llama-index's `SentenceSplitter` (chunk size = the folder's `embedding_chunk_size`,
300 tokens by default, and 50 tokens of overlap). memlet does the same without llama-index (some 270 MB of
packages, numpy and Pillow among them, for this one class): the same steps, written here, with the two things that
decide where text breaks done as there, so the chunks come out as Letta's do:

- tokens are counted with tiktoken's cl100k_base (llama-index's default tokenizer), special tokens counted as one;
- sentences are found by the rules of NLTK's Punkt tokenizer with no trained parameters, as llama-index builds it
  (`sentences`).

The steps: a text that fits is one piece; a longer one is cut at paragraph breaks (three newlines), else into
sentences (both "whole" pieces), else at ``, . ;`` (and their CJK forms), else at spaces, else into characters,
and each part is cut again until it fits. The pieces are then packed in order into chunks of at most `chunk_size`
tokens (a piece's own count, not the joined text's), each new chunk starting with as many of the previous chunk's
last pieces as fit in `overlap` tokens (dropped from its front while the next piece does not fit beside them).
Chunks are stripped and empty ones dropped; an empty text is one empty chunk.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from memlet.folders.sentences import sentence_starts
from memlet.llm.tokens import estimate_tokens, get_encoder

PARAGRAPH_BREAK = "\n\n\n"
# A run of anything but a phrase end, with the phrase end that closes it; or a phrase end alone.
_PHRASE = re.compile(r"[^,.;。？！]+[,.;。？！]?|[,.;。？！]")


@dataclass(slots=True)
class _Piece:
    text: str
    whole: bool  # a paragraph or a sentence (the packing never splits those off from a chunk's end)
    tokens: int


@lru_cache(maxsize=1)
def _counter() -> Callable[[str], int]:
    encode = getattr(get_encoder(), "encode", None)
    if encode is None:
        return estimate_tokens
    return lambda text: len(encode(text, allowed_special="all"))


def _cut_keeping(text: str, separator: str) -> list[str]:
    """`text` cut at `separator`, each part after the first starting with it; empty parts dropped."""
    first, *rest = text.split(separator)
    return [part for part in (first, *(separator + part for part in rest)) if part]


def _sentences(text: str) -> list[str]:
    """Punkt's sentences, each running to the next one's start (so the spaces between stay with the earlier);
    text before the first sentence (leading spaces) is not kept."""
    starts = sentence_starts(text)
    ends = [*starts[1:], len(text)]
    return [text[start:end] for start, end in zip(starts, ends, strict=True)]


def _cut(text: str) -> tuple[list[str], bool]:
    """The first cut of `text` that gives more than one part, and whether its parts are whole sentences."""
    for cut in (lambda t: _cut_keeping(t, PARAGRAPH_BREAK), _sentences):
        parts = cut(text)
        if len(parts) > 1:
            return parts, True
    parts = _PHRASE.findall(text)
    if len(parts) <= 1:
        parts = _cut_keeping(text, " ")
        if len(parts) <= 1:
            parts = list(text)
    return parts, False


def _pieces(text: str, chunk_size: int, count: Callable[[str], int]) -> list[_Piece]:
    tokens = count(text)
    if tokens <= chunk_size or len(text) <= 1:
        return [_Piece(text, True, tokens)]
    parts, whole = _cut(text)
    pieces: list[_Piece] = []
    for part in parts:
        tokens = count(part)
        if tokens <= chunk_size:
            pieces.append(_Piece(part, whole, tokens))
        else:
            pieces.extend(_pieces(part, chunk_size, count))
    return pieces


def _pack(pieces: list[_Piece], chunk_size: int, overlap: int) -> list[str]:
    chunks: list[str] = []
    current: list[_Piece] = []
    used = 0
    fresh = True  # nothing but the overlap in `current` yet
    index = 0
    while index < len(pieces):
        piece = pieces[index]
        if not fresh and used + piece.tokens > chunk_size:
            chunks.append("".join(p.text for p in current))
            previous, current, used, fresh = current, [], 0, True
            for carried in reversed(previous):
                if used + carried.tokens > overlap:
                    break
                current.insert(0, carried)
                used += carried.tokens
            continue
        while fresh and current and used + piece.tokens > chunk_size:
            used -= current.pop(0).tokens
        current.append(piece)
        used += piece.tokens
        fresh = False
        index += 1
    if not fresh:
        chunks.append("".join(p.text for p in current))
    return [stripped for chunk in chunks if (stripped := chunk.strip())]


def split_sentences(text: str, chunk_size: int, overlap: int) -> list[str]:
    """`text` in chunks of at most `chunk_size` tokens (a single character may exceed it), `overlap` tokens of
    each carried into the next; see the module docstring."""
    if text == "":
        return [""]
    count = _counter()
    return _pack(_pieces(text, chunk_size, count), chunk_size, overlap)
