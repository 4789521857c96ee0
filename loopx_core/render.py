"""Markdown renderings for people: the should-run packet, todo lists, status.

Stored text (a title, an objective, a summary) is shown as given except what a terminal
would obey rather than show: `escapes.visible` writes those characters as escapes.
"""

from __future__ import annotations

from typing import Any

from loopx_core.escapes import visible


def packet_markdown(p: dict[str, Any]) -> str:
    """The should-run packet as Markdown: the same facts, for a person (stored text made `visible`)."""
    from loopx_core.effects.lens import interpret_quota_should_run_packet

    q = p["quota"]
    lane = p["work_lane_contract"]
    ic = p["interaction_contract"]
    sched = p["scheduler_hint"]
    slots = f"{q['spent_slots']}/{q['allowed_slots']} slots" if "spent_slots" in q else "slots unknown"
    lines = [
        f"# should-run: {p['decision'].upper()} (goal `{p['goal_id']}`, agent `{p['agent_id']}`)",
        "",
        f"**{p['effective_action']}**: {p['recommended_action']}",
        "",
        f"- reason: {p['reason']}",
        f"- quota: {q['state']}, {slots}"
        + (f", next eligible {q['next_eligible_at']}" if q["next_eligible_at"] else ""),
        f"- lane: {lane['lane']} (obligation {lane['obligation']}, then {lane['next_lane']})",
        f"- interaction: {ic['mode']}; owner action required: {'yes' if ic['user_channel']['action_required'] else 'no'}",
    ]
    gate = p.get("capability_gate")
    if gate:
        lines.append(
            f"- capability gate: {gate['action']} for todo {gate['todo_id']}, missing {', '.join(gate['missing_capabilities'])}"
        )
    todo = p.get("selected_todo")
    if todo:
        lines.append(f"- todo: {todo['todo_id']} (P{todo['priority']}) {todo['title']}")
    plan = p.get("settlement_plan")
    if plan:
        lines.append(f"- settlement: {' -> '.join(plan['steps'])} (turn {plan['turn_key'][:19]}...)")
    rule = sched["recommended_rrule"] or "none"
    lines.append(f"- scheduler: {sched['action']}, {sched['cadence_class']}, {rule}")

    actions = interpret_quota_should_run_packet(p).next_effect.cli_actions
    if actions:
        lines += ["", "## Next CLI actions", ""]
        lines += [f"{i}. `{a}`" for i, a in enumerate(actions, 1)]
    return visible("\n".join(lines) + "\n")


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table, one line per row whatever the values hold.

    Every cell (headers too) is put on one line, line breaks and runs of whitespace becoming
    one space, and its `|` is escaped, so no value can end a row or add a column; None, ""
    and a value that is only whitespace show `-`.
    """
    out = [_row(headers), "|" + "---|" * len(headers)]
    out += [_row(row) for row in rows]
    return "\n".join(out) + "\n"


def _row(values: list[Any]) -> str:
    return "| " + " | ".join(_cell(v) for v in values) + " |"


def _cell(value: Any) -> str:
    # str.split() breaks on every Unicode line break (\r, \v, \x85, \u2028, ...), not only \n.
    text = "" if value is None else visible(" ".join(str(value).split()))
    return text.replace("|", "\\|") if text else "-"


def status_markdown(rows: list[dict[str, Any]]) -> str:
    """`loopx status` as a Markdown table, most urgent first."""
    if not rows:
        return "No goals yet: `loopx goal add --goal-id ID --objective TEXT`.\n"
    return "# LoopX status\n\n" + table(
        ["goal", "state", "who acts", "todos open/done", "slots", "next eligible", "reason", "last run"],
        [
            [
                r["goal_id"],
                r["state"],
                r["who_acts"],
                f"{r['todos_open']}/{r['todos_done']}",
                f"{r['spent_slots']}/{r['allowed_slots']}" if r["spent_slots"] is not None else "-",
                r["next_eligible_at"],
                r["reason"],
                _last_run_cell(r.get("last_run")),
            ]
            for r in rows
        ],
    )


def history_markdown(rows: list[dict[str, Any]]) -> str:
    """`loopx history` as a Markdown table, newest first."""
    if not rows:
        return "No runs yet: a turn's writeback records one.\n"
    traced = any(r.get("trace_id") for r in rows)
    return "# LoopX history\n\n" + table(
        ["at", "goal", "agent", "subject", "validation", "progress", "summary"] + ["trace"] * traced,
        [
            [
                r["at"],
                r["goal_id"],
                r["agent_id"],
                r.get("todo_id") or "replan",
                r["validation"],
                f"{r['progress']}: {r['progress_detail']}" if r.get("progress_detail") else r["progress"],
                r["summary"],
            ]
            + [r.get("trace_id") or ""] * traced
            for r in rows
        ],
    )


def _last_run_cell(run: dict[str, Any] | None) -> str | None:
    if not run:
        return None
    summary = " ".join(run["summary"].split())
    return f"{run['at']} {run['agent_id']}: {summary[:60]}"
