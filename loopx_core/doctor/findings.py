"""Doctor's findings: one typed code each, its group, severity and what `--repair` does.

The table `CODES` is the reference (docs/doctor.md repeats it and a test keeps them equal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Group = Literal["state", "installation", "liveness", "notices"]
GROUPS: tuple[Group, ...] = ("state", "installation", "liveness", "notices")
Severity = Literal["low", "medium", "high"]
Status = Literal["found", "repaired", "would_repair", "repair_failed"]


@dataclass(frozen=True)
class Code:
    """A finding's type: its group, severity, and the repair (None: the owner mends it by hand)."""

    group: Group
    severity: Severity
    what: str
    repair: str | None


CODES: dict[str, Code] = {
    "state_corrupt": Code(
        "state", "high", "a goal state or scheduler file is unreadable or invalid",
        "quarantine it (moved under .loopx/quarantine/, never deleted) and restore the previous "
        "good version when one is kept; the goal stays blocked_health until then",
    ),
    "store_choice_invalid": Code(
        "state", "high",
        "`.loopx/store.json` (which store the project uses) is unreadable or invalid: the state "
        "and liveness checks need the store it names",
        None,
    ),
    "registry_corrupt": Code(
        "state", "high", "the registry is unreadable or invalid",
        "restore the previous good version when one is kept (else by hand)",
    ),
    "schema_unsupported": Code(
        "state", "high", "a file of another (newer) schema", None,
    ),
    "ledger_torn_tail": Code(
        "state", "medium", "the ledger or run history ends in a torn (unacknowledged) line",
        "cut the torn fragment off (kept under .loopx/quarantine/)",
    ),
    "ledger_invalid": Code("state", "high", "a committed ledger or run history line is invalid", None),
    "open_turn_without_journal": Code(
        "state", "high", "an agent's open turn has no journal (the agent cannot begin again)",
        "clear it from the goal (`loopx turn cancel`)",
    ),
    "orphan_journal": Code(
        "state", "low", "an open or failed turn journal no agent's open turn names",
        "stop it (`loopx turn cancel`: a tombstone, its todo lease released)",
    ),
    "lease_expired": Code(
        "state", "medium", "a todo still claimed after its lease expired, with no open turn on it",
        "release the claim (the todo is open again)",
    ),
    "not_a_file": Code(
        "state", "high",
        "a receipt index, turn journal, ledger or run history is no regular file (a FIFO, socket, "
        "device, folder, or a link to one or to nothing) or is over the size cap",
        "quarantine what is no regular file, and a receipt index of any kind (moved under "
        ".loopx/quarantine/, never deleted; the index is rebuilt); a regular file over the cap is left "
        "for its owner",
    ),
    "goal_unregistered": Code(
        "state", "high", "a goal folder under .loopx/goals/ that the registry does not name", None,
    ),
    "health_recorded": Code("state", "high", "a high health finding recorded on the goal blocks it", None),
    "facade_drift": Code(
        "installation", "medium", "an installed host facade differs from what LoopX would write",
        "re-install the facade (files edited by hand are left alone: reported as conflicts)",
    ),
    "facade_command_missing": Code(
        "installation", "high", "the `loopx` command an installed facade runs does not resolve",
        "re-install the facade with this loopx's command",
    ),
    "facade_subject_missing": Code(
        "installation", "high", "a project facade drives a goal or an agent the project no longer has", None,
    ),
    "facade_project_missing": Code(
        "installation", "high", "a user-scope facade works in a project folder that is gone", None,
    ),
    "facade_manifest_invalid": Code(
        "installation", "high", "an install manifest (the record of installed facades) is unreadable or invalid", None,
    ),
    "host_unlisted": Code(
        "installation", "medium", "a host CLI on PATH does not list the LoopX it has installed", None,
    ),
    "mcp_unavailable": Code(
        "installation", "high", "`loopx mcp serve` does not start or answer a tool call", None,
    ),
    "agent_stalled": Code(
        "liveness", "high", "an agent missed two heartbeat cadences (its owner is notified once)", None,
    ),
    "notice_undelivered": Code(
        "notices", "medium", "a notice a sink never took, after every retry",
        "re-arm its delivery and flush the outbox",
    ),
    "notice_record_invalid": Code(
        "notices", "low", "an outbox record is unreadable", "quarantine it",
    ),
    "notice_sinks_invalid": Code("notices", "high", "a notice sink file is unreadable or invalid", None),
}  # fmt: skip


@dataclass
class Finding:
    """One problem found: its code, what it is about, the message, and its repair."""

    code: str
    message: str
    subject: dict[str, str] = field(default_factory=dict)
    hint: str | None = None
    """What the owner does by hand when there is no repair (or it failed)."""
    fix: Callable[[], str] | None = None
    """The repair: does it and says what it did (None: none)."""
    plan: str | None = None
    """What this finding's repair does, when it says more than its code's (`CODES`) text."""
    status: Status = "found"
    done: str | None = None
    """What the repair did (or would do, in a dry run)."""

    def __post_init__(self) -> None:
        assert self.code in CODES, self.code

    @property
    def group(self) -> Group:
        """The check group."""
        return CODES[self.code].group

    @property
    def severity(self) -> Severity:
        """How bad it is."""
        return CODES[self.code].severity

    def to_json(self) -> dict[str, Any]:
        """As JSON data."""
        data: dict[str, Any] = {
            "code": self.code,
            "group": self.group,
            "severity": self.severity,
            "status": self.status,
            "subject": self.subject,
            "message": self.message,
            "repair": (self.plan or CODES[self.code].repair) if self.fix is not None else None,
        }
        if self.hint:
            data["hint"] = self.hint
        if self.done:
            data["done"] = self.done
        return data
