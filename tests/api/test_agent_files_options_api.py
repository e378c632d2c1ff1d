"""Import options and what a file keeps without them: secret values, a folder's own embedding config; an agent
file with no agent; the order of an export's tools and blocks."""

import json
from typing import Any

from letta_client import Letta

from tests.api.agent_files_support import MODEL, import_bytes, v2


def _secrets(client: Letta, agent_id: str) -> dict[str, Any]:
    agent = client.agents.retrieve(agent_id, include=["agent.secrets"])
    return {s.key: s.value for s in agent.secrets}


class TestSecrets:
    def test_the_files_values_stay_unless_secrets_are_sent(self, client: Letta) -> None:
        data = v2()
        values = {"API_KEY": "from-file", "EMPTY": None}
        data["agents"][0]["secrets"] = data["agents"][0]["tool_exec_environment_variables"] = values
        (kept,) = import_bytes(client, json.dumps(data).encode(), model=MODEL)
        assert _secrets(client, kept) == {"API_KEY": "from-file", "EMPTY": ""}
        sent = json.dumps({"EMPTY": "sent"})
        (replaced,) = import_bytes(client, json.dumps(data).encode(), model=MODEL, secrets=sent)
        assert _secrets(client, replaced) == {"API_KEY": "", "EMPTY": "sent"}  # as Letta: sent values replace all
