"""The model catalog without a network or database: listings, handle resolution, model_settings, legacy configs."""

import json
from typing import Any

import httpx2
import pytest

from memlet.config import Settings
from memlet.errors import BadRequestError, NotFoundError
from memlet.providers.catalog import ModelCatalog
from memlet.providers.known_models import context_window_for
from memlet.providers.model_settings import llm_params_from_settings
from memlet.providers.remote import ProviderSource, fetch_models, normalize_base_url
from tests.shared_paths import SAMPLES

MOCK_URL = "http://127.0.0.1:9900/v1"
MOCK_IDS = ["gpt-4o-mini", "gpt-4o", "gpt-4.1", "mock-model", "text-embedding-3-small"]


class NoRows:
    """A session stand-in for org lookups that find nothing (no BYOK providers)."""

    async def scalar(self, _stmt: object) -> None:
        return None


def openai_transport(ids: list[str]) -> httpx2.MockTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        assert request.url.path.endswith("/models")
        return httpx2.Response(200, json={"object": "list", "data": [{"id": i, "object": "model"} for i in ids]})

    return httpx2.MockTransport(handler)


async def loaded_catalog(base_url: str = MOCK_URL) -> ModelCatalog:
    settings = Settings(_env_file=None, openai_api_key="sk-test", openai_base_url=base_url)  # type: ignore[call-arg]
    catalog = ModelCatalog(settings, timeout_s=1, transport=openai_transport(MOCK_IDS))
    await catalog.load()
    return catalog


def sample(name: str) -> Any:
    return json.loads((SAMPLES / name).read_text())


class TestListing:
    async def test_llm_entries_match_letta_sample(self) -> None:
        catalog = await loaded_catalog()
        entries = {c["handle"]: c for s, lists in catalog.base for c in lists.llm}
        expected = {m["handle"]: m for m in sample("list_models.json")}
        for handle in ("letta/letta-free", "openai/gpt-4o-mini", "openai/gpt-4.1", "openai/text-embedding-3-small"):
            model = expected[handle]
            ours = entries[handle]
            for key in ("model", "model_endpoint_type", "model_endpoint", "context_window", "max_tokens"):
                assert ours[key] == model[key], (handle, key)
            assert ours["provider_name"] == model["provider_name"]

    async def test_unknown_model_gets_letta_default_window(self) -> None:
        catalog = await loaded_catalog()
        mock = next(c for _, lists in catalog.base for c in lists.llm if c["model"] == "mock-model")
        assert mock["context_window"] == 30000

    async def test_openai_embeddings_are_the_fixed_three_plus_letta_free(self) -> None:
        catalog = await loaded_catalog()
        ours = {c["handle"]: c for _, lists in catalog.base for c in lists.embedding}
        theirs = {m["handle"]: m for m in sample("list_embedding_models.json")}
        assert set(ours) == set(theirs)
        for handle, model in theirs.items():
            for key in ("embedding_dim", "embedding_endpoint", "embedding_endpoint_type", "batch_size"):
                assert ours[handle][key] == model[key], (handle, key)

    async def test_api_openai_com_lists_only_tool_capable_chat_models(self) -> None:
        source = ProviderSource("openai", "openai", "base", "https://api.openai.com/v1", "sk")
        ids = ["gpt-4o-mini", "gpt-4o-realtime-preview", "whisper-1", "o3-mini", "text-embedding-3-small"]
        lists = await fetch_models(source, timeout_s=1, transport=openai_transport(ids))
        assert sorted(c["model"] for c in lists.llm) == ["gpt-4o-mini", "o3-mini"]

    async def test_ollama_lists_tool_models_and_embedders(self) -> None:
        def handler(request: httpx2.Request) -> httpx2.Response:
            if request.url.path == "/api/tags":
                return httpx2.Response(200, json={"models": [{"name": "qwen3:8b"}, {"name": "nomic-embed-text"}]})
            name = json.loads(request.content)["name"]
            if name == "qwen3:8b":
                info = {"general.architecture": "qwen3", "qwen3.context_length": 40960}
                return httpx2.Response(200, json={"capabilities": ["completion", "tools"], "model_info": info})
            info = {"general.architecture": "nomic-bert", "nomic-bert.embedding_length": 768}
            return httpx2.Response(200, json={"capabilities": ["embedding"], "model_info": info})

        source = ProviderSource("ollama", "ollama", "base", "http://localhost:11434")
        lists = await fetch_models(source, timeout_s=1, transport=httpx2.MockTransport(handler))
        assert [(c["handle"], c["context_window"], c["model_endpoint"]) for c in lists.llm] == [
            ("ollama/qwen3:8b", 40960, "http://localhost:11434/v1")
        ]
        assert [(c["handle"], c["embedding_dim"]) for c in lists.embedding] == [("ollama/nomic-embed-text", 768)]

    def test_base_url_with_or_without_v1(self) -> None:
        assert normalize_base_url("http://127.0.0.1:9900") == "http://127.0.0.1:9900/v1"
        assert normalize_base_url("http://127.0.0.1:9900/v1/") == "http://127.0.0.1:9900/v1"
        assert normalize_base_url("https://api.groq.com/openai/v1") == "https://api.groq.com/openai/v1"

    def test_window_from_provider_answer_when_unknown(self) -> None:
        assert context_window_for("my-finetune", {"id": "my-finetune", "max_model_len": 32768}) == 32768
        assert context_window_for("gpt-4o-mini-2024-07-18") == 128000


