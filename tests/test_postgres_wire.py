"""The wire transport against what no real server sends: any chunking, hostile answers, a hand-off.

Everywhere else (test_postgres_lean_transport, _reads, _writes, _tick_start) the wire
transport meets the real server beside libpq's. Here a scripted server (tests/wire_server.py)
proves what the real one cannot show: the startup packet is byte for byte libpq's; answers cut
anywhere read alike; whatever a server sends, the client answers with an outcome, `Doubt` or
`Failed` (never another exception, never a hang); and a server that asks for a password is
handed to libpq at once, on a connection of its own.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.store.postgres import libpq, wire
from loopx_core.store.postgres.common import LEAN_LIBPQ_OPTIONS
from loopx_core.store.postgres.lean_protocol import Doubt, Failed
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)
from tests.wire_server import HELLO, READY, message, read_frontend, send_in_chunks, serving

EXAMPLES = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12
)
LEAN_OPTIONS = LEAN_LIBPQ_OPTIONS


@pytest.fixture(autouse=True)
def _no_pg_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in [n for n in os.environ if n.startswith("PG")]:
        monkeypatch.delenv(name)


def quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def description(columns: int) -> bytes:
    """A RowDescription of `columns` text columns."""
    field = (
        b"\x00\x00\x00\x00"
        + b"\x00\x00"
        + (25).to_bytes(4, "big")
        + b"\xff\xff"
        + b"\xff\xff\xff\xff"
        + b"\x00\x00"
    )
    return message(
        b"T",
        columns.to_bytes(2, "big") + b"".join(f"c{n}".encode() + b"\x00" + field for n in range(columns)),
    )


def data_row(values: list[str | None]) -> bytes:
    body = len(values).to_bytes(2, "big")
    for value in values:
        raw = None if value is None else value.encode()
        body += b"\xff\xff\xff\xff" if raw is None else len(raw).to_bytes(4, "big") + raw
    return message(b"D", body)


@EXAMPLES
@given(user=st.none() | TEXT, dbname=st.none() | TEXT, options=st.none() | TEXT)
def test_the_startup_packet_is_libpq_s(
    tmp_path_factory: pytest.TempPathFactory, user: str | None, dbname: str | None, options: str | None
) -> None:
    folder = tmp_path_factory.mktemp("w")
    dsn = f"host={folder} port=5432"
    for key, value in (("user", user), ("dbname", dbname), ("options", options)):
        if value is not None:
            dsn += f" {key}={quoted(value)}"
    with serving(folder, lambda conn: conn.sendall(HELLO), lambda conn: conn.sendall(HELLO)) as server:
        ours = wire.WireConnection(dsn)
        ours._connected()
        ours.close()
        theirs = libpq.LeanConnection(dsn, LEAN_OPTIONS)
        theirs._connected()
        theirs.close()
    assert server.packets[0] == server.packets[1]


@EXAMPLES
@given(
    columns=st.integers(1, 3),
    data=st.data(),
    cuts=st.lists(st.integers(0, 4000), max_size=12),
)
def test_answers_cut_anywhere_read_alike(
    tmp_path_factory: pytest.TempPathFactory, columns: int, data: st.DataObject, cuts: list[int]
) -> None:
    rows = data.draw(st.lists(st.lists(st.none() | TEXT, min_size=columns, max_size=columns), max_size=40))
    answer = (
        message(b"1") + message(b"2") + description(columns) + b"".join(data_row(r) for r in rows)
        + message(b"C", f"SELECT {len(rows)}".encode() + b"\x00") + READY
    )  # fmt: skip

    def script(conn: Any) -> None:
        send_in_chunks(conn, HELLO, [c % len(HELLO) for c in cuts])
        assert read_frontend(conn) == [b"P", b"B", b"D", b"E", b"S"]
        send_in_chunks(conn, answer, cuts)
        read_frontend(conn)  # the client's Terminate

    with serving(tmp_path_factory.mktemp("w"), script) as server:
        conn = wire.WireConnection(server.dsn)
        outcome = conn.execute("SELECT %s", ("x",))
        conn.close()
    assert outcome.rows == [tuple(r) for r in rows]
    assert (outcome.status, outcome.rowcount) == (f"SELECT {len(rows)}", len(rows))


KINDS = st.sampled_from(list(b"12nNASDTCEIGHZvKRs?"))
MESSAGES = st.one_of(
    st.builds(lambda kind, body: message(bytes([kind]), body), KINDS, st.binary(max_size=24)),
    st.builds(lambda kind, size: bytes([kind]) + size.to_bytes(4, "big"), KINDS, st.integers(0, 2**32 - 1)),
    st.sampled_from(
        [description(1), data_row(["a"]), data_row([None]), message(b"C", b"UPDATE 1\x00"), READY]
    ),
    st.sampled_from(
        [
            message(b"E", b"SERROR\x00C22012\x00Mdivision by zero\x00\x00"),
            message(b"E", b"VFATAL\x00C57P01\x00Mbye\x00\x00"),
        ]
    ),
)


@EXAMPLES
@given(answer=st.lists(MESSAGES, max_size=8).map(b"".join), cuts=st.lists(st.integers(0, 200), max_size=6))
def test_whatever_a_server_answers_is_an_outcome_a_doubt_or_a_failure(
    tmp_path_factory: pytest.TempPathFactory, answer: bytes, cuts: list[int]
) -> None:
    def script(conn: Any) -> None:
        conn.sendall(HELLO)
        read_frontend(conn)
        send_in_chunks(conn, answer, cuts)  # then the socket ends

    with serving(tmp_path_factory.mktemp("w"), script) as server:
        conn = wire.WireConnection(server.dsn)
        for _ in range(2):  # and again on what is left of the session
            try:
                conn.execute("SELECT 1")
            except (Doubt, Failed) as refused:
                assert isinstance(refused, Doubt | Failed)
            assert conn.in_transaction in (True, False)
        conn.close()


@EXAMPLES
@given(
    answer=st.lists(MESSAGES.filter(lambda m: m[:1] != b"R") | st.just(HELLO[:9]), max_size=6).map(b"".join)
)
def test_whatever_a_server_answers_a_startup_packet_is_a_session_or_a_doubt(
    tmp_path_factory: pytest.TempPathFactory, answer: bytes
) -> None:
    def script(conn: Any) -> None:
        conn.sendall(answer)

    with serving(tmp_path_factory.mktemp("w"), script) as server:
        conn = wire.WireConnection(server.dsn)
        try:
            conn._connected()
        except Doubt:
            assert conn._sock is None  # closed: nothing of it is left open
        conn.close()


@pytest.mark.parametrize("request_code", [3, 5, 10], ids=["cleartext", "md5", "sasl"])
def test_a_server_that_asks_for_a_password_is_handed_to_libpq(
    tmp_path_factory: pytest.TempPathFactory, request_code: int
) -> None:
    def asks(conn: Any) -> None:
        conn.sendall(message(b"R", request_code.to_bytes(4, "big") + b"SCRAM-SHA-256\x00\x00"))
        conn.recv(1)  # until the client goes

    def serves(conn: Any) -> None:
        conn.sendall(HELLO)
        read_frontend(conn)
        conn.sendall(
            message(b"1")
            + message(b"2")
            + description(1)
            + data_row(["from libpq"])
            + message(b"C", b"SELECT 1\x00")
            + READY
        )
        read_frontend(conn)

    with serving(tmp_path_factory.mktemp("w"), asks, serves) as server:
        conn = wire.begin(server.dsn)
        assert isinstance(conn, wire.WireConnection)
        assert conn.rows("SELECT 1", ()) == [("from libpq",)]
        assert conn._libpq is not None and conn._sock is None
        conn.close()
    assert server.packets[0] == server.packets[1]  # the same startup, from libpq this time


@pytest.mark.parametrize(
    "dsn",
    [
        "host=db.internal dbname=x",
        "dbname=x",
        "host=/a,/b dbname=x",
        "host=/s sslmode=require",
        "host=/s port=x",
        "service=team",
    ],
    ids=["tcp", "no-host", "several", "another-key", "bad-port", "service"],
)
def test_what_the_wire_is_not_sure_of_is_libpq_s(dsn: str) -> None:
    with pytest.raises(Doubt):
        wire.startup(dsn)


def test_a_pg_variable_is_libpq_s(monkeypatch: pytest.MonkeyPatch) -> None:
    assert wire.startup("host=/s dbname=x user=u")[0] == "/s/.s.PGSQL.5432"
    monkeypatch.setenv("PGOPTIONS", "-c work_mem=1MB")  # libpq would send it
    with pytest.raises(Doubt):
        wire.startup("host=/s dbname=x user=u")


class Interrupted(Exception):
    """What the test's signal handler raises amid a read."""


