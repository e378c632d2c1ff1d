"""Log masking (known values and token patterns, exception texts included) and the at-rest keyring."""

import io
import logging
from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr, ValidationError

from memlet.config import Settings
from memlet.crypto import PREFIX, Keyring, SecretDecryptError, settings_secrets
from memlet.log import JsonFormatter, masker


@pytest.fixture
def log() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("memlet.test_masking")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield logger, buffer
    finally:
        logger.removeHandler(handler)


class TestMasking:
    def test_configured_secrets_masked_in_messages_fields_and_tracebacks(
        self, log: tuple[logging.Logger, io.StringIO]
    ) -> None:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            server_password=SecretStr("hunter2-password"),
            openai_api_key=SecretStr("oa-key-0123456789"),
            exa_api_key=SecretStr("exa-key-0123456789"),
            anthropic_api_key=SecretStr("ant-key-0123456789"),
            pg_uri="postgresql://memlet:pg-pass-xyz@db:5432/memlet",
        )
        masker.configure(settings_secrets(settings))
        logger, buffer = log
        logger.error("login with %s", "hunter2-password", extra={"fields": {"key": "oa-key-0123456789"}})
        logger.error("search with %s", "exa-key-0123456789")
        logger.error("claude with %s", "ant-key-0123456789")
        try:
            raise RuntimeError('connect failed for "pg-pass-xyz"')
        except RuntimeError:
            logger.exception("db down")
        out = buffer.getvalue()
        for secret in (
            "hunter2-password",
            "oa-key-0123456789",
            "exa-key-0123456789",
            "ant-key-0123456789",
            "pg-pass-xyz",
        ):
            assert secret not in out
        assert out.count("***") >= 5
        assert "connect failed for" in out  # the rest of the text is kept

    def test_token_patterns(self, log: tuple[logging.Logger, io.StringIO]) -> None:
        logger, buffer = log
        logger.warning(
            "calling https://api.example.com with Authorization: Bearer tok_abc123XYZ and key sk-proj-Abc123def456 "
            "via postgresql://admin:s3cr3tpw@10.0.0.5/db and http://h/x?api_key=qwerty12345&n=1 "
            "(invalid input for query argument $2: 'leaked-value' (expected str))"
        )
        out = buffer.getvalue()
        for secret in ("tok_abc123XYZ", "sk-proj-Abc123def456", "s3cr3tpw", "qwerty12345", "leaked-value"):
            assert secret not in out
        assert "postgresql://***@10.0.0.5/db" in out
        assert "api_key=***&n=1" in out
        assert "query argument $2: *** (expected str)" in out

    def test_remembered_values_and_their_json_form(self, log: tuple[logging.Logger, io.StringIO]) -> None:
        logger, buffer = log
        Keyring().seal('quote"d-secret-value')  # every sealed value is remembered, even without encryption
        logger.error("value was %s", 'quote"d-secret-value')
        assert "quote" not in buffer.getvalue()

    def test_short_values_are_not_masked(self, log: tuple[logging.Logger, io.StringIO]) -> None:
        logger, buffer = log
        masker.remember("abc")
        logger.error("abc stays readable")
        assert "abc stays readable" in buffer.getvalue()


class TestKeyring:
    def test_seal_and_reveal(self) -> None:
        keyring = Keyring((Fernet.generate_key().decode(),))
        sealed = keyring.seal("value-1")
        assert sealed is not None and sealed.startswith(PREFIX) and "value-1" not in sealed
        assert keyring.reveal(sealed) == "value-1"
        assert keyring.reveal("plain-from-before") == "plain-from-before"
        assert keyring.reveal(None) is None

    def test_rotation_first_key_encrypts_all_decrypt(self) -> None:
        old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
        sealed_old = Keyring((old,)).seal("rotate-me")
        both = Keyring((new, old))
        assert both.reveal(sealed_old) == "rotate-me"
        resealed = both.reseal(sealed_old)
        assert Keyring((new,)).reveal(resealed) == "rotate-me"
        with pytest.raises(SecretDecryptError):
            Keyring((old,)).reveal(resealed)

    def test_missing_or_wrong_key_is_a_clear_error(self) -> None:
        sealed = Keyring((Fernet.generate_key().decode(),)).seal("x-value")
        with pytest.raises(SecretDecryptError, match="MEMLET_ENCRYPTION_KEY is not set"):
            Keyring().reveal(sealed, "API key of provider 'p'")
        with pytest.raises(SecretDecryptError, match="none of the keys"):
            Keyring((Fernet.generate_key().decode(),)).reveal(sealed)

    def test_settings_reject_a_bad_key_and_accept_a_list(self) -> None:
        with pytest.raises(ValidationError, match="Fernet keys"):
            Settings(_env_file=None, encryption_key="not-a-key")  # type: ignore[call-arg]
        keys = f"{Fernet.generate_key().decode()}, {Fernet.generate_key().decode()}"
        assert Settings(_env_file=None, encryption_key=keys).encryption_key is not None  # type: ignore[call-arg]


class TestLibraryLogs:
    def test_uvicorn_handlers_get_the_masking_filter(self) -> None:
        from memlet.log import MaskingFilter, mask_library_logs

        buffer = io.StringIO()
        handler = logging.StreamHandler(buffer)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger = logging.getLogger("memlet_test_library")
        logger.addHandler(handler)
        logger.propagate = False
        try:
            mask_library_logs(["memlet_test_library"])
            mask_library_logs(["memlet_test_library"])  # idempotent
            assert sum(isinstance(f, MaskingFilter) for f in handler.filters) == 1
            try:
                raise ValueError("Authorization: Bearer lib-token-123456")
            except ValueError:
                logger.exception("GET /v1/x?token=%s", "qs-token-98765")
        finally:
            logger.removeHandler(handler)
        out = buffer.getvalue()
        assert "lib-token-123456" not in out and "qs-token-98765" not in out
        assert "ValueError" in out and "token=***" in out