class TestResolveLLM:
    async def test_gpt_4o_mini_matches_agent_sample(self) -> None:
        catalog = await loaded_catalog()
        config = await catalog.resolve_llm(NoRows(), "org-x", "openai/gpt-4o-mini")  # type: ignore[arg-type]
        expected = sample("agent_state.json")["llm_config"]
        # enable_reasoner is switched off later, by the agent type's reasoning policy (apply_reasoning).
        assert {k: v for k, v in config.items() if k != "enable_reasoner"} == {
            k: v for k, v in expected.items() if k != "enable_reasoner"
        }
        v1 = catalog.apply_reasoning(config, None, "letta_v1_agent")
        assert v1 == expected

    async def test_window_capped_unless_limit_given(self) -> None:
        catalog = await loaded_catalog()
        capped = await catalog.resolve_llm(NoRows(), "o", "openai/gpt-4.1")  # type: ignore[arg-type]
        limited = await catalog.resolve_llm(NoRows(), "o", "openai/gpt-4.1", context_window_limit=200_000)  # type: ignore[arg-type]
        assert (capped["context_window"], limited["context_window"]) == (128_000, 200_000)

    async def test_openai_proxy_alias_resolves_and_keeps_requested_handle(self) -> None:
        catalog = await loaded_catalog()
        config = await catalog.resolve_llm(NoRows(), "o", "openai-proxy/gpt-4o-mini")  # type: ignore[arg-type]
        assert config["model"] == "gpt-4o-mini"
        assert config["handle"] == "openai-proxy/gpt-4o-mini"
        assert config["model_endpoint"] == MOCK_URL

    async def test_unknown_handle_is_404_naming_it(self) -> None:
        catalog = await loaded_catalog()
        with pytest.raises(NotFoundError) as err:
            await catalog.resolve_llm(NoRows(), "o", "openai/no-such-model")  # type: ignore[arg-type]
        assert err.value.message.startswith("NOT_FOUND: Handle openai/no-such-model not found, must be one of [")
        assert "'openai/gpt-4o-mini'" in err.value.message

    async def test_handle_without_slash_is_400(self) -> None:
        catalog = await loaded_catalog()
        with pytest.raises(BadRequestError) as err:
            await catalog.resolve_llm(NoRows(), "o", "gpt-4o-mini")  # type: ignore[arg-type]
        assert err.value.message == "INVALID_ARGUMENT: The model handle should be in the format provider/model-name"

    async def test_model_settings_override_but_keep_max_tokens_when_absent(self) -> None:
        catalog = await loaded_catalog()
        settings = {"provider_type": "openai", "temperature": 0.2, "parallel_tool_calls": False}
        config = await catalog.resolve_llm(NoRows(), "o", "openai/gpt-4o-mini", model_settings=settings)  # type: ignore[arg-type]
        assert (config["temperature"], config["max_tokens"], config["parallel_tool_calls"]) == (0.2, 16384, False)
        assert llm_params_from_settings({**settings, "max_output_tokens": 100})["max_tokens"] == 100


