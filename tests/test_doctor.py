"""`loopx doctor`: one scenario per finding type, its JSON and Markdown output snapshotted; the
repairs quarantine (never delete), restore the previous good version, and end in health."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import T0_ISO, Cli, Project

LATER = "2026-11-29T13:00:00Z"


def _goal(cli: Cli) -> None:
    for args in (
        ["goal", "add", "-g", "g", "-o", "Ship"],
        ["agent", "register", "-a", "a", "-c", "py"],
        ["todo", "add", "-g", "g", "--title", "Write it", "-c", "py"],
    ):
        assert cli(*args).exit_code == 0, (args, cli(*args).stderr)


def _begin(cli: Cli) -> str:
    packet = cli("quota", "should-run", "-g", "g", "-a", "a").json()
    result = cli(
        "turn",
        "begin",
        "-g",
        "g",
        "-a",
        "a",
        "-t",
        "t1",
        "--turn-instance-id",
        packet["settlement_plan"]["identity"]["turn_instance_id"],
    )  # type: ignore[index]
    assert result.exit_code == 0, result.stderr
    return str(packet["settlement_plan"]["turn_key"])  # type: ignore[index]


def _state(p: Project) -> Path:
    return p.root / ".loopx/goals/g/state.json"


def _edit_state(p: Project, change: Callable[[dict], None]) -> None:  # type: ignore[type-arg]
    data = json.loads(_state(p).read_text())
    change(data)
    _state(p).write_text(json.dumps(data, indent=2))


def _orphan(cli: Cli, p: Project) -> None:
    _begin(cli)
    _edit_state(p, lambda d: d.update(open_turns={}))


def _undelivered(cli: Cli, p: Project) -> None:
    cli("notify", "add", "file://notices.jsonl")
    cli("gate", "open", "-g", "g", "--title", "Licence?")
    [record] = (p.root / ".loopx/notices/events").glob("n-*.json")
    data = json.loads(record.read_text())
    data["deliveries"]["s1"] = {
        "status": "failed",
        "attempts": 12,
        "last_error": "cannot append to notices.jsonl: Is a directory",
    }
    record.write_text(json.dumps(data))


def _install(cli: Cli, p: Project, *extra: str) -> None:
    args = ["workflow-skills", "--install", "--surface", "codex-app", *extra]
    assert cli(*args).exit_code == 0


def _drift(cli: Cli, p: Project) -> None:
    _install(cli, p, "--target", str(p.root))
    skill = p.root / ".agents/skills/loopx/SKILL.md"
    skill.write_text(skill.read_text() + "\nmy own line\n")


def _unlisted(cli: Cli, p: Project) -> None:
    _install(cli, p, "--scope", "user", "-g", "g", "-a", "a")
    fake = p.root / "bin" / "codex"  # a Codex CLI on PATH whose config lists no LoopX
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho '{}'\n")
    fake.chmod(0o755)


SCENARIOS: dict[str, tuple[Callable[[Cli, Project], object], list[str]]] = {
    "healthy": (lambda cli, p: None, []),
    "state_corrupt": (lambda cli, p: _state(p).write_text('{"schema_version": 1, "goal_id": "g", "todos": ['), ["state"]),
    "state_corrupt_scheduler": (lambda cli, p: (p.root / ".loopx/goals/g/scheduler.json").write_text("{bad"), ["state"]),
    "registry_corrupt": (lambda cli, p: (p.root / ".loopx/registry.json").write_text('{"schema_version": 1, "goals": {'), ["state"]),
    "schema_unsupported": (lambda cli, p: _edit_state(p, lambda d: d.update(schema_version=99)), ["state"]),
    "ledger_torn_tail": (lambda cli, p: (p.root / ".loopx/goals/g/events.jsonl").write_bytes(b'{"seq": 1, "kin'), ["state"]),
    "ledger_invalid": (lambda cli, p: (p.root / ".loopx/goals/g/events.jsonl").write_bytes(b"{garbage}\n"), ["state"]),
    "open_turn_without_journal": (lambda cli, p: [f.unlink() for f in (p.root / ".loopx/goals/g/turns").glob("*.json")] if _begin(cli) else None, ["state"]),
    "orphan_journal": (_orphan, ["state"]),
    "lease_expired": (lambda cli, p: cli("todo", "claim", "-g", "g", "-t", "t1", "-a", "a", "--lease-minutes", "5"), ["state"]),
    "health_recorded": (lambda cli, p: cli("health", "add", "-g", "g", "--code", "disk-full", "-m", "the disk is full"), ["state"]),
    "agent_stalled": (lambda cli, p: cli("agent", "register", "-a", "a", "-c", "py", "--cadence-minutes", "10"), ["liveness"]),
    "notice_undelivered": (_undelivered, ["notices"]),
    "facade_drift": (_drift, ["installation"]),
    "facade_command_missing": (lambda cli, p: _install(cli, p, "--target", str(p.root), "--loopx-command", "loopx-gone-missing"), ["installation"]),
    "mcp_unavailable": (lambda cli, p: _install(cli, p, "--target", str(p.root), "--loopx-command", "false"), ["installation"]),
    "host_unlisted": (_unlisted, ["installation"]),
    "facade_manifest_invalid": (lambda cli, p: (_install(cli, p, "--target", str(p.root)), (p.root / ".loopx/facades.json").write_text("{garbage")), ["installation"]),
    "notice_record_invalid": (lambda cli, p: ((p.root / ".loopx/notices/events").mkdir(parents=True), (p.root / ".loopx/notices/events/n-000000000000000000000000.json").write_text("{")), ["notices"]),
    "notice_sinks_invalid": (lambda cli, p: ((p.root / ".loopx/notices").mkdir(), (p.root / ".loopx/notices/sinks.json").write_text('{"schema_version": 2}')), ["notices"]),
}  # fmt: skip


def doctor(cli: Cli, groups: list[str], *extra: str, fmt: str = "json", now: str = LATER) -> tuple[int, str]:
    args = ["doctor", *[w for g in groups for w in ("--check", g)], *extra, "-f", fmt]
    result = cli(*args, now=now)
    assert "Traceback" not in result.stderr and result.stderr.count("\n") <= 1, result.stderr
    return result.exit_code, result.stdout


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_doctor_finding(
    name: str, cli: Cli, project: Project, monkeypatch: pytest.MonkeyPatch, snapshot_json, snapshot_md
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LOOPX_NOTIFY_FLUSH", "off")
    monkeypatch.setenv("PATH", f"{project.root / 'bin'}{os.pathsep}{os.environ['PATH']}")
    _goal(cli)
    setup, groups = SCENARIOS[name]
    setup(cli, project)
    code, out = doctor(cli, groups)
    report = json.loads(out)
    assert str(project.root) not in out
    expected = name.removesuffix("_scheduler")
    if name == "healthy":
        assert code == 0 and report["healthy"] and report["findings"] == []
    else:
        assert code == 9 and expected in {f["code"] for f in report["findings"]}, report
    assert report == snapshot_json
    assert doctor(cli, groups, fmt="markdown")[1] == snapshot_md


@pytest.mark.parametrize(
    "name",
    [
        "state_corrupt_scheduler",
        "ledger_torn_tail",
        "open_turn_without_journal",
        "orphan_journal",
        "lease_expired",
        "notice_record_invalid",
    ],
)
def test_repair_mends_and_a_second_look_is_healthy(
    name: str, cli: Cli, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOPX_NOTIFY_FLUSH", "off")
    _goal(cli)
    setup, groups = SCENARIOS[name]
    setup(cli, project)
    before = _files(project.root)
    code, out = doctor(cli, groups, "--repair", "--dry-run")
    assert code == 9 and {f["status"] for f in json.loads(out)["findings"]} == {"would_repair"}
    assert _files(project.root) == before  # a dry run changes nothing
    code, out = doctor(cli, groups, "--repair")
    assert code == 0 and json.loads(out)["summary"]["remaining"] == 0, out
    assert doctor(cli, groups)[0] == 0
    if name != "lease_expired":
        assert cli("quota", "should-run", "-g", "g", "-a", "a", now=LATER).exit_code == 0


def _files(root: Path) -> dict[str, bytes]:
    base = root / ".loopx"
    return {
        str(p.relative_to(base)): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file() and "locks" not in p.parts
    }


def test_a_corrupt_state_is_quarantined_never_deleted_and_the_previous_version_restored(
    cli: Cli, project: Project
) -> None:
    _goal(cli)
    good = _state(project).read_bytes()
    (project.root / ".loopx/goals/g/state.json.prev").write_bytes(good)  # as a store that keeps it would
    _state(project).write_bytes(b"\x00garbage")
    assert cli("quota", "should-run", "-g", "g", "-a", "a").exit_code == 4
    code, out = doctor(cli, ["state"], "--repair")
    assert code == 0, out
    [finding] = json.loads(out)["findings"]
    assert finding["status"] == "repaired" and "restored the previous good version" in finding["done"]
    [kept] = (project.root / ".loopx/quarantine").rglob("state.json")
    assert kept.read_bytes() == b"\x00garbage"
    restored = json.loads(_state(project).read_text())
    assert restored["version"] == json.loads(good)["version"] + 2
    assert cli("quota", "should-run", "-g", "g", "-a", "a").json()["decision"] == "run"  # type: ignore[index]


def test_without_a_previous_version_the_goal_stays_blocked(cli: Cli, project: Project) -> None:
    _goal(cli)
    _state(project).with_name("state.json.prev").unlink(missing_ok=True)  # the store keeps one: take it away
    _state(project).write_bytes(b"{")
    code, out = doctor(cli, ["state"], "--repair")
    assert code == 0 and "stays blocked_health" in json.loads(out)["findings"][0]["done"]
    assert list((project.root / ".loopx/quarantine").rglob("state.json"))
    packet = cli("quota", "should-run", "-g", "g", "-a", "a")
    assert packet.exit_code == 4 and packet.json()["interaction_contract"]["cli_channel"][
        "next_cli_actions"
    ] == ["loopx doctor --repair"]  # type: ignore[index]
    assert doctor(cli, ["state"], "--repair")[0] == 9  # nothing more it can do: reported, nothing changed


def test_an_unsupported_schema_is_left_alone(cli: Cli, project: Project) -> None:
    _goal(cli)
    _edit_state(project, lambda d: d.update(schema_version=99))
    before = _state(project).read_bytes()
    assert doctor(cli, ["state"], "--repair")[0] == 9
    assert _state(project).read_bytes() == before and not (project.root / ".loopx/quarantine").exists()


def test_notice_repair_re_arms_and_delivers(
    cli: Cli, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOPX_NOTIFY_FLUSH", "off")
    _goal(cli)
    _undelivered(cli, project)
    code, out = doctor(cli, ["notices"], "--repair")
    assert code == 0, out
    lines = (project.root / "notices.jsonl").read_text().splitlines()
    assert [json.loads(x)["kind"] for x in lines] == ["gate_opened"]


def test_facade_findings_and_repairs(cli: Cli, project: Project) -> None:
    _goal(cli)
    os.environ.pop("LOOPX_NOW", None)
    install = cli(
        "workflow-skills",
        "--install",
        "--surface",
        "codex-app",
        "--target",
        str(project.root),
        "--loopx-command",
        "loopx-gone-missing",
    )
    assert install.exit_code == 0, install.stderr
    code, out = doctor(cli, ["installation"])
    report = json.loads(out)
    assert code == 9 and [f["code"] for f in report["findings"]] == ["facade_command_missing"], out
    code, out = doctor(cli, ["installation"], "--repair")
    assert code == 0 and json.loads(out)["findings"][0]["status"] == "repaired", out
    assert doctor(cli, ["installation"])[0] == 0  # the re-installed facade runs this loopx; MCP answers
    agents = project.root / ".agents/skills/loopx/SKILL.md"
    agents.write_text(agents.read_text() + "\nmy own line\n")
    code, out = doctor(cli, ["installation"])
    assert code == 9 and json.loads(out)["findings"][0]["code"] == "facade_drift", out


def test_a_user_scope_facade_checked_from_another_folder_is_not_drift(cli: Cli, project: Project) -> None:
    """The automation's `cwds` name the project: doctor checks it against `--root`, not its own cwd."""
    _goal(cli)
    _install(cli, project, "--scope", "user", "-g", "g", "-a", "a")
    code, out = doctor(cli, ["installation"])
    assert code == 0 and json.loads(out)["findings"] == [], out


