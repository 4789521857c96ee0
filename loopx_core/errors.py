"""Typed errors and the documented exit codes of the `loopx` command."""

from __future__ import annotations


class ExitCode(int):
    """A process exit code: an int that carries its documented name (docs/cli.md, stable).

    Not an `IntEnum`: `enum` (with the functools and collections it loads) costs every process
    about 3 ms at start-up, and every command imports this module, each heartbeat's too. The
    codes are `EXIT_CODES` (indexed by value) and attributes of this class (`ExitCode.USAGE`).
    """

    name: str
    """The code's name in upper case (`USAGE`), as docs/cli.md lists it in lower case."""

    OK: ExitCode
    INTERNAL: ExitCode
    USAGE: ExitCode
    NOT_FOUND: ExitCode
    STATE_INVALID: ExitCode
    CONFLICT: ExitCode
    LOCK_TIMEOUT: ExitCode
    REFUSED: ExitCode
    SCHEMA_UNSUPPORTED: ExitCode
    DRIFT: ExitCode
    INVALID_IDENTITY: ExitCode
    RECEIPT_MISSING: ExitCode
    IDENTITY_MISMATCH: ExitCode
    WRITEBACK_MISSING: ExitCode
    WRITEBACK_REJECTED: ExitCode
    BUDGET_REJECTED: ExitCode
    PERMISSION_DENIED: ExitCode
    CANCELLED: ExitCode
    CLOSEOUT_REJECTED: ExitCode
    LEASE_LOST: ExitCode

    def __new__(cls, value: int, name: str) -> ExitCode:
        """The code `value` named `name`."""
        code = int.__new__(cls, value)
        code.name = name
        return code

    def __getnewargs__(self) -> tuple[int, str]:
        """What a copy or a pickle rebuilds the code from."""
        return int(self), self.name

    def __repr__(self) -> str:
        return f"<ExitCode.{self.name}: {int(self)}>"

    __str__ = int.__repr__  # str() and f-strings give the number, as an IntEnum's do


EXIT_CODES: tuple[ExitCode, ...] = tuple(
    ExitCode(value, name)
    for value, name in enumerate(
        (
            "OK",
            "INTERNAL",
            "USAGE",
            "NOT_FOUND",
            "STATE_INVALID",
            "CONFLICT",
            "LOCK_TIMEOUT",
            "REFUSED",
            "SCHEMA_UNSUPPORTED",
            "DRIFT",
            "INVALID_IDENTITY",
            "RECEIPT_MISSING",
            "IDENTITY_MISMATCH",
            "WRITEBACK_MISSING",
            "WRITEBACK_REJECTED",
            "BUDGET_REJECTED",
            "PERMISSION_DENIED",
            "CANCELLED",
            "CLOSEOUT_REJECTED",
            "LEASE_LOST",
        )
    )
)
"""Every exit code, in order: `EXIT_CODES[n]` is the code whose value is `n`."""
_NAMED = {code.name: code for code in EXIT_CODES}
for _code in EXIT_CODES:
    setattr(ExitCode, _code.name, _code)
del _code


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
        self.exit_code = _NAMED[kind.upper()]
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
