"""The agents a process cache dropped because they were deleted, so that a read begun before the deletion does not
put them back.

A cache of the process (`agents/json_cache.py`, `loop/window_cache.py`) fills from what a request read: the request
reads, then awaits other work, then keeps its entry. An agent deleted in between (the delete route drops it from
the caches at once) came back with that entry, which nothing would ever read or drop again but the bound: under
steady create/list/delete traffic with two clients, ~100 bytes a round that the soak saw as a slow rise. A reader
notes `now()` before it reads and keeps an entry only if `since(agent_id, tick)` is false.

Bounded: the last `keep` deletions are told apart; a read begun before the oldest of them that was let go is
answered "maybe deleted", so its entries are not kept (read again next time), never wrongly kept.
"""

from collections import OrderedDict


class Forgotten:
    def __init__(self, keep: int = 1024) -> None:
        self.keep = keep
        self._tick = 0
        self._at: OrderedDict[str, int] = OrderedDict()  # agent id -> the tick of its deletion
        self._floor = 0  # deletions at or before this tick are no longer told apart

    def now(self) -> int:
        """The tick to note before a read whose result may be kept."""
        return self._tick

    def forget(self, agent_id: str) -> None:
        """The agent was deleted now."""
        self._tick += 1
        self._at[agent_id] = self._tick
        self._at.move_to_end(agent_id)
        if len(self._at) > self.keep:
            _, self._floor = self._at.popitem(last=False)

    def since(self, agent_id: str, tick: int) -> bool:
        """Whether the agent was (or, too long ago to tell, may have been) deleted after `tick`."""
        return tick < self._floor or self._at.get(agent_id, 0) > tick
