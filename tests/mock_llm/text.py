"""Text helpers shared by the wire formats: rough token counts and streaming fragments."""

import math
import re


def rough_tokens(text: str | None) -> int:
    """About four characters a token (Anthropic's and the embeddings' usage)."""
    return math.ceil(len(text) / 4) if text else 0


def pieces(text: str, size: int = 0) -> list[str]:
    """Split text into streaming fragments: words with their leading space, or fixed-size slices."""
    if size:
        return [text[i : i + size] for i in range(0, len(text), size)]
    return re.findall(r"\s*\S+\s*$|\s*\S+", text) or ([text] if text else [])