def test_mcp_unavailable_is_a_finding() -> None:
    from loopx_core.doctor.installation import mcp_problem

    problem = mcp_problem(Path("."), "false")
    assert problem is not None and problem.startswith("`loopx mcp serve`"), problem


def test_doctor_refuses_in_one_line(cli: Cli, tmp_path: Path) -> None:
    assert cli("doctor", "--check", "bogus").exit_code == 2
    from tests.conftest import run_loopx

    bare = run_loopx("doctor", root=tmp_path / "nowhere", now=T0_ISO)
    assert bare.exit_code == 3 and bare.stderr.count("\n") == 1, bare.stderr


def test_every_code_is_documented() -> None:
    from loopx_core.doctor.findings import CODES
    from tests.conftest import REPO

    text = (REPO / "docs/doctor.md").read_text()
    for code in CODES:
        assert f"| `{code}` |" in text, code


def test_doctor_says_which_store_is_in_use(cli: Cli, project: Project) -> None:
    code, out = doctor(cli, ["state"])
    assert (code, json.loads(out)["store"]) == (0, "files")


@pytest.mark.parametrize(
    "damage",
    ["garbage", "a folder", "a dangling link", "a newer schema", "empty", "a list"],
)
def test_any_damaged_install_manifest_is_a_finding(cli: Cli, project: Project, damage: str) -> None:
    _goal(cli)
    _install(cli, project, "--target", str(project.root))
    manifest = project.root / ".loopx/facades.json"
    data = json.loads(manifest.read_text())
    manifest.unlink()
    if damage == "a folder":
        manifest.mkdir()
    elif damage == "a dangling link":
        manifest.symlink_to(project.root / "nowhere.json")
    else:
        text = {"garbage": "{garbage", "empty": "", "a list": "[]"}.get(damage)
        manifest.write_text(text if text is not None else json.dumps({**data, "schema_version": 99}))
    code, out = doctor(cli, ["installation"])
    findings = json.loads(out)["findings"]
    assert code == 9 and [f["code"] for f in findings][:1] == ["facade_manifest_invalid"], out
    assert findings[0]["subject"] == {"scope": "project"} and str(project.root) not in out
