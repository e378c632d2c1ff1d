"""Folder listings as Letta 0.16.8 filters them."""

import httpx
from letta_client import Letta

from tests.api.test_folders_api import make_folder


class TestListFolders:
    def test_name_keeps_folders_whose_name_holds_it_in_any_case(self, client: Letta, http: httpx.Client) -> None:
        for name in ("Team Docs", "docs-archive", "notes"):
            make_folder(client, name=name)
        assert [f.name for f in client.folders.list(name="DOCS")] == ["Team Docs", "docs-archive"]
        assert [f.name for f in client.folders.list(name="_")] == []  # LIKE wildcards are plain characters
        # The deprecated listing takes no parameters, as in Letta: a name filters nothing there.
        listed = http.get("/v1/sources/", params={"name": "notes"}).json()
        assert [s["name"] for s in listed] == ["Team Docs", "docs-archive", "notes"]
