"""A tick on the team store starts its connection first and leaves through the hot exit.

`choice.TickStart` (cli/entry.py's should-run) begins the lean connection (libpq's
`PQconnectStartParams`) before the store's modules and the tick's are imported, so the server
prepares its session meanwhile; it closes the store at the end, so no exit handler is left and the process
leaves without the interpreter's teardown, as a tick on files does. Proven here on the real
server, in whole processes: the connection is begun before the store's modules load, once, and the
packet is byte for byte typer's (which opens the store the ordinary way).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import connect as psycopg_connection

from loopx_core.store import choice
from loopx_core.store.postgres import PostgresStore, libpq, wire
from tests.conftest import T0_ISO
from tests.pg import NO_WIRE, Cluster, cluster_fixture, team_project  # noqa: F401  (the session fixture pg_cluster)

REPO = Path(__file__).resolve().parent.parent

WATCHED = """\
import atexit, json, os, sys
from loopx_core.store.postgres import libpq, wire
from loopx_core.cli import entry

seen = {"connections": [], "handlers_at_exit": None, "statements": 0}

def watch(kind):
    begin, execute = kind.__init__, kind.execute

    def executed(self, *args, **kwargs):
        seen["statements"] += 1
        return execute(self, *args, **kwargs)

    def counted(self, *args, **kwargs):
        begin(self, *args, **kwargs)  # counted once begun: the wire's refusal of a DSN is no connection
        seen["connections"].append(
            [kind.__name__]
            + [name in sys.modules for name in ("loopx_core.store.postgres.store", "loopx_core.ops.tick")]
        )

    kind.execute, kind.__init__ = executed, counted

watch(libpq.LeanConnection)
watch(wire.WireConnection)
leave = entry._leave

def watched(code):
    seen["handlers_at_exit"] = atexit._ncallbacks()
    sys.stderr.write(json.dumps(seen) + "\\n")
    leave(code)

