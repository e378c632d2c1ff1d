"""In-process agent-to-agent messages: the `AgentMessenger` the multi-agent tools call (`loop/agent_messaging.py`).

The target's turn is an ordinary blocking send (`SendService.run_blocking`): a run row on the target, a slot of this
worker's turn registry, the target's request lock (waited for at most `settings.agent_message_wait_s`, then
AgentBusyError), and its messages committed like any other turn. Nothing goes through HTTP or the tool sandbox, but
the turn is the one an HTTP send would start (Letta's tools call the `/messages` route): a target with sleeptime on
tags its input with its group's id, counts the turn and fires its sleeptime agents.
"""

from memlet.loop.agent_messaging import AgentMessage
from memlet.loop.deps import LoopDeps
from memlet.messages.letta_messages import AssistantMessage
from memlet.messages.requests import LettaStreamingRequest, MessageCreate
from memlet.turns.registry import TurnRegistry
from memlet.turns.send_request import AfterTurn
from memlet.turns.sending import SendService
from memlet.turns.streaming import public_views


class InProcessMessenger:
    """Runs the targets' turns with the app's loop dependencies (whose `agent_messenger` is this object, so a
    target can message further agents)."""

    def __init__(self, deps: LoopDeps, turns: TurnRegistry, sleeptime: AfterTurn | None = None) -> None:
        self.deps = deps
        self.turns = turns
        self.sleeptime = sleeptime

    async def deliver(self, message: AgentMessage) -> list[str]:
        service = SendService(self.deps, message.actor, self.turns, sleeptime=self.sleeptime)
        service.agent_chain = message.chain
        request = LettaStreamingRequest(messages=[MessageCreate(role="system", content=message.text)])
        wait_s = self.deps.settings.agent_message_wait_s
        done = await service.run_blocking(message.target_id, request, "send_message", lock_wait_s=wait_s)
        return [_text(m) for m in public_views(done.messages, done.opts) if isinstance(m, AssistantMessage)]


def _text(message: AssistantMessage) -> str:
    """An assistant message's text: its content parts joined by newlines, as Letta's tool reads a reply."""
    if isinstance(message.content, str):
        return message.content
    return "\n".join(part.text for part in message.content)
