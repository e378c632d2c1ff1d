"""The hook the multi-agent tools use to run a turn on another agent, and the rules that keep those turns safe.

The tools (`loop/multi_agent_tools.py`) run inside the sender's turn, which holds the sender's request lock. The
target's turn is driven by `turns/`, above the loop, so the loop only defines the `AgentMessenger` protocol;
`turns/deps.get_loop_deps` puts the implementation (`turns/agent_messaging.InProcessMessenger`) on
`LoopDeps.agent_messenger`, and the target's turn is an ordinary run of the loop on the target.

A turn started by a tool carries the chain of agents waiting on it (`RunOptions.agent_chain`, outermost first).
Each of them holds its own lock until the reply comes back, so a message to any agent in the chain could never be
answered: it is refused at once, as is a chain deeper than `MAX_AGENT_DEPTH`.
"""

from dataclasses import dataclass
from typing import Protocol

from memlet.actor import Actor

# The longest chain of agents waiting on each other (A asks B asks C asks D; D may not ask anyone).
MAX_AGENT_DEPTH = 3


@dataclass(frozen=True)
class AgentMessage:
    """One agent-to-agent message: `text` (already prefixed) for `target_id`, sent in the name of `actor`."""

    actor: Actor
    target_id: str
    text: str
    # The agents waiting on the target's turn, outermost first; the sender is last.
    chain: tuple[str, ...]


class AgentMessenger(Protocol):
    """Run one turn on `message.target_id` with `message.text` as its input (a `system` message) and return the
    texts of its assistant messages. Raises MemletError when the target is unknown, busy past a bounded wait, or
    the server is full."""

    async def deliver(self, message: AgentMessage) -> list[str]: ...


def chain_error(chain: tuple[str, ...], sender_id: str, target_id: str) -> str | None:
    """Why `sender_id` (whose turn `chain` waits on) may not wait for a turn of `target_id`, or None."""
    path = [*chain, sender_id]
    if target_id in path:
        loop = " -> ".join([*path[path.index(target_id) :], target_id])
        return (
            f"Agent {target_id} is waiting for this agent's reply ({loop}), so it cannot answer a message now; "
            "reply to it instead."
        )
    if len(path) > MAX_AGENT_DEPTH:
        return (
            f"Agent-to-agent messages may only be nested {MAX_AGENT_DEPTH} deep "
            f"({' -> '.join(path)} -> {target_id}); answer your sender instead."
        )
    return None