entry._leave = watched
sys.argv = ["loopx", *sys.argv[1:]]
entry.main()
"""


@pytest.fixture
def team(tmp_path: Path, pg_cluster: Cluster) -> Iterator[Path]:
    """A team project of three todos (its store closed: each process opens its own)."""
    _, store = team_project(tmp_path, pg_cluster, todos=3)
    store.close()
    return tmp_path


SHOULD_RUN = ("quota", "should-run", "-g", "g", "-a", "builder")


def run(
    root: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    command: tuple[str, ...] = SHOULD_RUN,
    stdin: str = "",
) -> subprocess.CompletedProcess[str]:
    """should-run (or `command`) as the console script runs it (`main()` on the process arguments)."""
    return subprocess.run(
        [sys.executable, "-c", WATCHED, "--root", str(root), *command, *extra],
        input=stdin,
        capture_output=True,
        text=True,
        env={"LOOPX_COVERAGE": "off", "LOOPX_NOW": T0_ISO, "PATH": "", "HOME": str(root), **(env or {})},
        cwd=REPO,
        check=False,
    )


TRANSPORTS = {"WireConnection": {}, "LeanConnection": NO_WIRE}
"""Each lean transport and the environment that picks it (a unix socket: the wire's; a `PG*`
variable: libpq's)."""


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_the_connection_starts_before_the_tick_loads_and_the_process_leaves_at_once(
    team: Path, transport: str
) -> None:
    done = run(team, "-f", "json", env=TRANSPORTS[transport])
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0 and json.loads(done.stdout)["decision"] == "run"
    assert seen["connections"] == [
        [transport, False, False]
    ]  # one, begun before the store's modules and ops.tick load
    assert seen["handlers_at_exit"] == 0  # closed by TickStart: the hot exit, no teardown
    assert seen["statements"] == 2  # the goal's documents in one, the ledger window in the other


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
@pytest.mark.parametrize("hook", ["claude-stop", "claude-session-start"])
def test_a_hook_starts_its_connection_before_the_tick_loads_as_should_run_does(
    team: Path, hook: str, transport: str
) -> None:
    event = json.dumps({"session_id": "s", "cwd": str(team)})
    done = run(
        team, command=("hook", hook, "-g", "g", "-a", "builder"), stdin=event, env=TRANSPORTS[transport]
    )
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, done.stderr
    assert seen["connections"] == [
        [transport, False, False]
    ]  # begun before the store's modules and ops.tick load
    assert seen["handlers_at_exit"] == 0


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_the_packet_is_typer_s(team: Path, fmt: str) -> None:
    """The lean entry with its early connection prints what typer's command prints."""
    lean = run(team, "-f", fmt)
    typer = run(team, "-f", fmt, env={"LOOPX_NO_FAST_PATH": "1"})
    assert (lean.returncode, lean.stdout) == (typer.returncode, typer.stdout)
    assert (lean.returncode, lean.stdout) == (lambda r: (r.returncode, r.stdout))(
        run(team, "-f", fmt, env=NO_WIRE)
    )
    assert lean.returncode == 0


DAMAGE = {
    "sound": "SELECT 1",
    "no-registry": "DELETE FROM loopx_registry",
    "no-goal-row": "DELETE FROM loopx_goals",
    "no-scheduler-row": "DELETE FROM loopx_scheduler",
    "damaged-goal-row": 'UPDATE loopx_goals SET doc = \'{"schema_version": 1, "goal_id": 7}\'',
    "damaged-scheduler-row": "INSERT INTO loopx_scheduler VALUES ('g', '[]')",
    "older-schema": "UPDATE loopx_schema SET version = 1",
    "newer-schema": "UPDATE loopx_schema SET version = 99",
    "no-schema": "DROP TABLE loopx_schema",
    "no-scheduler-table": "DROP TABLE loopx_scheduler",
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_the_first_statement_s_documents_are_what_each_read_finds(
    team: Path, pg_cluster: Cluster, damage: str
) -> None:
    """Whatever the goal's rows hold, the tick that reads them in one statement prints what the
    tick that reads each on its own prints (typer's, which names no goal up front)."""
    import psycopg

    dsn = choice.recorded(team)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DAMAGE[damage])
    lean = run(team, "-f", "json")
    typer = run(team, "-f", "json", env={"LOOPX_NO_FAST_PATH": "1"})
    assert (lean.returncode, lean.stdout) == (typer.returncode, typer.stdout)
    assert lean.returncode == 0 or damage != "sound"
    assert lean.returncode != 0 or damage not in ("no-registry", "newer-schema", "no-schema")


def test_an_unreachable_store_is_psycopg_s_error_still(tmp_path: Path) -> None:
    """No server behind the socket: the early start gives up at once, the tick says what psycopg says."""
    (tmp_path / ".loopx").mkdir()
    dsn = f"host={tmp_path / 'nowhere'} dbname=x"
    env = {"LOOPX_STORE": dsn, "LOOPX_LOCK_TIMEOUT": "0.2"}
    lean = run(tmp_path, "-f", "json", env=env)
    typer = run(tmp_path, "-f", "json", env={**env, "LOOPX_NO_FAST_PATH": "1"})
    assert (lean.returncode, lean.stdout) == (typer.returncode, typer.stdout)
    assert lean.returncode == 6 and "cannot reach the store" in lean.stdout
    assert str(tmp_path) not in lean.stdout + lean.stderr.splitlines()[-1]


ROOTS = st.one_of(
    st.none(),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30),
    st.sampled_from(["~nobody-here/x", "/", ".", "..", "/proc/self/fd/0", "\x00", "~"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(root=ROOTS, store=st.sampled_from(["", "files", "host=/nonexistent dbname=x", "nonsense", "a=b=c"]))
def test_a_tick_start_never_raises_and_leaves_nothing_behind(
    root: str | None, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the root and the store named: no exception (the tick reports it), nothing left open."""
    monkeypatch.setenv(choice.ENV_VAR, store)
    with choice.TickStart(root) as started:
        assert started.store is None or isinstance(started.store, PostgresStore)
    assert choice._STARTED == {}
    if started.store is not None:
        assert started.store.lean_link._conn is None


def test_a_connection_to_no_server_is_a_doubt_at_once(tmp_path: Path) -> None:
    """The non-blocking start refuses a socket nobody listens on (psycopg then says why)."""
    import time

    started = time.monotonic()
    with pytest.raises(libpq.Doubt):
        libpq.LeanConnection(f"host={tmp_path} dbname=x", {}, timeout=2.0).rows("SELECT 1", ())
    assert time.monotonic() - started < 1.0


def test_libpq_loads_lazily_and_a_library_that_cannot_load_is_an_os_error(tmp_path: Path) -> None:
    """`libc.open_lazily` (RTLD_LAZY: functions bound at their first call) gives a working libpq;
    a file that is no library is the `OSError` `libpq.library` turns into its doubt."""
    from loopx_core.store.postgres import libc

    path = libpq.library_path()
    assert path is not None
    assert libc.open_lazily(path).PQlibVersion() >= 100000
    (tmp_path / "libnothing.so").write_bytes(b"not an ELF file")
    for missing in (tmp_path / "libnothing.so", tmp_path / "absent.so"):
        with pytest.raises(OSError):
            libc.open_lazily(str(missing))


SETTLE = """\
import atexit, json, sys
from loopx_core.cli import entry

leave = entry._leave

def watched(code):
    sys.stderr.write(json.dumps({"handlers_at_exit": atexit._ncallbacks()}) + "\\n")
    leave(code)

entry._leave = watched
sys.argv = ["loopx", *sys.argv[1:]]
entry.main()
"""


def test_a_settlement_command_leaves_at_once_and_the_server_logs_nothing(
    team: Path, pg_cluster: Cluster
) -> None:
    """A plain session (here a unix socket) is left to the process's exit: no exit handler, so a
    settlement command leaves without teardown, and the server logs nothing for the session."""
    log = pg_cluster.base / "server.log"
    before = log.read_text(errors="replace")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            SETTLE,
            "--root",
            str(team),
            "turn",
            "begin",
            "-g",
            "g",
            "-a",
            "builder",
            "-t",
            "t1",
        ],
        capture_output=True,
        text=True,
        env={"LOOPX_COVERAGE": "off", "LOOPX_NOW": T0_ISO, "PATH": "", "HOME": str(team)},
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stderr.strip().splitlines()[-1]) == {"handlers_at_exit": 0}
    time.sleep(0.3)  # the backend notices the end of its client
    assert log.read_text(errors="replace")[len(before) :] == ""
    with psycopg_connection(choice.recorded(team)) as conn:
        assert conn.execute("SELECT count(*) FROM loopx_journals").fetchone() == (1,)


def test_a_session_over_a_unix_socket_is_not_encrypted(team: Path) -> None:
    connection = libpq.LeanConnection(choice.recorded(team), {})
    assert connection.rows("SELECT 1", ()) == [(1,)]
    assert connection.encrypted() is False
    connection.close()


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
@pytest.mark.parametrize("failure", [RuntimeError, LookupError])
def test_a_connection_begun_before_the_store_fails_to_open_is_closed(
    team: Path, monkeypatch: pytest.MonkeyPatch, failure: type[Exception], transport: str
) -> None:
    """The connection begins before the store is made: if making it fails, nothing begun is
    left open, and the tick opens (and reports on) its own store as it always did."""
    for name, value in TRANSPORTS[transport].items():
        monkeypatch.setenv(name, value)
    kind = wire.WireConnection if transport == "WireConnection" else libpq.LeanConnection
    closed: list[Any] = []
    close = kind.close
    monkeypatch.setattr(kind, "close", lambda self: (closed.append(self), close(self))[1])

    def refused(*args: object, **kwargs: object) -> None:
        raise failure("no store today")

    with monkeypatch.context() as patch:
        patch.setattr(choice, "open_target", refused)
        started = choice.TickStart(str(team), "g")
    assert started.store is None and choice._STARTED == {}
    assert (
        len(closed) == 1
        and getattr(closed[0], "_conn", None) is None
        and getattr(closed[0], "_sock", None) is None
    )
    with started:
        store = choice.open_for_tick(str(team))
        assert store.read_goal("g").goal_id == "g"
    store.close()


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_a_settlement_command_begins_its_connection_before_its_modules_load(
    team: Path, transport: str
) -> None:
    """`choice.begin_early`: the wire connection begins before the settlement modules (and the
    store's) load, and the store takes that one; on libpq's path the store begins its own."""
    done = run(
        team, command=("turn", "begin", "-g", "g", "-a", "builder", "-t", "t1"), env=TRANSPORTS[transport]
    )
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, done.stdout
    early = transport == "WireConnection"
    assert seen["connections"] == [[transport, not early, False]]  # one connection either way
    assert seen["handlers_at_exit"] == 0


@pytest.mark.parametrize("where", ["opening-the-store", "before-the-store"])
def test_a_connection_begun_for_a_command_that_fails_first_is_closed(team: Path, where: str) -> None:
    """Whether the store fails to open or the command fails before it opens one, the connection
    `begin_early` began is closed, and none is left for the process's next command."""
    from loopx_core.cli import lean_settle, settle

    closed: list[Any] = []
    close = wire.WireConnection.close

    def refused(*args: object, **kwargs: object) -> None:
        raise OSError("no store today")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wire.WireConnection, "close", lambda self: (closed.append(self), close(self))[1])
        if where == "opening-the-store":
            patch.setattr(choice, "open_target", refused)
        else:
            patch.setattr(settle, "open_root", refused)
        with pytest.raises(SystemExit) as done:
            lean_settle.dispatch(
                ["--root", str(team), "turn", "begin", "-g", "g", "-a", "builder", "-t", "t1"]
            )
    assert done.value.code != 0
    assert choice._BEGUN == {} and len(closed) == 1 and closed[0]._sock is None
