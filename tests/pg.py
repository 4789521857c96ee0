"""A throw-away PostgreSQL cluster for the tests: initdb and pg_ctl on a private unix socket.

The cluster lives in a temporary folder, listens on no TCP port (only a socket in that
folder), runs without fsync (throw-away data: an OS crash may lose it), and is stopped and
deleted at the end. `synchronous_commit` stays on: a commit is acknowledged once its WAL is
written, so a server crash (`stop("immediate")`) loses nothing acknowledged, and a crash test
tells LoopX's losses from the server's. As
root the server runs as the `postgres` user (PostgreSQL refuses to run as root). Each test
gets a schema of its own in one database, chosen by the libpq `options` of its DSN, so
tests stay isolated without paying for a database each. No mock database anywhere: where
the server binaries are missing, `scripts/postgres.sh` installs Debian's `postgresql`.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from tests.conftest import T0

if TYPE_CHECKING:
    from loopx_core.store.postgres import PostgresStore

DATABASE = "loopx"
SUPERUSER = "postgres"
NO_WIRE = {"PGCONNECT_TIMEOUT": "10"}
"""An environment in which the wire transport stands aside for libpq's (a `PG*` variable is
libpq's to read; this one changes nothing: the store's own connect timeout wins over it)."""


def server_bin() -> Path | None:
    """The folder holding initdb and pg_ctl (Debian keeps them under /usr/lib/postgresql/<v>/bin)."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parts[-3]))
    return versions[-1].parent if versions else None


class Cluster:
    """One running PostgreSQL server in a private folder."""

    def __init__(self, base: Path, bindir: Path) -> None:
        self.base = base
        self.bindir = bindir
        self.data = base / "data"
        self.socket = base / "socket"
        self._as_root = os.geteuid() == 0
        self._names = itertools.count(1)

    # -- running the server's programs -------------------------------------------------
    def _run(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bindir / program), *args]
        if self._as_root:
            command = ["runuser", "-u", SUPERUSER, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=120)

    def init(self) -> None:
        """initdb (trust authentication on the socket: the folder is private)."""
        self.socket.mkdir(parents=True)
        if self._as_root:
            shutil.chown(self.base, SUPERUSER)
            shutil.chown(self.socket, SUPERUSER)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--no-sync")

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = f"-k {self.socket} -c listen_addresses='' -c fsync=off -c full_page_writes=off -c max_connections=200"
        self._run(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.base / "server.log"), "-w", "start"
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`fast`: roll back open transactions and disconnect everyone)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self, mode: str = "fast") -> None:
        """Stop and start again: every connection is cut, committed data stays (`immediate`: a
        crash, recovered from the WAL at start)."""
        self.stop(mode)
        self.start()

    # -- databases and DSNs ------------------------------------------------------------
    def dsn(self, database: str = DATABASE, *, schema: str | None = None) -> str:
        """A libpq URL reaching the socket; `schema` goes through libpq's `options` (search_path)."""
        query = f"host={quote(str(self.socket), safe='')}&user={SUPERUSER}"
        if schema:
            query += "&options=" + quote(f"-csearch_path={schema}", safe="")
        return f"postgresql:///{database}?{query}"

    def sql(self, statement: str, database: str = DATABASE) -> list[tuple[object, ...]]:
        """Run one statement as the superuser; its rows (if any)."""
        import psycopg

        with psycopg.connect(self.dsn(database), autocommit=True) as conn:
            cursor = conn.execute(statement)
            return cursor.fetchall() if cursor.description else []

    def create_database(self, name: str = DATABASE) -> None:
        """CREATE DATABASE (from template0)."""
        self.sql(f'CREATE DATABASE "{name}" TEMPLATE template0', database="postgres")

    def fresh_schema(self) -> str:
        """A new empty schema in the shared database; its DSN selects it."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self.sql(f'CREATE SCHEMA "{name}"')
        return self.dsn(schema=name)

    def terminate_backends(self, pattern: str = "%") -> int:
        """pg_terminate_backend on every LoopX session idle inside a transaction whose last query matches."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'loopx' "
                "AND state = 'idle in transaction' AND query LIKE %s",
                (pattern,),
            ).fetchone()
        return int(row[0]) if row else 0


