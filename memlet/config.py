"""Settings, read once from the environment and ``.env`` and passed down (never read ad hoc elsewhere)."""

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memlet.gc_tuning import YOUNG_THRESHOLD


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MEMLET_", env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    # Database: an external Postgres (needs pgvector) or, when unset, an embedded one under data_dir.
    pg_uri: str | None = Field(default=None, validation_alias=AliasChoices("MEMLET_PG_URI", "LETTA_PG_URI"))
    data_dir: Path = Field(default=Path("~/.memlet"), validation_alias=AliasChoices("MEMLET_DATA_DIR"))
    pg_pool_size: int = 10
    pg_max_overflow: int = 10
    migrate_on_start: bool = True

    host: str = "127.0.0.1"
    port: int = 8283
    log_level: str = "INFO"
    max_body_bytes: int = 32 * 1024 * 1024
    # Largest file `POST /v1/folders/{id}/upload` accepts (413 beyond it, counted while the body streams in).
    max_upload_bytes: int = 16 * 1024 * 1024
    # Largest agent file `POST /v1/agents/import` accepts (413 beyond it, counted while the body streams in).
    max_agent_file_bytes: int = 24 * 1024 * 1024
    # Files parsed and embedded at the same time, per server process.
    file_processing_concurrency: int = 2
    # Reading a PDF or splitting a large text (in a child process, memlet/folders/file_worker.py): its memory cap
    # and its CPU / wait cap.
    file_worker_memory_mb: int = Field(default=1024, ge=128, le=1_000_000)
    file_worker_timeout_s: int = Field(default=300, ge=1, le=86_400)
    # Hybrid message search: embed user, assistant and tool messages in the background (never on the send path),
    # with each agent's embedding_config. Off by default, as in Letta OSS: one embedding call per message costs.
    embed_messages: bool = False
    # Keep each agent step's raw LLM request and response (`GET /v1/steps/{id}/trace`), as Letta's
    # `track_provider_trace` does, on by default; off: none is written and the trace routes answer null.
    track_provider_trace: bool = Field(
        default=True, validation_alias=AliasChoices("MEMLET_TRACK_PROVIDER_TRACE", "LETTA_TRACK_PROVIDER_TRACE")
    )
    message_embedding_interval_s: float = Field(default=1.0, gt=0)
    # Exempt the objects alive after start-up from the garbage collector's full passes (memlet/gc_tuning.py). The
    # tests turn it off: their servers share the pytest process, whose objects would be frozen with them.
    gc_freeze: bool = True
    # With gc_freeze: the young generation's collection threshold (CPython's default is 700; memlet/gc_tuning.py).
    gc_young_threshold: int = Field(default=YOUNG_THRESHOLD, ge=1, le=10_000_000)
    # Megabytes of in-context message rows each server process keeps between turns (estimated), checked against
    # each row's version on every load (memlet/loop/window_cache.py); 0 reads every thread's whole window every turn.
    context_cache_mb: int = Field(default=16, ge=0, le=1_000_000)
    # Megabytes of listed agents' JSON each server process keeps, each entry keyed by the versions of the rows it
    # was built from (memlet/agents/json_cache.py); 0 builds every listed agent anew.
    agent_json_cache_mb: int = Field(default=8, ge=0, le=1_000_000)

    # Optional bearer-password auth (Letta: SECURE / LETTA_SERVER_SECURE + LETTA_SERVER_PASSWORD).
    server_password: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("MEMLET_SERVER_PASSWORD", "LETTA_SERVER_PASSWORD")
    )
    secure: bool = Field(default=False, validation_alias=AliasChoices("MEMLET_SECURE", "SECURE", "LETTA_SERVER_SECURE"))

    # OpenAI-compatible provider (no prefix, as Letta).
    openai_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("OPENAI_API_KEY"))
    openai_base_url: str = Field(
        default="https://api.openai.com/v1", validation_alias=AliasChoices("OPENAI_BASE_URL", "OPENAI_API_BASE")
    )
    # List the chat models of an OPENAI_BASE_URL that is not api.openai.com as `openai-proxy/<model>`, the handles
    # Letta 0.16.8 gives them (default: `openai/<model>`; both are accepted either way). For programs that look for
    # Letta's handle names in GET /v1/models/.
    openai_proxy_handles: bool = False
    ollama_base_url: str | None = Field(default=None, validation_alias=AliasChoices("OLLAMA_BASE_URL"))
    deepseek_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("DEEPSEEK_API_KEY"))
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("ANTHROPIC_API_KEY"))
    anthropic_base_url: str = Field(
        default="https://api.anthropic.com/v1", validation_alias=AliasChoices("ANTHROPIC_BASE_URL")
    )
    # Letta's other environment providers (`memlet.providers.env_providers`), under Letta's variable names.
    groq_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("GROQ_API_KEY"))
    together_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("TOGETHER_API_KEY"))
    xai_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("XAI_API_KEY"))
    openrouter_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("OPENROUTER_API_KEY"))
    openrouter_handle_base: str | None = Field(default=None, validation_alias=AliasChoices("OPENROUTER_HANDLE_BASE"))
    zai_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("ZAI_API_KEY"))
    zai_base_url: str = Field(default="https://api.z.ai/api/paas/v4", validation_alias=AliasChoices("ZAI_BASE_URL"))
    minimax_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("MINIMAX_API_KEY"))
    baseten_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("BASETEN_API_KEY"))
    vllm_api_base: str | None = Field(default=None, validation_alias=AliasChoices("VLLM_API_BASE"))
    vllm_handle_base: str | None = Field(default=None, validation_alias=AliasChoices("VLLM_HANDLE_BASE"))
    sglang_api_base: str | None = Field(default=None, validation_alias=AliasChoices("SGLANG_API_BASE"))
    sglang_handle_base: str | None = Field(default=None, validation_alias=AliasChoices("SGLANG_HANDLE_BASE"))
    lmstudio_base_url: str | None = Field(default=None, validation_alias=AliasChoices("LMSTUDIO_BASE_URL"))

    # The model and embedding handles an agent created without `model` / `llm_config` (or without `embedding` /
    # `embedding_config`) gets, as Letta's LETTA_DEFAULT_LLM_HANDLE / LETTA_DEFAULT_EMBEDDING_HANDLE.
    default_llm_handle: str | None = Field(
        default=None, validation_alias=AliasChoices("MEMLET_DEFAULT_LLM_HANDLE", "LETTA_DEFAULT_LLM_HANDLE")
    )
    default_embedding_handle: str | None = Field(
        default=None,
        validation_alias=AliasChoices("MEMLET_DEFAULT_EMBEDDING_HANDLE", "LETTA_DEFAULT_EMBEDDING_HANDLE"),
    )

    # Exa (the web_search and fetch_webpage tools): the server's key (Letta's EXA_API_KEY) for agents without an
    # EXA_API_KEY secret of their own, and where Exa's API is (always allowed by the outbound policy).
    exa_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("MEMLET_EXA_API_KEY", "EXA_API_KEY")
    )
    exa_base_url: str = "https://api.exa.ai"

    llm_timeout_s: float = 60.0
    llm_max_retries: int = 3
    llm_retry_base_delay_s: float = 0.5

    tool_timeout_s: float = Field(
        default=180.0, validation_alias=AliasChoices("MEMLET_TOOL_TIMEOUT_S", "TOOL_SANDBOX_TIMEOUT")
    )
    tool_memory_mb: int = 1024
    agent_lock_timeout_s: float = 30.0
    # A streamed send finding its agent busy waits this long, then answers Letta's 409 busy body (Letta: no wait).
    stream_lock_wait_s: float = Field(default=0.0, ge=0)
    # A multi-agent tool's message to a busy agent waits this long, then the tool answers with an error.
    agent_message_wait_s: float = Field(default=10.0, ge=0)

    # --- auth and exposure ---
    # A server listening beyond loopback without a password refuses to start unless this is set (see memlet.exposure).
    allow_insecure: bool = False
    # Comma-separated browser origins (e.g. "app://obsidian.md") whose pages may call the API: CORS headers for them
    # only. Letta's ACCEPTABLE_ORIGINS; Letta also let five localhost origins in by default, memlet none.
    cors_origins: str = Field(default="", validation_alias=AliasChoices("MEMLET_CORS_ORIGINS", "ACCEPTABLE_ORIGINS"))

    # --- outbound URLs (SSRF guard) and LLM clients ---
    # Comma-separated hosts, IPs or CIDRs (optionally host:port) that user-given URLs may reach although they are
    # not public, e.g. "127.0.0.1:11434,host.docker.internal"; see memlet.net.outbound.
    allowed_hosts: str = ""
    # LLM clients kept open (one per endpoint type, URL and key); the least recently used is closed beyond this.
    llm_client_cache_size: int = Field(default=64, ge=1)

    # --- MCP servers ---
    # stdio MCP servers run a command on this host: off unless enabled (Letta: MCP_DISABLE_STDIO=true by default).
    mcp_stdio: bool = False
    # Connecting (spawn or HTTP connect + MCP initialize) and one tool call or listing each get this long.
    mcp_connect_timeout_s: float = Field(default=30.0, gt=0)
    mcp_call_timeout_s: float = Field(default=60.0, gt=0)
    # Where an OAuth provider sends the user back (Letta: LETTA_AGENTS_ENDPOINT); "" = this server's own URL.
    mcp_oauth_redirect_base: str = ""

    # --- tool sandbox ---
    # auto: bubblewrap when it works here (probed once), else rlimits + process-group kill only (logged loudly).
    tool_isolation: Literal["auto", "bubblewrap", "none"] = "auto"
    # Outbound network for tools ("on"/"off"); off needs isolation (a private network namespace).
    tool_network: bool = True
    max_concurrent_tools: int = Field(default=8, ge=1)
    tool_max_processes: int = Field(default=64, ge=1)
    # Caps each file a tool writes and, under isolation, its whole private /tmp.
    tool_disk_mb: int = Field(default=256, ge=1)
    # A server running as root runs each tool as uid base+n (n < 1000, unique across concurrent calls).
    tool_uid_base: int = Field(default=2_000_000_000, ge=1, le=4_294_960_000)

    # --- runs and turns ---
    # Turns (sends, streams, async runs) one worker runs at once, waiting ones included; more get 429 + Retry-After.
    # Each holds one connection of its own pool, so budget workers x (pool + overflow + this + 1) <= max_connections.
    max_concurrent_turns: int = Field(default=50, ge=1)
    # On SIGTERM: how long in-flight runs may finish before they are stopped and marked failed.
    shutdown_grace_s: float = Field(default=25.0, ge=0)
    # A run's lease, renewed by its worker while it runs; an expired one marks the run orphaned.
    run_lease_s: float = Field(default=30.0, gt=0)

    # --- secrets and metrics ---
    # Fernet keys (comma-separated; the first encrypts, all decrypt) for agent secrets and provider keys at rest.
    encryption_key: SecretStr | None = None
    # Serve Prometheus metrics on /metrics (behind the server password like every other route).
    metrics_enabled: bool = True
    # prometheus_client's multiprocess mode (several workers): a directory shared by the workers, read by the library
    # from the environment variable of the same name.
    prometheus_multiproc_dir: Path | None = Field(
        default=None, validation_alias=AliasChoices("PROMETHEUS_MULTIPROC_DIR")
    )

    @field_validator("server_password", mode="before")
    @classmethod
    def _blank_password_is_none(cls, value: object) -> object:
        # An empty or blank variable (compose's `${VAR:-}`) must not count as a password, nor disable auth silently.
        raw = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(raw, str):
            return raw.strip() or None
        return value

    @model_validator(mode="after")
    def _secure_needs_password(self) -> "Settings":
        if self.secure and self.server_password is None:
            raise ValueError("SECURE is set but MEMLET_SERVER_PASSWORD / LETTA_SERVER_PASSWORD is unset or empty")
        return self

    @field_validator("encryption_key")
    @classmethod
    def _valid_fernet_keys(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        from cryptography.fernet import Fernet  # only a server that encrypts loads cryptography (~7 MB)

        for key in value.get_secret_value().split(","):
            try:
                Fernet(key.strip())
            except ValueError:
                raise ValueError(
                    "MEMLET_ENCRYPTION_KEY must be Fernet keys (32 url-safe base64 bytes each, comma-separated); "
                    "make one with: python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'"
                ) from None
        return value

    @property
    def password(self) -> str | None:
        return self.server_password.get_secret_value() if self.server_password else None

    @property
    def resolved_data_dir(self) -> Path:
        return self.data_dir.expanduser()
