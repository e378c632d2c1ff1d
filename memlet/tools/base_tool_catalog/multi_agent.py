"""`letta_multi_agent_core` tools: messages to other agents, one by id or many by tags."""

from memlet.tools.base_tool_catalog.entry import (
    ANOTHER_AGENT,
    LETTA_MULTI_AGENT_CORE,
    ToolEntry,
    string_param,
    strings_param,
)

MULTI_AGENT_TOOLS: list[ToolEntry] = [
    ToolEntry(
        "send_message_to_agent_and_wait_for_reply",
        LETTA_MULTI_AGENT_CORE,
        "Send a message to another Letta agent in the same organization and wait for its reply. Your identity "
        "is attached automatically, so no introduction is needed.",
        {"message": string_param("The message for the other agent."), "other_agent_id": string_param(ANOTHER_AGENT)},
        ["message", "other_agent_id"],
    ),
    ToolEntry(
        "send_message_to_agents_matching_tags",
        LETTA_MULTI_AGENT_CORE,
        "Send a message to every agent in the organization that has all tags in match_all and at least one tag "
        "in match_some, and collect their replies.",
        {
            "message": string_param("The message for each matching agent."),
            "match_all": strings_param("Tags an agent must all have."),
            "match_some": strings_param("Tags of which an agent must have at least one."),
        },
        ["message", "match_all", "match_some"],
    ),
    ToolEntry(
        "send_message_to_agent_async",
        LETTA_MULTI_AGENT_CORE,
        "Send a message to another Letta agent in the same organization without waiting for a reply, e.g. a "
        "notification. Your identity is attached automatically.",
        {"message": string_param("The message for the other agent."), "other_agent_id": string_param(ANOTHER_AGENT)},
        ["message", "other_agent_id"],
    ),
]
