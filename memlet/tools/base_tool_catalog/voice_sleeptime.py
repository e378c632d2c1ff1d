"""`letta_voice_sleeptime_core` tools: the voice sleep-time agent searches and rewrites the user memory."""

from memlet.tools.base_tool_catalog.entry import (
    LETTA_VOICE_SLEEPTIME_CORE,
    ToolEntry,
    integer_param,
    string_param,
    strings_param,
)

VOICE_SLEEPTIME_TOOLS: list[ToolEntry] = [
    ToolEntry(
        "search_memory",
        LETTA_VOICE_SLEEPTIME_CORE,
        "Search long-term and earlier conversation memory, only when the user refers to something that is not "
        "in the visible context. The user's latest message is used as the main query automatically.",
        {
            "convo_keyword_queries": strings_param("Extra keywords such as an order number or a place; null if none."),
            "start_minutes_ago": integer_param("Newest end of the time window, in minutes ago; null for no bound."),
            "end_minutes_ago": integer_param("Oldest end of the time window, in minutes ago; null for no bound."),
        },
    ),
    ToolEntry(
        "store_memories",
        LETTA_VOICE_SLEEPTIME_CORE,
        "Save the conversation lines that are about to leave the context window.",
        {
            "chunks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "start_index": integer_param("Index, from 0, of the first evicted line in the chunk."),
                        "end_index": integer_param("Index, from 0, of the last evicted line in the chunk (inclusive)."),
                        "context": string_param(
                            "One to three sentences on the facts, preferences or goals the chunk reveals, "
                            "written to be found by a later search."
                        ),
                    },
                    "required": ["start_index", "end_index", "context"],
                },
                "description": "Runs of consecutive evicted lines, each with a short summary to embed for search.",
            }
        },
        ["chunks"],
    ),
    ToolEntry(
        "rethink_user_memory",
        LETTA_VOICE_SLEEPTIME_CORE,
        "Rewrite the main agent's user memory block: keep what is still accurate, fold in new information, and "
        "leave it organised and complete.",
        {"new_memory": string_param("The full new block value; repeat the current value if nothing is new.")},
        ["new_memory"],
    ),
    ToolEntry(
        "finish_rethinking_memory",
        LETTA_VOICE_SLEEPTIME_CORE,
        "Signal that you are done rewriting memory.",
    ),
]
