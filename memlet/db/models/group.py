"""Groups: several agents under one manager pattern (round_robin, supervisor, dynamic, sleeptime, voice_sleeptime).

`groups_agents` holds the participants, in the order they were given (`position`); `groups_blocks` the blocks
shared with the group. `manager_agent_id` restricts deletion of its agent, as in Letta (a delete answers 409), except
for sleeptime groups, whose lifecycle the sleeptime code handles. `sleeptime_agent_frequency`, `turns_counter` and
`last_processed_message_id` drive sleeptime firing.
"""

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class Group(TimestampMixin, OrgScopedMixin, Base):
    __tablename__ = "groups"
    __table_args__ = (Index("ix_groups_org_created", "organization_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    manager_type: Mapped[str] = mapped_column(String)
    description: Mapped[str] = mapped_column(Text, default="")
    project_id: Mapped[str | None] = mapped_column(String, default=None)
    template_id: Mapped[str | None] = mapped_column(String, default=None)
    base_template_id: Mapped[str | None] = mapped_column(String, default=None)
    deployment_id: Mapped[str | None] = mapped_column(String, default=None, index=True)
    manager_agent_id: Mapped[str | None] = mapped_column(
        String, ForeignKey("agents.id", ondelete="RESTRICT"), default=None, index=True
    )
    termination_token: Mapped[str | None] = mapped_column(String, default=None)
    max_turns: Mapped[int | None] = mapped_column(Integer, default=None)
    sleeptime_agent_frequency: Mapped[int | None] = mapped_column(Integer, default=None)
    turns_counter: Mapped[int | None] = mapped_column(Integer, default=None)
    last_processed_message_id: Mapped[str | None] = mapped_column(String, default=None)
    max_message_buffer_length: Mapped[int | None] = mapped_column(Integer, default=None)
    min_message_buffer_length: Mapped[int | None] = mapped_column(Integer, default=None)
    hidden: Mapped[bool | None] = mapped_column(Boolean, default=None)


class GroupAgent(Base):
    """A participant of a group; `position` keeps the order of `agent_ids`."""

    __tablename__ = "groups_agents"

    group_id: Mapped[str] = mapped_column(String, ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True)
    agent_id: Mapped[str] = mapped_column(
        String, ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)


class GroupBlock(Base):
    """A block shared with a group."""

    __tablename__ = "groups_blocks"

    group_id: Mapped[str] = mapped_column(String, ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True)
    block_id: Mapped[str] = mapped_column(
        String, ForeignKey("blocks.id", ondelete="CASCADE"), primary_key=True, index=True
    )
