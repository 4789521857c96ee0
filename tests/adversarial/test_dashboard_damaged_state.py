"""Class: a damaged state file makes a dashboard page or action crash, 500, or half-write.

For any state file of a project (registry, a goal's state and its `.prev`, ledger, receipts,
run index, a run record, a turn journal, a heartbeat, the folders themselves) and any
damage to it (truncated, garbage, torn tail, empty, a newer schema, JSON of the wrong shape,
deleted, a folder in its place, a dangling or looping symlink), every page answers a page (200
with the error in place, or the error's own page) and every owner action answers exactly the
status its CLI twin's exit code maps to (`app.HTTP_STATUS`); never a 500, a traceback or an
absolute path; and a refused action leaves every file as it was.
Found: a garbage run index made the goal page a 500 (UndefinedError in the template); a
damaged or newer state file made every action a 500 (now 409, exit 4 and 8).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.dashboard.app import HTTP_STATUS, create_app
from loopx_core.dashboard.security import Guard
from loopx_core.errors import EXIT_CODES, ExitCode, LoopxError
from loopx_core.store.files import FileStore
from tests.browser import T0_ISO, asgi, fleet, signed_in
from tests.conftest import Cli

TOKEN = "d" * 24
TARGETS = [
    "registry.json",
    "goals/parser/state.json",
    "goals/parser/state.json.prev",
    "goals/parser/events.jsonl",
    "goals/parser/receipts.json",
    "goals/parser/runs/index.jsonl",
    "goals/parser/runs/run-*.json",
    "goals/parser/turns/*.json",
    "heartbeats/builder.json",
    "goals/parser",
    "goals/parser/runs",
    "goals/parser/turns",
    "heartbeats",
]
PAGES = ["/", "/goals/parser", "/agents", "/goals/docs"]
ACTIONS: dict[str, tuple[dict[str, str], list[str]]] = {
    "pause": ({}, ["goal", "stop", "-g", "parser"]),
    "resolve-gate": (
        {"gate_id": "api-review"},
        ["gate", "resolve", "-g", "parser", "--gate-id", "api-review"],
    ),
    "clear-finding": ({"code": "slow-ci"}, ["health", "clear", "-g", "parser", "--code", "slow-ci"]),
    "add-todo": (
        {"title": "After the damage"},
        ["todo", "add", "-g", "parser", "--title", "After the damage"],
    ),
    "grant": (
        {"agent_id": "builder", "capability": "gpu"},
        ["agent", "register", "-a", "builder", "-c", "python", "-c", "gpu"],
    ),
    "rescope": (
        {"todo_id": "t10", "capabilities": "python"},
        ["todo", "update", "-g", "parser", "-t", "t10", "-c", "python"],
    ),
}


def _write(path: Path, data: bytes) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.write_bytes(data)


def _newer(path: Path) -> None:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    if isinstance(doc, dict):
        doc["schema_version"] = 99
        path.write_text(json.dumps(doc))


def _replace(path: Path, make: Callable[[Path], None]) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    make(path)


DAMAGES: dict[str, Callable[[Path, bytes, float], None]] = {
    "truncated": lambda p, _, f: p.is_file() and _write(p, p.read_bytes()[: int(len(p.read_bytes()) * f)]),
    "garbage": lambda p, junk, _: _write(p, junk),
    "torn tail": lambda p, junk, _: p.is_file() and _write(p, p.read_bytes() + b'{"seq": 9' + junk),
    "empty": lambda p, _, __: _write(p, b""),
    "newer schema": lambda p, _, __: p.is_file() and _newer(p),
    "wrong shape": lambda p, junk, f: _write(
        p, [b"[]", b"null", b"{}", b'"x"', b'{"schema_version": 1}'][int(f * 4.99)]
    ),
    "deleted": lambda p, _, __: _replace(p, lambda q: None),
    "a folder": lambda p, _, __: _replace(p, lambda q: q.mkdir()),
    "dangling symlink": lambda p, _, __: _replace(p, lambda q: q.symlink_to(q.parent / "gone-away")),
    "symlink loop": lambda p, _, __: _replace(p, lambda q: q.symlink_to(q.name)),
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root: Path = tmp_path_factory.mktemp("pristine")
    fleet(FileStore(root))
    yield root


def damaged_copy(pristine: Path, into: Path, target: str, damage: str, junk: bytes, fraction: float) -> Path:
    root = into / "project"
    shutil.copytree(pristine, root, symlinks=True)
    state = root / ".loopx"
    paths = sorted(state.glob(target)) if "*" in target else [state / target]
    DAMAGES[damage](paths[0], junk, fraction)
    return root


def files_of(root: Path) -> dict[str, str]:
    """Every state file's content hash (locks aside: taking one may create it)."""
    out = {}
    for folder, _dirs, names in os.walk(root / ".loopx"):
        for name in names:
            path = Path(folder) / name
            if "locks" in path.parts or path.is_symlink():
                continue
            try:
                out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError as exc:
                out[str(path.relative_to(root))] = type(exc).__name__
    return out


