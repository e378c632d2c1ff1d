"""``memlet secrets reencrypt``: write every stored credential again with the first MEMLET_ENCRYPTION_KEY.

After a key rotation (new key first, old keys after it) this leaves no row that needs an old key, so the old
keys can then be removed; it also encrypts rows stored in clear before encryption was turned on. A maintenance
command, so its two statements live here rather than in the request-serving repositories.
"""

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.crypto import Keyring
from memlet.db import models as orm


@dataclass
class Reencrypted:
    agents: int = 0
    providers: int = 0


async def reencrypt_all(session: AsyncSession, keyring: Keyring) -> Reencrypted:
    """Reseal every agent secret and provider key (rows locked; the caller commits)."""
    if not keyring.enabled:
        raise ValueError("MEMLET_ENCRYPTION_KEY is not set: there is no key to encrypt with")
    done = Reencrypted()
    agents = await session.scalars(
        select(orm.Agent).where(func.jsonb_array_length(orm.Agent.secrets) > 0).with_for_update()
    )
    for agent in agents:
        agent.secrets = keyring.reseal_secrets(agent.secrets)
        done.agents += 1
    providers = await session.scalars(select(orm.Provider).with_for_update())
    for provider in providers:
        provider.api_key = keyring.reseal(provider.api_key, f"API key of provider {provider.name!r}")
        provider.access_key = keyring.reseal(provider.access_key, f"access key of provider {provider.name!r}")
        done.providers += 1
    await session.flush()
    return done