class TestProviderDownAtStartup:
    async def test_listing_is_retried_once_the_provider_answers(self) -> None:
        up = False

        def handler(request: httpx2.Request) -> httpx2.Response:
            if not up:
                raise httpx2.ConnectError("refused", request=request)
            return httpx2.Response(200, json={"data": [{"id": "gpt-4o-mini"}]})

        settings = Settings(_env_file=None, openai_api_key="sk", openai_base_url=MOCK_URL)  # type: ignore[call-arg]
        catalog = ModelCatalog(settings, timeout_s=1, transport=httpx2.MockTransport(handler))
        await catalog.load()
        with pytest.raises(NotFoundError):
            await catalog.resolve_llm(NoRows(), "o", "openai/gpt-4o-mini")  # type: ignore[arg-type]
        up = True
        catalog._retry_at["openai"] = 0  # the retry delay has passed
        config = await catalog.resolve_llm(NoRows(), "o", "openai/gpt-4o-mini")  # type: ignore[arg-type]
        assert config["model"] == "gpt-4o-mini"


class TestResolveEmbedding:
    async def test_matches_agent_sample(self) -> None:
        catalog = await loaded_catalog()
        config = await catalog.resolve_embedding(NoRows(), "o", "openai/text-embedding-3-small")  # type: ignore[arg-type]
        assert config == sample("agent_state.json")["embedding_config"]

    async def test_unknown_is_400(self) -> None:
        catalog = await loaded_catalog()
        with pytest.raises(BadRequestError) as err:
            await catalog.resolve_embedding(NoRows(), "o", "openai/nope")  # type: ignore[arg-type]
        assert err.value.message == "INVALID_ARGUMENT: Embedding model openai/nope not found"


class TestModelSettings:
    async def test_derived_from_llm_config_as_in_sample(self) -> None:
        catalog = ModelCatalog(Settings(_env_file=None))  # type: ignore[call-arg]
        state = sample("agent_state.json")
        assert catalog.model_settings_for(state["llm_config"]) == state["model_settings"]

    def test_letta_free_settings(self) -> None:
        catalog = ModelCatalog(Settings(_env_file=None))  # type: ignore[call-arg]
        config = {"model": "letta-free", "model_endpoint_type": "openai", "max_tokens": 4096, "temperature": 1.0}
        settings = catalog.model_settings_for(config)
        assert settings == {
            "max_output_tokens": 4096,
            "parallel_tool_calls": True,
            "provider_type": "openai",
            "temperature": 1.0,
            "reasoning": {"reasoning_effort": "minimal"},
            "response_format": None,
            "strict": False,
        }

    def test_anthropic_thinking_follows_enable_reasoner(self) -> None:
        catalog = ModelCatalog(Settings(_env_file=None))  # type: ignore[call-arg]
        config = {"model": "claude-sonnet-4-5", "model_endpoint_type": "anthropic", "enable_reasoner": False}
        assert catalog.model_settings_for(config)["thinking"] == {"type": "disabled", "budget_tokens": 1024}


class TestLegacyConfig:
    def test_deepseek_config_keeps_given_fields_and_fills_defaults(self) -> None:
        catalog = ModelCatalog(Settings(_env_file=None))  # type: ignore[call-arg]
        config = catalog.normalize_llm_config(
            {"model": "deepseek-chat", "model_endpoint_type": "deepseek", "context_window": 64000}
        )
        assert config["model_endpoint"] == "https://api.deepseek.com/v1"
        assert config["handle"] is None
        assert (config["temperature"], config["put_inner_thoughts_in_kwargs"]) == (1.0, False)

    def test_gpt5_gets_letta_model_defaults(self) -> None:
        catalog = ModelCatalog(Settings(_env_file=None))  # type: ignore[call-arg]
        config = catalog.normalize_llm_config({"model": "gpt-5", "model_endpoint_type": "openai", "context_window": 1})
        assert (config["max_tokens"], config["verbosity"]) == (16384, "medium")
        assert config["model_endpoint"] == "https://api.openai.com/v1"


class TestReasoningPolicy:
    def test_classic_agent_thinks_in_kwargs_for_plain_models(self) -> None:
        catalog = ModelCatalog(Settings(_env_file=None))  # type: ignore[call-arg]
        config = {"model": "gpt-4o-mini", "model_endpoint_type": "openai", "enable_reasoner": True}
        out = catalog.apply_reasoning(config, None, "memgpt_v2_agent")
        assert (out["enable_reasoner"], out["put_inner_thoughts_in_kwargs"]) == (True, True)

    def test_v1_agent_keeps_native_reasoning(self) -> None:
        catalog = ModelCatalog(Settings(_env_file=None))  # type: ignore[call-arg]
        config = {"model": "gpt-5-mini", "model_endpoint_type": "openai", "enable_reasoner": True}
        out = catalog.apply_reasoning(config, None, "letta_v1_agent")
        assert (out["enable_reasoner"], out["reasoning_effort"], out["verbosity"]) == (True, "minimal", "medium")
