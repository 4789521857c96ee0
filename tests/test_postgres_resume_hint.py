"""A turn whose store goes away mid-turn says how to go on, and that command works.

Observed: after `store_unavailable` in the middle of `turn run-once` the message said "retry the
command", but the retry was refused (the turn is open: it needs `--resume`). Here the server
stops while the host command runs; the refusal names `--resume`; the same command with it,
once the server is back, settles the turn with one charge.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from tests.conftest import run_loopx
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)


def test_the_store_gone_mid_turn_names_resume_and_resume_settles(tmp_path: Path, pg_cluster: Cluster) -> None:
    root = tmp_path / "p"
    root.mkdir()
    dsn = pg_cluster.fresh_schema()
    for args in (
        ["init", "--store", dsn],
        ["goal", "add", "-g", "demo", "-o", "Ship"],
        ["agent", "register", "-a", "builder"],
        ["todo", "add", "-g", "demo", "--title", "Work"],
    ):
        assert run_loopx(*args, root=root).exit_code == 0, args
    ready, go = tmp_path / "ready", tmp_path / "go"
    host = f"touch {ready}; while [ ! -f {go} ]; do sleep 0.05; done"
    turn = [
        "turn",
        "run-once",
        "-g",
        "demo",
        "-a",
        "builder",
        "--host-command",
        host,
        "--validation-command",
        "true",
    ]

    def outage() -> None:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pg_cluster.stop()
        go.touch()

    stopper = threading.Thread(target=outage)
    stopper.start()
    try:
        gone = run_loopx(*turn, root=root, env={"LOOPX_LOCK_TIMEOUT": "2"}, timeout=120)
    finally:
        stopper.join()
        pg_cluster.start()
    assert gone.exit_code == 6, gone.stderr
    line = gone.stderr.strip()
    assert "\n" not in line and "--resume" in line and "retry the command" not in line, line
    assert run_loopx(*turn, root=root).exit_code == 7  # as the line says: refused without --resume
    resumed = run_loopx(*turn, "--resume", "-f", "json", root=root)
    assert resumed.exit_code == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "committed"
    ledger = json.loads(run_loopx("quota", "status", "-g", "demo", "-f", "json", root=root).stdout)
    assert ledger["spent_slots"] == 1, ledger
