"""An agent's attached files as the read-only blocks of ``Memory.file_blocks`` (``AgentState.memory`` and the
deprecated ``GET /v1/agents/{id}/core-memory``), as Letta 0.16.8 shows them.

Each file the agent sees is one block labelled with its file name: an open file's window of numbered lines, cut to the
agent's per-file character limit (that limit is also the block's), a closed file an empty value. Letta builds these
blocks anew for every response, each with a fresh block id; so does memlet.
"""

from collections.abc import Sequence

from memlet.blocks.schemas import FileBlock
from memlet.db import models as orm
from memlet.folders.agent_files import file_limits
from memlet.folders.line_view import truncate_view


def file_blocks(agent: orm.Agent, links: Sequence[orm.FileAgent]) -> list[FileBlock]:
    _, char_limit = file_limits(agent)
    return [
        FileBlock(
            value=truncate_view(link.visible_content, link.is_open, char_limit),
            limit=char_limit,
            label=link.file_name,
            read_only=True,
            file_id=link.file_id,
            source_id=link.source_id,
            is_open=link.is_open,
            last_accessed_at=link.last_accessed_at,
        )
        for link in links
    ]
