"""Memory blocks, agent tools, archival memory, sources / folders and files, identities and tags."""

import time
from typing import Any

from harness import Ctx, client, expect, step
from letta_client import IdentityProperty


def flows(ctx: Ctx) -> None:
    AID, tool = ctx.aid, ctx.tool
    # --- memory blocks -----------------------------------------------------------------------------------------------
    step(
        "agents.core_memory.retrieve",
        lambda: expect(len(client.agents.core_memory.retrieve(AID).blocks) == 2, "two blocks"),
    )
    step("agents.blocks.list", lambda: client.agents.blocks.list(AID))
    step("agents.blocks.retrieve", lambda: client.agents.blocks.retrieve(AID, "human"))
    step("agents.blocks.modify", lambda: client.agents.blocks.modify(AID, "human", value="The user's name is Sam Lee."))
    blk = step("blocks.create", lambda: client.blocks.create(label="notes", value="Shared notes."))
    step("blocks.list", lambda: client.blocks.list())
    step("blocks.list(label=)", lambda: client.blocks.list(label="human"))
    step("blocks.count", lambda: client.blocks.count())
    if blk is not None:
        step("blocks.retrieve", lambda: client.blocks.retrieve(blk.id))
        step("blocks.modify", lambda: client.blocks.modify(blk.id, value="Shared notes, edited."))
        step(
            "agents.blocks.attach",
            lambda: expect(len(client.agents.blocks.attach(AID, blk.id).memory.blocks) == 3, "agent with three blocks"),
        )
        step(
            "blocks.agents.list",
            lambda: expect([a.id for a in client.blocks.agents.list(blk.id)] == [AID], "the agent"),
        )
        step("agents.blocks.detach", lambda: client.agents.blocks.detach(AID, blk.id))
        step("blocks.delete", lambda: client.blocks.delete(blk.id))

    # --- agent tools -------------------------------------------------------------------------------------------------
    step("agents.tools.list", lambda: client.agents.tools.list(AID))
    if tool is not None:
        step(
            "agents.tools.detach (returns the agent to old SDKs)",
            lambda: expect(
                "roll_dice" not in [t.name for t in client.agents.tools.detach(AID, tool.id).tools],
                "agent without roll_dice",
            ),
        )
        step(
            "agents.tools.attach",
            lambda: expect(
                "roll_dice" in [t.name for t in client.agents.tools.attach(AID, tool.id).tools], "agent with roll_dice"
            ),
        )
        step(
            "agents.tools.modify_approval",
            lambda: client.agents.tools.modify_approval(AID, "roll_dice", requires_approval=False),
        )

    # --- passages (archival memory), archives ------------------------------------------------------------------------
    psg = step(
        "agents.passages.create", lambda: client.agents.passages.create(AID, text="Sam's favourite colour is teal.")
    )
    step("agents.passages.list", lambda: expect(len(client.agents.passages.list(AID)) == 1, "one passage"))
    step("agents.passages.list(search=)", lambda: client.agents.passages.list(AID, search="teal"))
    step("agents.passages.search", lambda: client.agents.passages.search(AID, query="favourite colour"))
    if psg:
        step(
            "agents.passages.modify",
            lambda: client.agents.passages.modify(AID, psg[0].id),
            letta_too="PATCH /v1/agents/{id}/archival-memory/{memory_id} is gone from Letta 0.16.8",
        )
        step("agents.passages.delete", lambda: client.agents.passages.delete(AID, psg[0].id))
    arc = step("archives.create_archive", lambda: client.archives.create_archive(name="legacy-archive"))
    step("archives.list_archives", lambda: client.archives.list_archives())
    if arc is not None:
        step("archives.modify_archive", lambda: client.archives.modify_archive(arc.id, description="edited"))

    # --- sources / folders and files ---------------------------------------------------------------------------------
    src = step(
        "sources.create", lambda: client.sources.create(name="legacy-src", embedding="openai/text-embedding-3-small")
    )
    step("sources.list", lambda: client.sources.list())
    step("sources.count", lambda: client.sources.count())
    if src is not None:
        step("sources.retrieve", lambda: client.sources.retrieve(src.id))
        step("sources.retrieve_by_name", lambda: client.sources.retrieve_by_name("legacy-src"))
        step("sources.modify", lambda: client.sources.modify(src.id, description="smoke"))
        up = step(
            "sources.files.upload",
            lambda: client.sources.files.upload(
                src.id, file=("notes.txt", b"Teal is a blue-green colour.\n", "text/plain")
            ),
        )

        def wait_files() -> Any:
            for _ in range(60):
                files = client.sources.files.list(src.id)
                if files and all(f.processing_status in ("completed", "error") for f in files):
                    expect(all(f.processing_status == "completed" for f in files), str(files))
                    return files
                time.sleep(0.5)
            raise TimeoutError("file processing")

        step("sources.files.list (poll to completed)", wait_files)
        if up is not None:
            step("sources.get_file_metadata", lambda: client.sources.get_file_metadata(src.id, up.id))
        step("sources.passages.list", lambda: expect(len(client.sources.passages.list(src.id)) >= 1, "chunks"))
        step("sources.get_sources_metadata", lambda: client.sources.get_sources_metadata())
        step("agents.sources.attach", lambda: expect(client.agents.sources.attach(AID, src.id).id == AID, "the agent"))
        step(
            "agents.sources.list",
            lambda: expect([s.id for s in client.agents.sources.list(AID)] == [src.id], "the source"),
        )
        step(
            "sources.get_agents_for_source",
            lambda: expect(client.sources.get_agents_for_source(src.id) == [AID], "the agent"),
        )
        step("agents.files.list", lambda: client.agents.files.list(AID))
        step("agents.files.close_all", lambda: client.agents.files.close_all(AID))
        step("agents.sources.detach", lambda: expect(client.agents.sources.detach(AID, src.id).id == AID, "the agent"))
        if up is not None:
            step("sources.files.delete", lambda: client.sources.files.delete(src.id, up.id))
        step("sources.delete", lambda: client.sources.delete(src.id))
    fld = step(
        "folders.create", lambda: client.folders.create(name="legacy-folder", embedding="openai/text-embedding-3-small")
    )
    step("folders.list", lambda: client.folders.list())
    step("folders.count", lambda: client.folders.count())
    if fld is not None:
        step("folders.retrieve", lambda: client.folders.retrieve(fld.id))
        step("folders.retrieve_by_name", lambda: client.folders.retrieve_by_name("legacy-folder"))
        step("folders.modify", lambda: client.folders.modify(fld.id, description="smoke"))
        fup = step(
            "folders.files.upload",
            lambda: client.folders.files.upload(fld.id, file=("a.md", b"# Title\nSome text.\n", "text/markdown")),
        )
        step("folders.files.list", lambda: client.folders.files.list(fld.id))
        step("folders.retrieve_metadata", lambda: client.folders.retrieve_metadata())
        step("agents.folders.attach", lambda: expect(client.agents.folders.attach(AID, fld.id).id == AID, "the agent"))
        step("agents.folders.list", lambda: client.agents.folders.list(AID))
        if fup is not None:
            step("agents.files.open", lambda: client.agents.files.open(AID, fup.id))
            step("agents.files.close", lambda: client.agents.files.close(AID, fup.id))
        step("agents.folders.detach", lambda: expect(client.agents.folders.detach(AID, fld.id).id == AID, "the agent"))
        if fup is not None:
            step("folders.files.delete", lambda: client.folders.files.delete(fld.id, fup.id))
        step("folders.delete", lambda: client.folders.delete(fld.id))

    # --- identities and tags -----------------------------------------------------------------------------------------
    ident = step(
        "identities.create",
        lambda: client.identities.create(identifier_key="user-1", name="Sam", identity_type="user", agent_ids=[AID]),
    )
    step("identities.list", lambda: client.identities.list())
    step("identities.count", lambda: client.identities.count())
    step(
        "identities.upsert",
        lambda: client.identities.upsert(identifier_key="user-1", name="Sam Lee", identity_type="user"),
    )
    if ident is not None:
        step("identities.retrieve", lambda: client.identities.retrieve(ident.id))
        step("identities.modify", lambda: client.identities.modify(ident.id, name="Samuel"))
        step(
            "identities.properties.upsert",
            lambda: client.identities.properties.upsert(
                ident.id, request=[IdentityProperty(key="tier", value="gold", type="string")]
            ),
        )
        step("identities.agents.list", lambda: client.identities.agents.list(ident.id))
        step("agents.list(identity_id=)", lambda: client.agents.list(identity_id=ident.id))
        step("identities.delete", lambda: client.identities.delete(ident.id))
    step("tags.list", lambda: expect({"legacy", "smoke"} <= set(client.tags.list()), "both tags"))
