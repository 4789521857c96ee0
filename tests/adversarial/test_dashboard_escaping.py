"""Class: text from the state reaching a page as markup. Every title, objective and message is text.

Whatever a todo title, gate title, goal objective or finding message holds (markup, quotes,
entities, control characters, any Unicode), the dashboard's pages show exactly that text:
the autoescaping environment writes it escaped, so a title like `<script>alert(1)</script>`
can never run or change the page; control characters and bidi overrides are shown as their
escapes (`escapes.visible`), so none reorders a line or reaches a terminal that reads the page.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import escape as html_escape

from loopx_core.dashboard.render import render
from loopx_core.dashboard.views import attention_page, goal_page
from loopx_core.escapes import visible
from loopx_core.ops import gates, goals, health, todos
from loopx_core.store.files import FileStore

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
HOSTILE = st.sampled_from(
    [
        "<script>alert(1)</script>",
        '"><img src=x onerror=alert(1)>',
        "</div></main><script src=//evil.example/x.js></script>",
        "&lt;already escaped&gt; &amp;",
        "{{ 7 * 7 }} {% raw %}",
        "javascript:alert(1)",
        "' onmouseover='alert(1)",
    ]
)
TEXT = st.one_of(HOSTILE, st.text(min_size=1, max_size=60)).filter(lambda s: s.strip() != "")
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What no page may hold raw: control characters (a page's own newlines and tabs aside), bidi overrides."""


def escape(text: str) -> str:
    """How a page shows stored text: control characters as escapes, then HTML-escaped."""
    return str(html_escape(visible(text)))


CONTEXT = {"nav": "", "csrf": "c", "done": "", "path": "/", "fp": "f"}


def page(store: FileStore, goal_id: str) -> tuple[str, str]:
    """The rendered goal page and attention page."""
    goal = render("goal.html", **CONTEXT, **goal_page(store, goal_id, T0))
    queue = render("attention.html", **CONTEXT, **attention_page(store, T0))
    return goal, queue


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> FileStore:
    root = tmp_path_factory.mktemp("escaping")
    s = FileStore(root)
    s.init()
    goals.register_agent(s, "a", [], T0)
    return s


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=TEXT, gate=TEXT, objective=TEXT, message=TEXT, n=st.integers(0, 10**9))
def test_state_text_is_shown_as_text(
    store: FileStore, title: str, gate: str, objective: str, message: str, n: int
) -> None:
    goal_id = f"g{n}"
    if goal_id in store.read_registry().goals:
        return
    goals.add_goal(store, goal_id, objective, T0)
    todo = todos.add_todo(store, goal_id, title, T0, required_capabilities=["no-one-has-it"])
    shown_gate = gates.open_gate(store, goal_id, gate, T0)
    finding = health.add_finding(store, goal_id, "f", "high", message)
    goal_html, queue_html = page(store, goal_id)
    for html in (goal_html, queue_html):
        assert html.count("<script") == 1  # the page's own script tag only
        assert not RAW.search(html)
    assert f'<div class="title">{escape(todo.title)}</div>' in goal_html
    assert f'<div class="title">{escape(shown_gate.title)}</div>' in goal_html
    assert f'<p class="objective">{escape(objective.strip())}</p>' in goal_html
    assert f"{escape(finding.message)}" in goal_html
    assert f'<td class="title">{escape(shown_gate.title)}</td>' in queue_html
    assert f'<td class="title">{escape(todo.title)}</td>' in queue_html  # the ask for the owner


MARKUP = st.one_of(
    HOSTILE,
    st.text(st.sampled_from("<>\"'&x{}/ \u2028"), min_size=1, max_size=20).filter(lambda s: s.strip() != ""),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(markup=MARKUP, n=st.integers(0, 10**9))
def test_every_other_field_a_user_controls_is_shown_as_text(store: FileStore, markup: str, n: int) -> None:
    """Run summaries, evidence, changed files, a blocked reason, capabilities, an agent's host,
    the flash message of an action: each shown escaped on every page that shows it."""
    text = f"zq{markup}qz"  # markers: the page's own markup never holds them
    from loopx_core.dashboard.views import agents_page
    from loopx_core.kernel.algebra import StepKind
    from loopx_core.settlement.steps import TurnContext
    from loopx_core.settlement.turns import begin_turn, settle_steps

    goal_id = f"h{n}"
    if goal_id in store.read_registry().goals:
        return
    agent = f"w{n}"
    goals.add_goal(store, goal_id, "escaping", T0)
    goals.register_agent(store, agent, [], T0, host=text.strip() or "x")
    # Commands take capabilities as ids only; a hand-edited file may hold any text.
    store.update_registry(lambda r: setattr(r.agents[agent], "capabilities", [text]))
    todo = todos.add_todo(store, goal_id, "settled", T0)
    journal, _ = begin_turn(store, goal_id, agent, T0, todo_id=todo.todo_id)
    ctx = TurnContext(
        store,
        goal_id,
        agent,
        journal.turn_key,
        lambda: T0,
        todo_id=todo.todo_id,
        summary=text,
        evidence=[text],
        validation_passed=True,
        changed_files=[text],
        slots=1,
    )
    settle_steps(ctx, [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK, StepKind.QUOTA_SPEND], adapter="test")
    blocked = todos.add_todo(store, goal_id, "blocked one", T0)
    store.update_goal(goal_id, lambda s: setattr(s.todo(blocked.todo_id), "required_capabilities", [text]))
    todos.block_todo(store, goal_id, blocked.todo_id, text, T0)
    context = {**CONTEXT, "done": text}
    pages = [
        render("goal.html", **context, **goal_page(store, goal_id, T0)),
        render("attention.html", **context, **attention_page(store, T0)),
        render("agents.html", **context, **agents_page(store, T0, facades=[])),
    ]
    shown = str(escape(text))
    dangerous = any(c in text for c in "<>\"'&")
    # goal: flash, summary, evidence, changed file, blocked reason, needed capability;
    # attention: flash, last run's summary; agents: flash, host, capability
    for html, fields in zip(pages, (6, 2, 3), strict=True):
        assert html.count("<script") == 1
        assert html.count(shown) >= fields, (html.count(shown), fields)
        if dangerous:
            assert text not in html


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cap=st.text(min_size=1, max_size=12).filter(lambda s: s.strip() and "," not in s), n=st.integers(0, 10**9)
)
def test_a_form_value_is_the_stored_text_so_a_submit_writes_it_back(
    store: FileStore, cap: str, n: int
) -> None:
    """The capabilities field of an ask holds the capability as stored (HTML-escaped only), while
    the same capability shown as text has its control characters as escapes."""
    goal_id = f"c{n}"
    if goal_id in store.read_registry().goals:
        return
    goals.add_goal(store, goal_id, "forms", T0)
    todo = todos.add_todo(store, goal_id, "needs it", T0)
    # Commands take capabilities as ids only; a hand-edited file (or an older LoopX's) may hold any text.
    store.update_goal(
        goal_id, lambda s: setattr(s.todo(todo.todo_id), "required_capabilities", [cap.strip()])
    )
    html = render("goal.html", **CONTEXT, **goal_page(store, goal_id, T0))
    assert f'name="capabilities" value="{html_escape(cap.strip())}"' in html
    if visible(cap.strip()) != cap.strip():
        assert escape(cap.strip()) in html  # shown elsewhere on the page, as escapes
