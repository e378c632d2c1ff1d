"""All ORM models. Import this package (not single modules) so every table is registered on the metadata."""

from memlet.db.models.agent import Agent, AgentTag
from memlet.db.models.block import Block, BlockAgent
from memlet.db.models.conversation import Conversation, ConversationBlock, ConversationMessage
from memlet.db.models.folder import FileAgent, FileContent, FileMetadata, Source, SourceAgent
from memlet.db.models.group import Group, GroupAgent, GroupBlock
from memlet.db.models.identity import Identity, IdentityAgent, IdentityBlock
from memlet.db.models.job import BatchItem, Job
from memlet.db.models.mcp import MCPOAuthSession, MCPServer
from memlet.db.models.message import Message, MessageEmbedding
from memlet.db.models.org import Organization, User
from memlet.db.models.passage import Archive, ArchiveAgent, Passage
from memlet.db.models.provider import Provider
from memlet.db.models.provider_trace import ProviderTrace
from memlet.db.models.queued_run import QueuedRun
from memlet.db.models.run import Run, RunChunk, Step
from memlet.db.models.tool import Tool, ToolAgent

__all__ = [
    "Agent",
    "AgentTag",
    "Archive",
    "ArchiveAgent",
    "BatchItem",
    "Block",
    "BlockAgent",
    "Conversation",
    "ConversationBlock",
    "ConversationMessage",
    "FileAgent",
    "FileContent",
    "FileMetadata",
    "Group",
    "GroupAgent",
    "GroupBlock",
    "Identity",
    "IdentityAgent",
    "IdentityBlock",
    "Job",
    "MCPOAuthSession",
    "MCPServer",
    "Message",
    "MessageEmbedding",
    "Organization",
    "Passage",
    "Provider",
    "ProviderTrace",
    "QueuedRun",
    "Run",
    "RunChunk",
    "Source",
    "SourceAgent",
    "Step",
    "Tool",
    "ToolAgent",
    "User",
]
