"""Each listed agent's JSON (all of it but its tools), kept in the process between list requests.

A page of 50 agents is ~640 KB of JSON; building its `AgentState`s and encoding them was ~2 ms of the page's ~9 ms
of server CPU, and clients list the same agents again and again. The page's statements still run every time: the
cache only spares rebuilding an agent whose inputs are all unchanged, which its key says: the `xmin` of the agent's
row version (Postgres gives every new version of a row a new one, whoever wrote it), each attached block's id and
`xmin` in attachment order, its tags and the relationships asked for. Its tools are not part of the entry: the
page encodes each of them once (`page_json.join_page`).

An agent with identities, folders, a managed group, or asked for with its secrets, is never kept: those parts come
from rows the key does not cover. Bounded by bytes (`Settings.agent_json_cache_mb`); the least recently used go. A
deleted agent is dropped at once, and a page read before its deletion does not put it back (`memlet/forgotten.py`).
"""

from collections import OrderedDict
from collections.abc import Callable, Mapping

from memlet.agents.repository import AgentLinks
from memlet.agents.views import AgentRelations
from memlet.forgotten import Forgotten

AgentKey = tuple[int, tuple[tuple[str, int], ...], tuple[str, ...], frozenset[str]]


# Relationships read from rows the key does not cover: an agent's secrets, the approval request it waits on.
_UNKEYED = frozenset({"agent.secrets", "agent.pending_approval"})


def agent_key(
    version: int, links: AgentLinks, rel: AgentRelations, block_versions: Mapping[str, int]
) -> AgentKey | None:
    """What the agent's JSON (but its tools) is built from, or None when some of it is outside the key."""
    if links.identity_ids or links.source_ids or links.manages_group or rel.include & _UNKEYED:
        return None
    blocks = tuple((b.id, block_versions[b.id]) for b in rel.blocks)
    return version, blocks, tuple(rel.tags), rel.include


class AgentJsonCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[AgentKey, bytes, bytes]] = OrderedDict()
        self._size = 0
        self.hits = 0  # agents served from the cache (for tests and benchmarks)
        self.deleted = Forgotten()

    def parts(
        self, agent_id: str, key: AgentKey | None, build: Callable[[], tuple[bytes, bytes]], since: int
    ) -> tuple[bytes, bytes]:
        """The agent's parts built from `key`: kept ones, or `build()`'s, then kept (never with no key, nor when the
        agent was deleted after `since`, the `deleted.now()` taken before the page was read)."""
        found = None if key is None else self.get(agent_id, key)
        if found is None:
            found = build()
            if key is not None and not self.deleted.since(agent_id, since):
                self.put(agent_id, key, *found)
        return found

    def get(self, agent_id: str, key: AgentKey) -> tuple[bytes, bytes] | None:
        """The agent's `page_json.agent_parts` when they were built from `key`."""
        entry = self._entries.get(agent_id)
        if entry is None or entry[0] != key:
            return None
        self._entries.move_to_end(agent_id)
        self.hits += 1
        return entry[1], entry[2]

    def put(self, agent_id: str, key: AgentKey, head: bytes, tail: bytes) -> None:
        self._drop(agent_id)
        size = len(head) + len(tail)
        if size > self.max_bytes:
            return
        self._entries[agent_id] = (key, head, tail)
        self._size += size
        while self._size > self.max_bytes:
            self._drop(next(iter(self._entries)))  # the least recently used

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self._entries

    def forget_agent(self, agent_id: str) -> None:
        """The agent was deleted: drop its entry, and keep a page read before now from putting it back."""
        self.deleted.forget(agent_id)
        self._drop(agent_id)

    def _drop(self, agent_id: str) -> None:
        """Drop the agent's entry (deleted, replaced or the least recently used)."""
        old = self._entries.pop(agent_id, None)
        if old is not None:
            self._size -= len(old[1]) + len(old[2])

    @property
    def size(self) -> int:
        return self._size
