"""The model catalog without a database: listings (from a real HTTP server on 127.0.0.1), handle resolution,
model_settings, legacy configs."""

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from memlet.config import Settings
from memlet.errors import BadRequestError, NotFoundError
from memlet.providers import remote
from memlet.providers.catalog import ModelCatalog
from memlet.providers.known_models import context_window_for
from memlet.providers.model_settings import llm_params_from_settings
from memlet.providers.remote import ProviderSource, fetch_models, normalize_base_url
from tests.api.listener import Listener, allowing, free_port
from tests.shared_paths import SAMPLES

SAMPLE_URL = "http://127.0.0.1:9900/v1"  # where the mock answered when Letta's samples were recorded
MOCK_IDS = ["gpt-4o-mini", "gpt-4o", "gpt-4.1", "mock-model", "text-embedding-3-small"]
Answer = Callable[[str, Any], tuple[int, Any]]


class NoRows:
    """A session stand-in for org lookups that find nothing (no BYOK providers)."""

    async def scalar(self, _stmt: object) -> None:
        return None


class Provider(Listener):
    """A provider on 127.0.0.1 answering with `reply(path, body)` -> (status, JSON)."""

    def __init__(self, reply: Answer, port: int = 0) -> None:
        super().__init__(port)
        self.reply = reply
        self.base_url = f"{self.url}/v1"

    def answer(self, path: str, body: Any) -> tuple[int, bytes, str]:
        status, content = self.reply(path, body)
        return status, json.dumps(content).encode(), "application/json"


def openai_models(ids: list[str]) -> Answer:
    def reply(path: str, body: Any) -> tuple[int, Any]:
        assert path.endswith("/models")
        return 200, {"object": "list", "data": [{"id": i, "object": "model"} for i in ids]}

    return reply


@contextmanager
def provider(reply: Answer, port: int = 0) -> Iterator[Provider]:
    server = Provider(reply, port)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def openai() -> Iterator[Provider]:
    with provider(openai_models(MOCK_IDS)) as server:
        yield server


@pytest.fixture
async def catalog(openai: Provider) -> ModelCatalog:
    settings = Settings(_env_file=None, openai_api_key="sk-test", openai_base_url=openai.base_url)  # type: ignore[call-arg]
    loaded = ModelCatalog(settings, timeout_s=5)
    await loaded.load()
    return loaded


def sample(name: str, base_url: str | None = None) -> Any:
    """A Letta sample; with `base_url`, the mock's URL in it is replaced by that one."""
    text = (SAMPLES / name).read_text()
    return json.loads(text.replace(SAMPLE_URL, base_url) if base_url else text)


