"""Class: a file sink whose URL was edited by hand into one that names no usable file.

Observed: with `"url": "file://"` in `.loopx/notices/sinks.json`, `loopx notify list` was a usage
error (exit 2): showing the sink asked for its file, which raised; a `~someone/` path for a user
this machine does not know raised `RuntimeError` from `expanduser`; and `notify test`'s error
quoted example URLs that its own redaction then garbled (`file://.../<no file named>notices.jsonl`).

Now `notify list` shows every sink (a file-less one as `file://<no file named>`), `notify test`
and `notify flush` fail such a sink alone in one line (exit 7 / its record), and `doctor` goes
on; no command ends in an internal error. Generated: the text after `file://`.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Cli

TAILS = st.one_of(
    st.sampled_from(
        ["", " ", "\t", "~", "~/", "~nosuchuser7/x.jsonl", "~nosuchuser7", "./", "/", " n.jsonl"]
    ),
    st.text(st.sampled_from([*" ~/.\\nx", "\t", "é"]), max_size=8),
)
CODES = {"list": {0}, "test": {0, 7}, "flush": {0, 7}, "doctor": {0, 3, 4, 9}}


def _sinks(tail: str) -> str:
    return json.dumps(
        {
            "schema_version": 1,
            "next_number": 2,
            "sinks": [
                {"sink_id": "s1", "url": "file://" + tail, "events": [], "added_at": "2026-11-29T12:00:00Z"}
            ],
        }
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tail=TAILS)
def test_a_hand_edited_file_sink_fails_alone_and_never_as_a_bug(cli: Cli, tail: str) -> None:
    folder = cli.root / ".loopx" / "notices"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sinks.json").write_text(_sinks(tail))
    for name, args in (
        ("list", ["notify", "list"]),
        ("test", ["notify", "test"]),
        ("flush", ["notify", "flush"]),
        ("doctor", ["doctor"]),
    ):
        done = cli(*args, "-f", "json")
        assert done.exit_code in CODES[name], (name, tail, done.stdout, done.stderr)
        assert "internal error" not in done.stdout + done.stderr, (name, tail)
        assert len(done.stderr.strip().splitlines()) <= 1, (name, tail, done.stderr)
        if name == "list":
            (sink,) = json.loads(done.stdout)["sinks"]
            assert sink["url"].startswith("file://") and str(cli.root) not in sink["url"]
        if name == "test" and done.exit_code == 7:
            assert "<no file named>" not in done.stderr and "file://..." not in done.stderr, done.stderr
