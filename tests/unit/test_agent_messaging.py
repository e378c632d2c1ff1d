"""The pure parts of the multi-agent tools: Letta's prefixes and the chain rules (cycles, depth)."""

from memlet.loop.agent_messaging import MAX_AGENT_DEPTH, chain_error
from memlet.loop.multi_agent_tools import notification, reply_request


class TestReplyRequest:
    def test_lowercase_message_is_sent_once(self) -> None:
        assert reply_request("agent-a", "hi there") == (
            "[Incoming message from agent with ID 'agent-a' - your response will be delivered to the sender] hi there"
        )

    def test_message_with_capitals_carries_a_lowercase_copy(self) -> None:
        assert reply_request("agent-a", "Hi There").endswith("] Hi There\nhi there")


def test_notification_prefix() -> None:
    assert notification("agent-a", "Done") == (
        "[Incoming message from agent with ID 'agent-a' - this is a one-way notification; if you need to respond, "
        "use an agent-to-agent messaging tool if available] Done"
    )


class TestChainError:
    def test_first_message_is_allowed(self) -> None:
        assert chain_error((), "a", "b") is None

    def test_message_to_self_is_a_cycle(self) -> None:
        assert "(a -> a)" in str(chain_error((), "a", "a"))

    def test_message_to_a_waiting_agent_is_a_cycle(self) -> None:
        assert "(a -> b -> c -> a)" in str(chain_error(("a", "b"), "c", "a"))

    def test_depth_is_limited(self) -> None:
        assert MAX_AGENT_DEPTH == 3
        assert chain_error(("a", "b"), "c", "d") is None
        assert "nested 3 deep (a -> b -> c -> d -> e)" in str(chain_error(("a", "b", "c"), "d", "e"))
