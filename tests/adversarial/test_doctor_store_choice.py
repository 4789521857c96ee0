"""Class: a broken `.loopx/store.json` is what `loopx doctor` reports, as every other command says.

Every command refuses a project whose store choice is unreadable or invalid with one line
that ends "`loopx doctor` reports it". The doctor used to refuse with that same line. Now it
reports it as `store_choice_invalid` (exit 9) and still runs the checks that need no store
(installation, notices). `LOOPX_STORE` stays the environment's usage error. Proved on
generated contents and on every kind of thing that is not a regular file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.errors import ExitCode
from tests.conftest import Cli, Project
from tests.non_files import KINDS, replace_with

CONTENTS = st.one_of(
    st.binary(max_size=60),
    st.builds(
        lambda store, version: json.dumps({"schema_version": version, "store": store}).encode(),
        st.one_of(st.text(max_size=20), st.integers(), st.none()),
        st.one_of(st.just(1), st.integers(-3, 9), st.text(max_size=3)),
    ),
)


def refused_line(cli: Cli) -> tuple[int, str]:
    """What `status` says of the project: its exit code and its one error line's message."""
    result = cli("status", "-f", "json")
    return result.exit_code, json.loads(result.stdout)["error"]["message"]


def doctor_finds(cli: Cli, *args: str) -> tuple[int, dict[str, object]]:
    result = cli("doctor", *args, "-f", "json")
    return result.exit_code, json.loads(result.stdout)


def check(cli: Cli, project: Project) -> None:
    code, message = refused_line(cli)
    if code == 0:  # a sound choice after all (files, or a DSN): nothing to report
        return
    assert (
        code in (ExitCode.USAGE, ExitCode.STATE_INVALID, ExitCode.SCHEMA_UNSUPPORTED) and "store" in message
    )
    exit_code, report = doctor_finds(cli)
    assert exit_code == ExitCode.DRIFT
    first = report["findings"][0]  # type: ignore[index]
    assert (first["code"], first["message"], first["subject"]) == (
        "store_choice_invalid",
        message,
        {"file": ".loopx/store.json"},
    )
    assert report["store"] == "unknown" and report["checked"] == [
        "state",
        "installation",
        "liveness",
        "notices",
    ]
    exit_code, alone = doctor_finds(cli, "--check", "notices")  # needs no store: no finding of it
    assert exit_code == 0 and alone["findings"] == []
    assert str(project.root) not in json.dumps(report)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=CONTENTS)
def test_any_store_choice_the_commands_refuse_the_doctor_reports(
    cli: Cli, project: Project, content: bytes
) -> None:
    (project.root / ".loopx" / "store.json").write_bytes(content)
    check(cli, project)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "dev-null"])
def test_a_store_choice_that_is_no_regular_file_the_doctor_reports(
    cli: Cli, project: Project, kind: str
) -> None:
    replace_with(project.root / ".loopx" / "store.json", kind)
    assert refused_line(cli)[0] == ExitCode.STATE_INVALID
    check(cli, project)


def test_a_bad_loopx_store_stays_the_environment_s_usage_error(
    cli: Cli, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOPX_STORE", "nonsense")
    result = cli("doctor", "-f", "json")
    assert result.exit_code == ExitCode.USAGE
    assert "a store is `files` or a PostgreSQL DSN" in result.stdout + result.stderr


def test_the_repair_leaves_a_broken_store_choice_to_its_owner(cli: Cli, project: Project) -> None:
    path: Path = project.root / ".loopx" / "store.json"
    path.write_text("{not json")
    exit_code, report = doctor_finds(cli, "--repair")
    assert exit_code == ExitCode.DRIFT and report["findings"][0]["status"] == "found"  # type: ignore[index]
    assert path.read_text() == "{not json"
