"""The Codex App heartbeat's prompt, written in Python: `loopx heartbeat-prompt` loads no Jinja.

The text is templates/loopx_templates/codex-app/heartbeat-prompt.md.j2 rendered by hand: that
template is the reference, and tests/test_host_registry_lean.py renders both for generated
contexts and requires the same bytes, so a change to one without the other fails a test.
"""

from __future__ import annotations

from loopx_core.commands import quote  # shlex.quote without shlex (which imports re)


def _join(words: list[str]) -> str:
    return " ".join(quote(word) for word in words)  # shlex.join


def heartbeat_prompt(goal_id: str, agent_id: str, loopx: str) -> str:
    """The prompt for `goal_id` and `agent_id`, `loopx` being how the automation runs LoopX."""
    lx = quote(loopx)
    should_run = _join(
        [
            *(loopx, "quota", "should-run", "--goal-id", goal_id, "--agent-id", agent_id),
            *("--surface", "codex-app", "--current-rrule", "<rrule>"),
        ]
    )
    history = _join([loopx, "history", "--goal-id", goal_id, "--limit", "3"])
    lines = [f"LoopX heartbeat for goal {quote(goal_id)}, agent {quote(agent_id)}."]
    if loopx != "loopx":
        lines.append(f"The LoopX command here is `{lx}`: use it wherever a command starts with `loopx`.")
    lines += [
        "",
        f"1. Run `{should_run}`, `<rrule>` being this automation's rrule as it is now (such as "
        "`FREQ=MINUTELY;INTERVAL=10`, inside the quotes), and read the JSON packet.",
        "2. If `should_run` is false: do no work; only step 4.",
        f"3. If `should_run` is true: run `{history}` to see what the last turns did, then run "
        "`interaction_contract.cli_channel.next_cli_actions` exactly, in order. Do the work "
        "`recommended_action` names after `turn begin`, fill `<summary>` and `<evidence>` with short "
        "shell-quoted facts, never run `quota spend` before `writeback` succeeded, and stop at the "
        "first failing command.",
        "4. Scheduler: when `scheduler_hint.rrule_must_change` is true, set this automation's rrule to "
        "`scheduler_hint.recommended_rrule` with your automation tool (pause the automation when it is "
        f"null). Then, when `scheduler_hint.ack_expected` is true, run `{lx}` followed by the "
        "shell-quoted words of `scheduler_hint.codex_app.ack_hint.cli_args`. If the update fails, do "
        f"not ack: run `{lx}` followed by the words of `scheduler_hint.codex_app.failure_hint.cli_args`, "
        "with `<error>` replaced by the error. When `scheduler_hint.failures` is set, the last update "
        "failed (`scheduler_hint.last_error`): try it once more now, and report a new failure the same way.",
    ]
    return "\n".join(lines) + "\n"
