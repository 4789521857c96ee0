"""`loopx notify ...`: owner notice sinks (add, list, remove, test) and delivery (flush).

Exit codes: 0 ok; 2 a bad URL, event or option; 3 no such sink (or none configured for
`test`); 4 a damaged sink file (8: of another schema); 7 `test` reached a sink that refused the notice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from loopx_core.cli.common import FormatOption
from loopx_core.cli.formats import Format
from loopx_core.cli.output import Table, emit, fail_after_output, reporting
from loopx_core.clock import iso, now
from loopx_core.errors import NotFoundError, RefusedError
from loopx_core.escapes import clipped
from loopx_core.models.records import SinkConfig
from loopx_core.notices import config, outbox
from loopx_core.notices.sinks import redact

app = typer.Typer(
    add_completion=False, help="Owner notices: where they go, and sending them now.", no_args_is_help=True
)


def _root(ctx: typer.Context) -> Path:
    from loopx_core.store.roots import find_root

    return find_root((ctx.find_root().obj or {}).get("root"))


def _shown(sink: SinkConfig, root: Path) -> dict[str, Any]:
    data: dict[str, Any] = {
        "sink_id": sink.sink_id,
        "scope": "user" if sink.sink_id.startswith("u") else "project",
        "url": redact(sink.url, root),
        "goal_id": sink.goal_id,
        "events": list(sink.events) or ["all"],
        "added_at": iso(sink.added_at),
    }
    return data


def _counts(root: Path) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for _path, record in outbox.records(root):
        if record is None:
            continue
        for sink_id, delivery in record.deliveries.items():
            row = counts.setdefault(sink_id, {"pending": 0, "delivered": 0, "failed": 0})
            row[delivery.status] += 1
    return counts


@app.command("add")
def notify_add(
    ctx: typer.Context,
    url: Annotated[
        str, typer.Argument(help="file://PATH (JSON lines) or any Apprise URL.", show_default=False)
    ],
    goal_id: Annotated[str | None, typer.Option("--goal-id", "-g", help="Only this goal's notices.")] = None,
    event: Annotated[
        list[str] | None, typer.Option("--event", "-e", help="Only this event (repeat; default: all).")
    ] = None,
    user: Annotated[bool, typer.Option("--user", help="For every project of this user.")] = False,
    fmt: FormatOption = Format.auto,
) -> None:
    """Send owner notices to URL (the same URL and filters twice is one sink)."""
    from loopx_core.doctor.sinkkinds import sink_kinds

    with reporting(fmt):
        root = _root(ctx)
        url = url.strip()
        sink_kinds().check(url)
        if goal_id is not None and not user:  # a user-wide sink may name a goal of any project
            from loopx_core.ops.require import require_goal
            from loopx_core.store.choice import open_store

            require_goal(open_store(root).read_registry(), goal_id)
        sink = config.add_sink(
            root, url, now(), scope="user" if user else "project", goal_id=goal_id, events=event
        )
        shown = _shown(sink, root)
        emit(shown, fmt, f"Added notice sink {sink.sink_id}: {shown['url']}")


@app.command("list")
def notify_list(ctx: typer.Context, fmt: FormatOption = Format.auto) -> None:
    """Every notice sink (credentials hidden) and its deliveries."""
    with reporting(fmt):
        root = _root(ctx)
        counts = _counts(root)
        rows = []
        for sink in config.all_sinks(root):
            row = _shown(sink, root)
            row.update(counts.get(sink.sink_id, {"pending": 0, "delivered": 0, "failed": 0}))
            rows.append(row)
        emit({"sinks": rows}, fmt, _list_markdown)


def _list_markdown(data: dict[str, Any]) -> Table:
    return Table(
        ["sink", "url", "goal", "events", "delivered", "pending", "failed"],
        [
            [
                r["sink_id"],
                r["url"],
                r["goal_id"] or "all",
                ", ".join(r["events"]),
                r["delivered"],
                r["pending"],
                r["failed"],
            ]
            for r in data["sinks"]
        ],
        empty="No notice sinks: add one with `loopx notify add URL`.",
    )


@app.command("remove")
def notify_remove(
    ctx: typer.Context,
    sink_id: Annotated[
        str, typer.Argument(help="The sink's id (see `loopx notify list`).", show_default=False)
    ],
    fmt: FormatOption = Format.auto,
) -> None:
    """Stop sending notices to a sink (its undelivered notices are dropped at the next flush)."""
    with reporting(fmt):
        root = _root(ctx)
        sink = config.remove_sink(root, sink_id)
        emit(_shown(sink, root), fmt, f"Removed notice sink {sink.sink_id}")


@app.command("test")
def notify_test(
    ctx: typer.Context,
    sink_id: Annotated[str | None, typer.Argument(help="Only this sink (default: every sink).")] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Send a test notice to each sink now and say which took it (exit 7 when one did not)."""
    from loopx_core.doctor.sinkkinds import sink_kinds
    from loopx_core.ids import check_id
    from loopx_core.models.records import OutboxRecord
    from loopx_core.notices.delivery import send_one
    from loopx_core.notices.events import test_notice

    with reporting(fmt):
        root = _root(ctx)
        if sink_id is not None:
            check_id("sink", sink_id)
        sinks = [s for s in config.all_sinks(root) if sink_id is None or s.sink_id == sink_id]
        if not sinks:
            raise NotFoundError(
                f"no notice sink {sink_id!r} (see `loopx notify list`)"
                if sink_id
                else "no notice sinks: add one with `loopx notify add URL`"
            )
        kinds = sink_kinds()
        record = OutboxRecord(schema_version=1, notice=test_notice(now()))
        results = []
        for sink in sinks:
            error = send_one(kinds, sink, record, root)
            results.append(
                {"sink_id": sink.sink_id, "url": redact(sink.url, root), "ok": error is None, "error": error}
            )
        failed = [r for r in results if not r["ok"]]
        emit(
            {"notice_id": record.notice.notice_id, "results": results},
            fmt,
            lambda d: "\n".join(
                f"- {r['sink_id']} {r['url']}: " + ("delivered" if r["ok"] else f"FAILED: {r['error']}")
                for r in d["results"]
            ),
        )
        if failed:  # the results are the answer (one document): the error is its stderr line and code
            fail_after_output(
                RefusedError(
                    f"{len(failed)} of {len(results)} sink(s) did not take the test notice: "
                    + clipped("; ".join(f"{r['sink_id']}: {r['error']}" for r in failed), 300),
                    code="sink_failed",
                )
            )