class TestListing:
    async def test_llm_entries_match_letta_sample(self, catalog: ModelCatalog, openai: Provider) -> None:
        entries = {c["handle"]: c for s, lists in catalog.base for c in lists.llm}
        expected = {m["handle"]: m for m in sample("list_models.json", openai.base_url)}
        for handle in ("letta/letta-free", "openai/gpt-4o-mini", "openai/gpt-4.1", "openai/text-embedding-3-small"):
            model = expected[handle]
            ours = entries[handle]
            for key in ("model", "model_endpoint_type", "model_endpoint", "context_window", "max_tokens"):
                assert ours[key] == model[key], (handle, key)
            assert ours["provider_name"] == model["provider_name"]

    async def test_unknown_model_gets_letta_default_window(self, catalog: ModelCatalog) -> None:
        mock = next(c for _, lists in catalog.base for c in lists.llm if c["model"] == "mock-model")
        assert mock["context_window"] == 30000

    async def test_openai_embeddings_are_the_fixed_three_plus_letta_free(
        self, catalog: ModelCatalog, openai: Provider
    ) -> None:
        ours = {c["handle"]: c for _, lists in catalog.base for c in lists.embedding}
        theirs = {m["handle"]: m for m in sample("list_embedding_models.json", openai.base_url)}
        assert set(ours) == set(theirs)
        for handle, model in theirs.items():
            for key in ("embedding_dim", "embedding_endpoint", "embedding_endpoint_type", "batch_size"):
                assert ours[handle][key] == model[key], (handle, key)

    async def test_api_openai_com_lists_only_tool_capable_chat_models(self, monkeypatch: pytest.MonkeyPatch) -> None:
        ids = ["gpt-4o-mini", "gpt-4o-realtime-preview", "whisper-1", "o3-mini", "text-embedding-3-small"]
        with provider(openai_models(ids)) as official:
            monkeypatch.setattr(remote, "OPENAI_URL", official.base_url)  # this server stands for api.openai.com
            source = ProviderSource("openai", "openai", "base", official.base_url, "sk")
            lists = await fetch_models(source, timeout_s=5, policy=allowing(official))
            assert sorted(c["model"] for c in lists.llm) == ["gpt-4o-mini", "o3-mini"]
            monkeypatch.undo()  # any other OpenAI-compatible server lists every model
            lists = await fetch_models(source, timeout_s=5, policy=allowing(official))
            assert sorted(c["model"] for c in lists.llm) == sorted(ids)

    async def test_api_openai_com_lists_dated_models_under_letta_short_handles(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        ids = ["gpt-4o-mini-2024-07-18", "gpt-4o-2024-08-06", "gpt-4o-mini"]
        with provider(openai_models(ids)) as official:
            monkeypatch.setattr(remote, "OPENAI_URL", official.base_url)  # this server stands for api.openai.com
            source = ProviderSource("openai", "openai", "base", official.base_url, "sk")
            lists = await fetch_models(source, timeout_s=5, policy=allowing(official))
            monkeypatch.undo()  # another OpenAI-compatible server: Letta calls it openai-proxy, no short names
            proxied = await fetch_models(source, timeout_s=5, policy=allowing(official))
        assert sorted((c["handle"], c["model"]) for c in lists.llm) == [
            ("openai/gpt-4o-aug", "gpt-4o-2024-08-06"),
            ("openai/gpt-4o-mini", "gpt-4o-mini"),
            ("openai/gpt-4o-mini-jul", "gpt-4o-mini-2024-07-18"),
        ]
        assert sorted(c["handle"] for c in proxied.llm) == sorted(f"openai/{i}" for i in ids)

    async def test_gpt_5_4_gets_letta_fast_twin_on_openai_only(self) -> None:
        # Letta 0.16.8's OpenAI provider adds `gpt-5.4-fast`, the same entry under another name and handle.
        with provider(openai_models(["gpt-5.4", "gpt-5.2", "gpt-4o-mini"])) as server:
            source = ProviderSource("my-openai", "openai", "byok", server.base_url, "sk")
            lists = await fetch_models(source, timeout_s=5, policy=allowing(server))
            other = ProviderSource("together", "together", "base", server.base_url, "sk")
            plain = await fetch_models(other, timeout_s=5, policy=allowing(server))
        entries = {c["handle"]: c for c in lists.llm}
        assert sorted(entries) == [
            "my-openai/gpt-4o-mini",
            "my-openai/gpt-5.2",
            "my-openai/gpt-5.4",
            "my-openai/gpt-5.4-fast",
        ]
        fast, base = entries["my-openai/gpt-5.4-fast"], entries["my-openai/gpt-5.4"]
        assert fast["model"] == "gpt-5.4-fast"
        assert {k: v for k, v in fast.items() if k not in ("model", "handle")} == {
            k: v for k, v in base.items() if k not in ("model", "handle")
        }
        assert not [c for c in plain.llm if c["model"].endswith("-fast")]

    async def test_ollama_lists_tool_models_and_embedders(self) -> None:
        def reply(path: str, body: Any) -> tuple[int, Any]:
            if path == "/api/tags":
                return 200, {"models": [{"name": "qwen3:8b"}, {"name": "nomic-embed-text"}, {"name": "gone"}]}
            assert path == "/api/show"
            if body["name"] == "qwen3:8b":
                info = {"general.architecture": "qwen3", "qwen3.context_length": 40960}
                return 200, {"capabilities": ["completion", "tools"], "model_info": info}
            if body["name"] == "gone":  # removed between the two calls: left out, the others still listed
                return 404, {"error": "model 'gone' not found"}
            info = {"general.architecture": "nomic-bert", "nomic-bert.embedding_length": 768}
            return 200, {"capabilities": ["embedding"], "model_info": info}

        with provider(reply) as ollama:
            source = ProviderSource("ollama", "ollama", "base", ollama.url)
            lists = await fetch_models(source, timeout_s=5, policy=allowing(ollama))
        assert [(c["handle"], c["context_window"], c["model_endpoint"]) for c in lists.llm] == [
            ("ollama/qwen3:8b", 40960, f"{ollama.url}/v1")
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
    async def test_gpt_4o_mini_matches_agent_sample(self, catalog: ModelCatalog, openai: Provider) -> None:
        config = await catalog.resolve_llm(NoRows(), "org-x", "openai/gpt-4o-mini")  # type: ignore[arg-type]
        expected = sample("agent_state.json", openai.base_url)["llm_config"]
        # enable_reasoner is switched off later, by the agent type's reasoning policy (apply_reasoning).
        assert {k: v for k, v in config.items() if k != "enable_reasoner"} == {
            k: v for k, v in expected.items() if k != "enable_reasoner"
        }
        v1 = catalog.apply_reasoning(config, None, "letta_v1_agent")
        assert v1 == expected

    async def test_window_capped_unless_limit_given(self, catalog: ModelCatalog) -> None:
        capped = await catalog.resolve_llm(NoRows(), "o", "openai/gpt-4.1")  # type: ignore[arg-type]
        limited = await catalog.resolve_llm(NoRows(), "o", "openai/gpt-4.1", context_window_limit=200_000)  # type: ignore[arg-type]
        assert (capped["context_window"], limited["context_window"]) == (128_000, 200_000)

    async def test_openai_proxy_alias_resolves_and_keeps_requested_handle(
        self, catalog: ModelCatalog, openai: Provider
    ) -> None:
        config = await catalog.resolve_llm(NoRows(), "o", "openai-proxy/gpt-4o-mini")  # type: ignore[arg-type]
        assert config["model"] == "gpt-4o-mini"
        assert config["handle"] == "openai-proxy/gpt-4o-mini"
        assert config["model_endpoint"] == openai.base_url

    async def test_unknown_handle_is_404_naming_it(self, catalog: ModelCatalog) -> None:
        with pytest.raises(NotFoundError) as err:
            await catalog.resolve_llm(NoRows(), "o", "openai/no-such-model")  # type: ignore[arg-type]
        assert err.value.message.startswith("NOT_FOUND: Handle openai/no-such-model not found, must be one of [")
        assert "'openai/gpt-4o-mini'" in err.value.message

    async def test_handle_without_slash_is_400(self, catalog: ModelCatalog) -> None:
        with pytest.raises(BadRequestError) as err:
            await catalog.resolve_llm(NoRows(), "o", "gpt-4o-mini")  # type: ignore[arg-type]
        assert err.value.message == "INVALID_ARGUMENT: The model handle should be in the format provider/model-name"

    async def test_model_settings_override_but_keep_max_tokens_when_absent(self, catalog: ModelCatalog) -> None:
        settings = {"provider_type": "openai", "temperature": 0.2, "parallel_tool_calls": False}
        config = await catalog.resolve_llm(NoRows(), "o", "openai/gpt-4o-mini", model_settings=settings)  # type: ignore[arg-type]
        assert (config["temperature"], config["max_tokens"], config["parallel_tool_calls"]) == (0.2, 16384, False)
        assert llm_params_from_settings({**settings, "max_output_tokens": 100})["max_tokens"] == 100


class TestProviderDownAtStartup:
    async def test_listing_is_retried_once_the_provider_answers(self) -> None:
        port = free_port()  # nothing listens there yet: the start-up listing's connection is refused
        url = f"http://127.0.0.1:{port}/v1"
        settings = Settings(_env_file=None, openai_api_key="sk", openai_base_url=url)  # type: ignore[call-arg]
        catalog = ModelCatalog(settings, timeout_s=5)
        await catalog.load()
        with pytest.raises(NotFoundError):
            await catalog.resolve_llm(NoRows(), "o", "openai/gpt-4o-mini")  # type: ignore[arg-type]
        with provider(openai_models(["gpt-4o-mini"]), port):
            catalog._retry_at["openai"] = 0  # the retry delay has passed
            config = await catalog.resolve_llm(NoRows(), "o", "openai/gpt-4o-mini")  # type: ignore[arg-type]
        assert config["model"] == "gpt-4o-mini"


class TestResolveEmbedding:
    async def test_matches_agent_sample(self, catalog: ModelCatalog, openai: Provider) -> None:
        config = await catalog.resolve_embedding(NoRows(), "o", "openai/text-embedding-3-small")  # type: ignore[arg-type]
        assert config == sample("agent_state.json", openai.base_url)["embedding_config"]

    async def test_unknown_is_400(self, catalog: ModelCatalog) -> None:
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
