"""Settings, read once from the environment and ``.env`` and passed down (never read ad hoc elsewhere)."""

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


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
    ollama_base_url: str | None = Field(default=None, validation_alias=AliasChoices("OLLAMA_BASE_URL"))
    deepseek_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("DEEPSEEK_API_KEY"))

    llm_timeout_s: float = 60.0
    llm_max_retries: int = 3
    llm_retry_base_delay_s: float = 0.5

    tool_timeout_s: float = Field(
        default=180.0, validation_alias=AliasChoices("MEMLET_TOOL_TIMEOUT_S", "TOOL_SANDBOX_TIMEOUT")
    )
    tool_memory_mb: int = 1024
    agent_lock_timeout_s: float = 30.0

    @model_validator(mode="after")
    def _secure_needs_password(self) -> "Settings":
        if self.secure and self.server_password is None:
            raise ValueError("SECURE is set but no MEMLET_SERVER_PASSWORD / LETTA_SERVER_PASSWORD was given")
        return self

    @property
    def password(self) -> str | None:
        return self.server_password.get_secret_value() if self.server_password else None

    @property
    def resolved_data_dir(self) -> Path:
        return self.data_dir.expanduser()
