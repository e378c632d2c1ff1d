"""The mock's embeddings: hashed bags of words, served in OpenAI's ``/v1/embeddings`` shape (floats or base64)
and Ollama's native ``/api/embed`` shape.

Lowercase word tokens are hashed with BLAKE2b (stable across processes) into signed buckets and L2-normalised,
so texts sharing words are close and unrelated texts are near-orthogonal.
"""

import base64
import hashlib
import math
import re
import struct
from typing import Any

from tests.mock_llm.text import rough_tokens

DEFAULT_EMBEDDING_DIM = 1536
# The native Ollama route answers with each model's own size.
OLLAMA_EMBEDDING_DIMS = {"nomic-embed-text": 768, "mxbai-embed-large": 1024, "all-minilm": 384}


def hashed_embedding(text: str, dim: int = DEFAULT_EMBEDDING_DIM) -> list[float]:
    """The mock's embedding of ``text``: a signed hashed bag of words, L2-normalised."""
    vec = [0.0] * dim
    for token in re.findall(r"[a-z0-9]+", text.lower()):
        digest = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
        vec[digest % dim] += 1.0 if (digest >> 63) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0.0:
        vec[0] = 1.0  # a zero vector has no cosine distance; give empty text a fixed direction
        return vec
    return [x / norm for x in vec]


def _texts(body: dict[str, Any]) -> list[str]:
    return [body["input"]] if isinstance(body["input"], str) else [str(t) for t in body["input"]]


def openai_body(body: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's answer to an embeddings request: one vector per input (``dimensions`` long, base64 if asked)."""
    texts = _texts(body)
    dim = int(body.get("dimensions") or DEFAULT_EMBEDDING_DIM)
    data = []
    for index, text in enumerate(texts):
        vector: Any = hashed_embedding(str(text), dim)
        if body.get("encoding_format") == "base64":
            vector = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode()
        data.append({"object": "embedding", "index": index, "embedding": vector})
    used = sum(rough_tokens(str(t)) for t in texts)
    usage = {"prompt_tokens": used, "total_tokens": used}
    return {"object": "list", "data": data, "model": body.get("model"), "usage": usage}


def ollama_body(body: dict[str, Any]) -> dict[str, Any]:
    """Ollama's native answer: {"model", "input": str | [str]} -> {"model", "embeddings": [[...]]}; no
    ``dimensions``, each model has its own size."""
    dim = OLLAMA_EMBEDDING_DIMS.get(str(body.get("model")), DEFAULT_EMBEDDING_DIM)
    return {"model": body.get("model"), "embeddings": [hashed_embedding(str(t), dim) for t in _texts(body)]}
