"""`loopx turn inspect-journal`: the allowlisted projection for every journal case, snapshotted.

Journals are seeded with secret-looking strings and absolute paths; no output ever shows them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from loopx_core.kernel.algebra import StepKind
from loopx_core.settlement.turns import cancel_turn, mark_failed, record_host_phases, settle
from tests.conftest import T0, Cli
from tests.turns import Turn, begun_turn

SECRET = "sk-live-9f8e7d6c5b4a3f2e1d0c"
SECRET_PATH = "/home/alice/.ssh/id_ed25519"
OTHER_KEY = "sha256:" + "ab" * 32


def _journal_path(turn: Turn, key: str | None = None) -> Path:
    return turn.store.turn_path("g", key or turn.key)


def _edit(turn: Turn, change: Callable[[dict], None], key: str | None = None) -> None:  # type: ignore[type-arg]
    path = _journal_path(turn, key)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _seed_secrets(turn: Turn, key: str) -> None:
    def add(data: dict) -> None:  # type: ignore[type-arg]
        data["host_result"] = {"output_tail": f"export TOKEN={SECRET}\ncat {SECRET_PATH}", "cwd": SECRET_PATH}
        data["cancel_reason"] = f"leaked {SECRET}"
        for phase in data["phases"]:
            phase["receipt"]["note"] = f"{SECRET} at {SECRET_PATH}"

    _edit(turn, add, key)


def _settled(turn: Turn, upto: list[StepKind]) -> None:
    ctx = turn.ctx()
    record_host_phases(ctx, {"adapter": "cli", "status": "succeeded"})
    settle(ctx, upto)


ALL = [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK, StepKind.QUOTA_SPEND]


def committed(t: Turn) -> tuple[str, str]:
    _settled(t, ALL)
    return "builder", t.key


def stopped(t: Turn) -> tuple[str, str]:
    _settled(t, [StepKind.VALIDATION])
    cancel_turn(t.store, "g", "builder", t.key, T0, "wrong approach")
    return "builder", t.key


def failed(t: Turn) -> tuple[str, str]:
    _settled(t, ALL[:2])
    mark_failed(t.store, t.journal, {"kind": "budget_rejected", "step": "quota_spend", "message": "x"}, T0)
    return "builder", t.key


def open_turn(t: Turn) -> tuple[str, str]:
    _settled(t, ALL[:2])
    return "builder", t.key


def goal_mismatch(t: Turn) -> tuple[str, str]:
    _settled(t, ALL[:1])
    _edit(t, lambda d: d.update(goal_id="elsewhere"))
    return "builder", t.key


def owner_mismatch(t: Turn) -> tuple[str, str]:
    _settled(t, ALL)
    return "other", t.key


def turn_key_mismatch(t: Turn) -> tuple[str, str]:
    _settled(t, ALL)
    shutil.copy(_journal_path(t), _journal_path(t, OTHER_KEY))
    return "builder", OTHER_KEY


def non_prefix_phases(t: Turn) -> tuple[str, str]:
    _settled(t, ALL)
    _edit(t, lambda d: d.update(phases=[p for p in d["phases"] if p["phase"] != "validation"]))
    return "builder", t.key


def unknown_phase(t: Turn) -> tuple[str, str]:
    _settled(t, ALL[:1])
    _edit(
        t,
        lambda d: d["phases"].append(
            {"phase": f"exfiltrate-{SECRET}", "at": "2026-11-29T12:00:00Z", "receipt": {}}
        ),
    )
    return "builder", t.key


def unsupported_status(t: Turn) -> tuple[str, str]:
    _settled(t, ALL)
    _edit(t, lambda d: d.update(status=f"weird-{SECRET}"))
    return "builder", t.key


CASES = {
    f.__name__: f
    for f in (
        committed,
        stopped,
        failed,
        open_turn,
        goal_mismatch,
        owner_mismatch,
        turn_key_mismatch,
        non_prefix_phases,
        unknown_phase,
        unsupported_status,
    )
}


@pytest.fixture
def turn(tmp_path: Path) -> Turn:
    return begun_turn(tmp_path / "p")


def inspect(cli: Cli, agent: str, key: str, fmt: str) -> object:
    return cli("turn", "inspect-journal", "-g", "g", "-a", agent, "-k", key, "-f", fmt)


@pytest.mark.parametrize("case", sorted(CASES))
def test_inspection(
    turn: Turn, case: str, monkeypatch: pytest.MonkeyPatch, snapshot_json, snapshot_md
) -> None:
    agent, key = CASES[case](turn)
    _seed_secrets(turn, key)
    cli = Cli(turn.store.root, monkeypatch)
    as_json = inspect(cli, agent, key, "json")
    as_md = inspect(cli, agent, key, "markdown")
    assert as_json.exit_code == as_md.exit_code == 0, as_json.stderr  # type: ignore[attr-defined]
    projection = as_json.json()  # type: ignore[attr-defined]
    assert set(projection) == {
        "schema",
        "decision",
        "journal_status",
        "replay_legal",
        "goal_matches",
        "owner_matches",
        "turn_key_matches",
        "phases_form_ordered_prefix",
        "completed_phases",
        "tombstone_retained",
        "violations",
        "effects",
    }
    assert projection["effects"] == []
    assert projection["decision"] == ("replay_legal" if projection["replay_legal"] else "replay_blocked")
    for text in (as_json.stdout, as_json.stderr, as_md.stdout, as_md.stderr):  # type: ignore[attr-defined]
        assert SECRET not in text and "/home/alice" not in text and str(turn.store.root) not in text
    assert projection == snapshot_json
    assert as_md.stdout == snapshot_md  # type: ignore[attr-defined]


def test_expected_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    verdicts = {}
    for name, build in CASES.items():
        t = begun_turn(tmp_path / name)
        agent, key = build(t)
        verdicts[name] = inspect(Cli(t.store.root, monkeypatch), agent, key, "json").json()  # type: ignore[attr-defined]
    assert {n for n, v in verdicts.items() if v["replay_legal"]} == {"committed", "failed", "open_turn"}
    assert verdicts["stopped"]["violations"] == ["turn_stopped"]
    assert verdicts["goal_mismatch"]["violations"] == ["goal_mismatch"]
    assert verdicts["owner_mismatch"]["violations"] == ["owner_mismatch"]
    assert verdicts["turn_key_mismatch"]["violations"] == ["turn_key_mismatch"]
    assert verdicts["non_prefix_phases"]["violations"] == ["phases_not_ordered_prefix"]
    assert verdicts["unknown_phase"]["violations"] == ["unknown_phase", "phases_not_ordered_prefix"]
    assert verdicts["unsupported_status"]["violations"] == ["unsupported_status"]
    assert verdicts["unsupported_status"]["journal_status"] == "unsupported"
    assert all(
        v["tombstone_retained"] for n, v in verdicts.items() if n in ("committed", "stopped", "failed")
    )


@pytest.mark.parametrize(
    ("setup", "args", "code"),
    [
        ("none", ["-k", "sha256:" + "0" * 64], 3),
        ("malformed", [], 4),
        ("truncated", [], 4),
        ("schema", [], 8),
        ("none", ["-k", "sha256:xyz"], 2),
        ("none", ["-k", "../../etc/passwd"], 2),
        ("none", ["-k", "SHA256:" + "A" * 64], 2),
    ],
)
def test_selector_and_file_errors(
    turn: Turn, monkeypatch: pytest.MonkeyPatch, setup: str, args: list[str], code: int
) -> None:
    path = _journal_path(turn)
    if setup == "malformed":
        path.write_text(f'{{"secret": "{SECRET}", oops')
    elif setup == "truncated":
        path.write_bytes(path.read_bytes()[:50])
    elif setup == "schema":
        _edit(turn, lambda d: d.update(schema_version=7, host_result={"token": SECRET}))
    cli = Cli(turn.store.root, monkeypatch)
    key_args = args or ["-k", turn.key]
    for fmt in ("json", "markdown"):
        result = cli("turn", "inspect-journal", "-g", "g", "-a", "builder", *key_args, "-f", fmt)
        assert result.exit_code == code, result.stderr
        assert result.stderr.count("\n") == 1
        assert SECRET not in result.stdout + result.stderr and str(turn.store.root) not in result.stderr


def test_inspection_reads_no_path_argument(cli: Cli) -> None:
    result = cli("turn", "inspect-journal", "--help")
    assert "--journal-path" not in result.stdout and "--path" not in result.stdout