def interrupted(seconds: float, call: Any) -> None:
    """`call()` cut short by a signal handler that raises after `seconds` (as KeyboardInterrupt would)."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        with pytest.raises(Interrupted):
            call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_statement_cut_short_by_a_signal_leaves_the_session_in_step(pg_cluster: Cluster) -> None:
    """A signal handler that raises while the answers are read (as KeyboardInterrupt would): the
    next statement first reads past what is left, as libpq's `PQexec` does, and answers itself."""
    conn = wire.WireConnection(pg_cluster.fresh_schema())
    assert conn.rows("SELECT 1", ()) == [(1,)]
    interrupted(0.05, lambda: conn.execute("SELECT pg_sleep(0.3)::text, 'late'::text"))
    assert conn.in_transaction  # its answers are still coming: not idle, as libpq says of a busy session
    assert conn.rows("SELECT 2", ()) == [(2,)]
    assert not conn.in_transaction
    conn.execute("BEGIN", simple=True)
    assert conn.execute("COMMIT", simple=True).status == "COMMIT"
    conn.close()


def test_a_signal_amid_a_message_that_spans_reads_loses_none_of_it(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The first part of a long message is kept as soon as it is read: a signal before its rest
    arrives leaves the session in step (the next statement reads past the rest, then answers)."""
    import time

    notice = message(b"N", b"SNOTICE\x00M" + b"x" * 300_000 + b"\x00\x00")
    answer = message(b"1") + message(b"2") + description(1)

    def script(conn: Any) -> None:
        conn.sendall(HELLO)
        read_frontend(conn)
        conn.sendall(notice[:150_000])
        time.sleep(0.3)  # the client's signal comes now
        conn.sendall(notice[150_000:] + answer + data_row(["first"]) + message(b"C", b"SELECT 1\x00") + READY)
        read_frontend(conn)
        conn.sendall(answer + data_row(["second"]) + message(b"C", b"SELECT 1\x00") + READY)
        read_frontend(conn)

    with serving(tmp_path_factory.mktemp("w"), script) as server:
        conn = wire.WireConnection(server.dsn)
        conn._connected()
        interrupted(0.1, lambda: conn.execute("SELECT 1"))
        assert conn.rows("SELECT 2", ()) == [("second",)]
        conn.close()


@pytest.mark.parametrize("transport", ["libpq", "wire"])
def test_parameters_that_do_not_fit_the_statement_fail_alike(pg_cluster: Cluster, transport: str) -> None:
    dsn = pg_cluster.fresh_schema()
    conn = wire.WireConnection(dsn) if transport == "wire" else libpq.LeanConnection(dsn, LEAN_OPTIONS)
    with pytest.raises(Failed) as refused:  # more values than placeholders: the server's refusal
        conn.execute("SELECT %s::text", ("a", "b"))
    assert (refused.value.sqlstate, refused.value.lost) == ("08P01", False)
    with pytest.raises(Doubt):  # more than a Bind message can carry
        conn.execute("SELECT 1", tuple("x" for _ in range(70_000)))
    assert conn.rows("SELECT 3", ()) == [(3,)]
    conn.close()


def test_a_socket_path_libpq_would_refuse_is_libpq_s() -> None:
    fits = "/" + "s" * (107 - len("/.s.PGSQL.5432") - 1)
    assert len(wire.startup(f"host={fits} user=u")[0]) == 107
    with pytest.raises(Doubt):
        wire.startup(f"host={fits}s user=u")  # 108 bytes: libpq says the path is too long
    assert wire.startup("host=/run/pg/ user=u")[0] == "/run/pg//.s.PGSQL.5432"  # as libpq joins it


@pytest.mark.parametrize("transport", ["libpq", "wire", "psycopg"])
def test_a_fatal_error_amid_a_statement_keeps_its_sqlstate_as_psycopg_does(
    pg_cluster: Cluster, transport: str
) -> None:
    """The backend ends the session in the middle of a statement (here it terminates itself):
    each transport reports the FATAL error's SQLSTATE and a lost session, as psycopg does."""
    import psycopg

    dsn = pg_cluster.fresh_schema()
    statement = "SELECT pg_terminate_backend(pg_backend_pid())"
    if transport == "psycopg":
        with psycopg.connect(dsn, autocommit=True) as conn:
            with pytest.raises(psycopg.OperationalError) as broke:
                conn.execute(statement)
            assert (broke.value.sqlstate, conn.broken) == ("57P01", True)
        return
    lean = wire.WireConnection(dsn) if transport == "wire" else libpq.LeanConnection(dsn, LEAN_OPTIONS)
    with pytest.raises(Failed) as refused:
        lean.execute(statement)
    assert (refused.value.sqlstate, refused.value.lost) == ("57P01", True)
    with pytest.raises(Failed) as again:
        lean.execute("SELECT 1")
    assert again.value.lost and lean.in_transaction  # its state unknown, as libpq says of a lost session
    lean.close()


@pytest.mark.parametrize(
    ("tag", "rows"),
    [
        ("INSERT 0 2", 2),
        ("INSERT 5", -1),
        ("INSERT 0 2 3", -1),
        ("SELECT 12", 12),
        ("SELECT 1 2", -1),
        ("SELECT \u0663", -1),
        ("SELECT ", -1),
        ("SELECT", -1),
        ("UPDATE 0", 0),
        ("DELETE 4", 4),
        ("MERGE 3", 3),
        ("FETCH 1", 1),
        ("MOVE 2", 2),
        ("COPY 7", 7),
        ("CREATE TABLE", -1),
        ("BEGIN", -1),
    ],
)
def test_a_command_tag_counts_rows_as_pqcmdtuples_reads_it(tag: str, rows: int) -> None:
    """libpq's `PQcmdTuples`: the digits after the command (an INSERT's after its OID), all
    ASCII digits and at least one, else nothing (-1 as a row count)."""
    from loopx_core.store.postgres.lean_protocol import counted

    assert counted(tag.encode()) == rows