def clean(body: str, root: Path) -> None:
    assert "Traceback" not in body and "internal error" not in body, body[-400:]
    assert str(root) not in body and "/tmp/" not in body, body[-400:]


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    target=st.sampled_from(TARGETS),
    damage=st.sampled_from(sorted(DAMAGES)),
    junk=st.binary(max_size=40),
    fraction=st.floats(0, 1),
    action=st.sampled_from(sorted(ACTIONS)),
)
def test_every_page_and_action_on_a_damaged_file(
    pristine: Path,
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    damage: str,
    junk: bytes,
    fraction: float,
    action: str,
) -> None:
    monkeypatch.setenv("LOOPX_NOW", T0_ISO)
    with (
        tempfile.TemporaryDirectory(dir=pristine.parent) as web_dir,
        tempfile.TemporaryDirectory(dir=pristine.parent) as cli_dir,
    ):
        web = damaged_copy(pristine, Path(web_dir), target, damage, junk, fraction)
        twin = damaged_copy(pristine, Path(cli_dir), target, damage, junk, fraction)
        app = create_app(FileStore(web), Guard(TOKEN, loopback_only=True))
        for page in PAGES:
            reply = asgi(app, "GET", page, headers=signed_in(TOKEN))
            assert reply.status in (200, 404, 409, 503), (page, reply.status, reply.body[-300:])
            clean(reply.body, web)
        fields, argv = ACTIONS[action]
        before = files_of(web)
        reply = asgi(
            app,
            "POST",
            f"/goals/parser/{action}",
            headers={
                **signed_in(TOKEN),
                "Origin": "http://127.0.0.1:8765",
                "Content-Type": "application/x-www-form-urlencoded",
            },
            body=urlencode({"csrf": Guard(TOKEN, loopback_only=True).csrf, **fields}).encode(),
        )
        clean(reply.body, web)
        result = Cli(twin, monkeypatch)(*argv)
        expected = 303 if result.exit_code == 0 else HTTP_STATUS.get(result.exit_code, 500)
        assert reply.status == expected, (
            action,
            reply.status,
            result.exit_code,
            result.stderr,
            reply.body[-300:],
        )
        assert reply.status != 500
        if reply.status != 303:
            assert files_of(web) == before


def test_every_exit_code_has_a_status_and_only_a_bug_is_a_500() -> None:
    for code in EXIT_CODES:
        if code in (ExitCode.OK, ExitCode.INTERNAL):
            assert code not in HTTP_STATUS
        else:
            assert HTTP_STATUS[code] in (400, 404, 409, 503), code
    assert all(
        sub.exit_code is ExitCode.INTERNAL or sub.exit_code in HTTP_STATUS
        for sub in _subclasses(LoopxError)
        if isinstance(sub.exit_code, ExitCode)
    )


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


@pytest.mark.parametrize("lock", ["locks/parser.lock", "locks/registry.lock"])
def test_a_folder_in_place_of_a_lock(pristine: Path, monkeypatch: pytest.MonkeyPatch, lock: str) -> None:
    monkeypatch.setenv("LOOPX_NOW", T0_ISO)
    with tempfile.TemporaryDirectory(dir=pristine.parent) as folder:
        root = damaged_copy(pristine, Path(folder), lock, "a folder", b"", 0.0)
        app = create_app(FileStore(root), Guard(TOKEN, loopback_only=True))
        fields, _ = ACTIONS["grant" if "registry" in lock else "add-todo"]
        reply = asgi(
            app,
            "POST",
            "/goals/parser/" + ("grant" if "registry" in lock else "add-todo"),
            headers={
                **signed_in(TOKEN),
                "Origin": "http://127.0.0.1:8765",
                "Content-Type": "application/x-www-form-urlencoded",
            },
            body=urlencode({"csrf": Guard(TOKEN, loopback_only=True).csrf, **fields}).encode(),
        )
        assert reply.status != 500, reply.body[-300:]