def start_cluster() -> Cluster:
    """initdb + start a cluster in a new temporary folder, with the shared test database."""
    bindir = server_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL server binaries not found: run scripts/postgres.sh (make test does)")
    base = Path(tempfile.mkdtemp(prefix="loopx-pg-"))
    cluster = Cluster(base, bindir)
    try:
        cluster.init()
        cluster.start()
        cluster.create_database()
    except BaseException:
        cluster.stop("immediate")
        shutil.rmtree(base, ignore_errors=True)
        raise
    return cluster


def stop_cluster(cluster: Cluster) -> None:
    """Stop the server and delete its folder."""
    cluster.stop("immediate")
    shutil.rmtree(cluster.base, ignore_errors=True)


@pytest.fixture(scope="session", name="pg_cluster")
def cluster_fixture() -> Iterator[Cluster]:
    """One cluster per test process (each xdist worker starts its own), stopped at the end."""
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


class Machine:
    """One "machine": a project folder and a home of its own, pointed at the team store."""

    def __init__(self, base: Path, name: str, dsn: str) -> None:
        self.name = name
        self.dsn = dsn
        self.project = base / name / "project"
        self.home = base / name / "home"
        self.project.mkdir(parents=True)
        self.home.mkdir(parents=True)

    def env(self, now: str | None = None, **extra: str) -> dict[str, str]:
        """The machine's environment: its own HOME and host folders, no LOOPX_ROOT/LOOPX_STORE."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("LOOPX_")}
        env["HOME"] = str(self.home)
        for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "DSH_HOME", "DSH_AGENTS_HOME"):
            env[name] = str(self.home / name.lower())
        if now is not None:
            env["LOOPX_NOW"] = now
        env.update(extra)
        return env

    def command(self, *args: str) -> list[str]:
        """`loopx ARGS...` as this machine runs it (in its project folder)."""
        return [str(Path(sys.executable).parent / "loopx"), *args]

    def run(
        self, *args: str, now: str | None = None, timeout: float = 120, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        """Run `loopx ARGS...` in the machine's project folder and wait."""
        return subprocess.run(
            self.command(*args),
            cwd=self.project,
            env=self.env(now, **extra),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    def start(self, *args: str, now: str | None = None, **extra: str) -> subprocess.Popen[str]:
        """Start `loopx ARGS...` in the background."""
        return subprocess.Popen(
            self.command(*args),
            cwd=self.project,
            env=self.env(now, **extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )

    def join(self) -> None:
        """Record the team store for this machine's project, as `loopx init --store` does."""
        from loopx_core.store.choice import record

        record(self.project, self.dsn)


def machines(base: Path, dsn: str, count: int) -> list[Machine]:
    """`count` machines, each joined to the store at `dsn`."""
    made = [Machine(base, f"m{n}", dsn) for n in range(1, count + 1)]
    for machine in made:
        machine.join()
    return made


def finish(procs: list[subprocess.Popen[str]], timeout: float = 120) -> list[tuple[int, str, str]]:
    """Wait for every process: (exit code, stdout, stderr) each."""
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        results.append((proc.returncode, out, err))
    return results


def team_project(root: Path, cluster: Cluster, *, todos: int) -> tuple[str, PostgresStore]:
    """A fresh schema recorded as `root`'s team store, initialised: goal `g` ("Objective"),
    agent `builder` (python) and `todos` todos titled `Todo N`; its DSN and the open store (the
    caller closes it)."""
    from loopx_core.ops import goals
    from loopx_core.ops import todos as todo_ops
    from loopx_core.store.choice import open_target, record
    from loopx_core.store.postgres import PostgresStore

    dsn = cluster.fresh_schema()
    store = open_target(root, dsn)
    assert isinstance(store, PostgresStore)
    store.init()
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "builder", ["python"], T0)
    for n in range(todos):
        todo_ops.add_todo(store, "g", f"Todo {n + 1}", T0)
    record(root, dsn)
    return dsn, store
