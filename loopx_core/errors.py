"""Typed errors and the documented exit codes of the `loopx` command."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """A process exit code, by its documented name (docs/cli.md, stable)."""

    OK = 0
    INTERNAL = 1
    USAGE = 2
    NOT_FOUND = 3
    STATE_INVALID = 4
    CONFLICT = 5
    LOCK_TIMEOUT = 6
    REFUSED = 7
    SCHEMA_UNSUPPORTED = 8
    DRIFT = 9
    INVALID_IDENTITY = 10
    RECEIPT_MISSING = 11
    IDENTITY_MISMATCH = 12
    WRITEBACK_MISSING = 13
    WRITEBACK_REJECTED = 14
    BUDGET_REJECTED = 15
    PERMISSION_DENIED = 16
    CANCELLED = 17
    CLOSEOUT_REJECTED = 18
    LEASE_LOST = 19


EXIT_CODES: tuple[ExitCode, ...] = tuple(ExitCode)
"""Every exit code, in order: `EXIT_CODES[n]` is the code whose value is `n`."""


class LoopxError(Exception):
    """Base of every error LoopX reports as one line and an exit code."""

    code: str = "error"
    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def to_json(self) -> dict[str, object]:
        """The JSON error object printed under `--format json`."""
        return {"error": {"code": self.code, "message": self.message, "exit_code": int(self.exit_code)}}


class UsageError(LoopxError):
    """Bad arguments: an invalid id, an unknown choice, a malformed time."""

    code = "usage"
    exit_code = ExitCode.USAGE


class NotFoundError(LoopxError):
    """A goal, agent, todo, gate or the state root itself does not exist."""

    code = "not_found"
    exit_code = ExitCode.NOT_FOUND


class StateInvalidError(LoopxError):
    """A state file is unreadable, truncated, invalid or of an unsupported schema."""

    code = "state_invalid"
    exit_code = ExitCode.STATE_INVALID

    def __init__(self, message: str, *, path: str | None = None, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.path = path


class SchemaUnsupportedError(StateInvalidError):
    """A state file has a missing, unknown or newer `schema_version`; it is left unchanged."""

    code = "schema_unsupported"
    exit_code = ExitCode.SCHEMA_UNSUPPORTED


class SettlementError(LoopxError):
    """A typed settlement refusal; `code` is the failure kind, each with its own exit code."""

    def __init__(self, kind: str, message: str, *, step: str | None = None) -> None:
        super().__init__(f"{kind}: {message}", code=kind)
        self.exit_code = ExitCode[kind.upper()]
        self.step = step

    def to_json(self) -> dict[str, object]:
        """The error object, with the refused step."""
        data = super().to_json()
        data["error"]["step"] = self.step  # type: ignore[index]
        return data


class ConflictError(LoopxError):
    """A compare-and-swap lost: the todo is claimed by someone else, or state moved."""

    code = "conflict"
    exit_code = ExitCode.CONFLICT


class LockTimeoutError(LoopxError):
    """The per-goal lock could not be taken in time."""

    code = "lock_timeout"
    exit_code = ExitCode.LOCK_TIMEOUT


class RefusedError(LoopxError):
    """A well-formed request the current state does not allow."""

    code = "refused"
    exit_code = ExitCode.REFUSED