@app.command("flush")
def notify_flush(
    ctx: typer.Context,
    linger: Annotated[
        float, typer.Option("--linger", help="Also wait this many seconds for retries falling due (0-3600).")
    ] = 0.0,
    fmt: FormatOption = Format.auto,
) -> None:
    """Deliver the queued notices now (retries that are due, too); queueing starts this detached."""
    from loopx_core.doctor.sinkkinds import sink_kinds
    from loopx_core.errors import UsageError
    from loopx_core.notices.delivery import flush

    with reporting(fmt):
        if not (0.0 <= linger <= 3600.0):  # also refuses NaN
            raise UsageError("--linger must be a number of seconds from 0 to 3600")
        root = _root(ctx)
        if not (root / ".loopx").is_dir():
            raise NotFoundError("no LoopX state here: run `loopx init` in the project first, or pass --root")
        report = flush(root, sink_kinds(), linger=linger)
        emit(report.to_json(), fmt, _flush_markdown)


def _flush_markdown(data: dict[str, Any]) -> str:
    if data["busy"]:
        return "Another flush is delivering the notices."
    lines = [
        f"Delivered {len(data['delivered'])}; retrying {len(data['retrying'])}; gave up {len(data['gave_up'])}; pending {data['pending']}."
    ]
    lines += [f"- retry {r['sink_id']} {r['notice_id']}: {r['error']}" for r in data["retrying"]]
    lines += [f"- gave up {r['sink_id']} {r['notice_id']}: {r['error']}" for r in data["gave_up"]]
    return "\n".join(lines)
