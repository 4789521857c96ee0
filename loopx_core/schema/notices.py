"""The files of the notice outbox and the sink configuration, each with `schema_version`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loopx_core.models.constants import NoticeKind
from loopx_core.schema.common import Id, StrictModel, Time
from loopx_core.schema.domain import Count


class Notice(StrictModel):
    """One event for the owner; `notice_id` is stable, so the same event is queued once."""

    notice_id: str = Field(pattern=r"^n-[0-9a-f]{24}$")
    kind: NoticeKind
    goal_id: Id | None = None
    agent_id: Id | None = None
    title: str
    body: str
    at: Time
    subject: dict[str, str] = Field(default_factory=dict)
    """What the event is about (gate_id, todo_id, capability, finding, ...)."""


class Delivery(StrictModel):
    """One sink's delivery of one notice."""

    status: Literal["pending", "delivered", "failed"] = "pending"
    """`failed`: given up after the last attempt (doctor reports it; `--repair` re-arms it)."""
    attempts: Count = 0
    next_attempt_at: Time | None = None
    delivered_at: Time | None = None
    last_error: str | None = None


class OutboxRecord(StrictModel):
    """`.loopx/notices/events/<notice_id>.json`: the notice and its delivery to each sink."""

    schema_version: Literal[1]
    notice: Notice
    deliveries: dict[Id, Delivery] = Field(default_factory=dict)


class SinkConfig(StrictModel):
    """A configured sink: where to send, and which notices."""

    sink_id: Id
    url: str
    goal_id: Id | None = None
    """Only this goal's notices (None: every goal's)."""
    events: list[NoticeKind] = Field(default_factory=list)
    """Only these events (empty: every event)."""
    added_at: Time


class SinkFile(StrictModel):
    """`.loopx/notices/sinks.json` (project) or `~/.config/loopx/notices.json` (user)."""

    schema_version: Literal[1]
    next_number: Count = 1
    sinks: list[SinkConfig] = Field(default_factory=list)
