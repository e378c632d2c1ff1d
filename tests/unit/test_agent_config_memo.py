"""A page of agents validates each distinct ``llm_config`` / ``embedding_config`` once (`agents/views.ConfigMemo`):
equal values give the one shared model, any difference (a value, a key, the key order) its own."""

from memlet.agents.views import ConfigMemo
from memlet.providers.schemas import EmbeddingConfig, LLMConfig

LLM = {"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 128000, "temperature": 0.25}
EMBEDDING = {"embedding_model": "text-embedding-3-small", "embedding_endpoint_type": "openai", "embedding_dim": 1536}


def test_equal_configs_are_validated_once_and_shared() -> None:
    memo = ConfigMemo()
    first, second = memo(LLMConfig, dict(LLM)), memo(LLMConfig, dict(LLM))
    assert isinstance(first, LLMConfig) and first is second
    assert first == LLMConfig.model_validate(LLM)
    assert memo(EmbeddingConfig, dict(EMBEDDING)) is memo(EmbeddingConfig, dict(EMBEDDING))


def test_different_configs_stay_apart() -> None:
    memo = ConfigMemo()
    base = memo(LLMConfig, LLM)
    assert memo(LLMConfig, {**LLM, "temperature": 0.5}).temperature == 0.5
    reordered = memo(LLMConfig, dict(reversed(list(LLM.items()))))
    assert reordered is not base and reordered == base
    assert memo(LLMConfig, None) is None and memo(LLMConfig, {}) == {}
