"""At-rest encryption of stored credentials: agent secrets (tool environment values) and provider keys.

With `MEMLET_ENCRYPTION_KEY` set (Fernet keys, comma-separated), values are stored as `fernet:<token>`; the first
key encrypts and every key decrypts, so a key is rotated by putting the new one first, running
`memlet secrets reencrypt` (every row written again with the new key), then dropping the old ones. Values stored before
encryption was turned on, without the prefix, keep working and are encrypted the next time they are written.
Values are decrypted only where they are used: the tool sandbox's environment, provider calls, and the responses
in which Letta returns them. A value that cannot be decrypted raises `SecretDecryptError`, never plaintext.
Every value sealed or revealed here is remembered by the log masker, so it never reaches a log line.
"""

from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import SecretStr

from memlet.config import Settings
from memlet.errors import MemletError
from memlet.log import remember_secret

if TYPE_CHECKING:
    from cryptography.fernet import MultiFernet

PREFIX = "fernet:"


class SecretDecryptError(MemletError):
    """A stored value is encrypted but no configured key decrypts it (a server configuration problem)."""

    def __init__(self, what: str, configured: bool) -> None:
        reason = (
            "none of the keys in MEMLET_ENCRYPTION_KEY decrypts it (was the key changed without keeping the old one?)"
            if configured
            else "MEMLET_ENCRYPTION_KEY is not set"
        )
        super().__init__(f"Cannot decrypt the stored {what}: {reason}")


class Keyring:
    """Seals values for storage and reveals stored ones; without keys it stores plaintext."""

    def __init__(self, keys: tuple[str, ...] = ()) -> None:
        self._fernet: MultiFernet | None = None
        if keys:  # cryptography (~7 MB) loads only on a server that encrypts
            from cryptography import fernet

            self._fernet = fernet.MultiFernet([fernet.Fernet(k) for k in keys])

    @property
    def enabled(self) -> bool:
        return self._fernet is not None

    def seal(self, value: str | None) -> str | None:
        """The form to store: `fernet:<token>` when keys are configured, else the value itself."""
        if value is None:
            return None
        remember_secret(value)
        if self._fernet is None:
            return value
        return PREFIX + self._fernet.encrypt(value.encode()).decode()

    def reveal(self, stored: str | None, what: str = "secret") -> str | None:
        """The plaintext of a stored value (plaintext rows pass through)."""
        if stored is None or not stored.startswith(PREFIX):
            remember_secret(stored)
            return stored
        if self._fernet is None:
            raise SecretDecryptError(what, configured=False)
        from cryptography.fernet import InvalidToken

        try:
            value = self._fernet.decrypt(stored[len(PREFIX) :].encode()).decode()
        except InvalidToken:
            raise SecretDecryptError(what, configured=True) from None
        remember_secret(value)
        return value

    def reseal(self, stored: str | None, what: str = "secret") -> str | None:
        """A stored value written again: plaintext gets encrypted, an old key's token the first key's."""
        return self.seal(self.reveal(stored, what))

    def seal_secrets(self, secrets: list[dict[str, object]]) -> list[dict[str, object]]:
        """An agent's stored secrets list with every value sealed."""
        return [{**s, "value": self.seal(str(s.get("value") or ""))} for s in secrets]

    def reveal_secrets(self, secrets: list[dict[str, object]] | None) -> list[dict[str, object]]:
        """An agent's stored secrets list with every value in plaintext."""
        return [
            {**s, "value": self.reveal(_text(s.get("value")), f"agent secret {s.get('key')!r}")} for s in secrets or []
        ]

    def reseal_secrets(self, secrets: list[dict[str, object]] | None) -> list[dict[str, object]]:
        return self.seal_secrets(self.reveal_secrets(secrets))


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@lru_cache(maxsize=8)
def _keyring(keys: tuple[str, ...]) -> Keyring:
    return Keyring(keys)


def keyring_for(settings: Settings) -> Keyring:
    """The keyring of these settings (one per distinct key list, built once)."""
    raw = settings.encryption_key.get_secret_value() if settings.encryption_key else ""
    return _keyring(tuple(k.strip() for k in raw.split(",") if k.strip()))


def settings_secrets(settings: Settings) -> list[str]:
    """Every secret value the settings hold, for the log masker."""
    values = [settings.password]
    for name in type(settings).model_fields:  # every SecretStr setting: provider keys, the encryption keys, ...
        secret = getattr(settings, name)
        if isinstance(secret, SecretStr):
            values += secret.get_secret_value().split(",")
    if settings.pg_uri:
        values.append(urlsplit(settings.pg_uri).password)
    return [v.strip() for v in values if v and v.strip()]
