"""Class: a request that makes the dashboard answer with a traceback, a 500, or an unguarded change.

Any path (percent-encoded, `..`, odd bytes), any method, any form posted to any action: the
answer is a page with a documented status (200, 303, 400, 403, 404, 405, 409), never a 500
and never a traceback, and the server keeps answering. Without the token nothing but a 403
comes back and the state does not move.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.dashboard.actions import ACTIONS
from loopx_core.store.files import FileStore
from tests.browser import Served, fleet, post_form, request, served_thread

ANSWERS = {200, 303, 400, 403, 404, 405, 409}
SEGMENT = st.one_of(
    st.sampled_from(
        [
            "",
            ".",
            "..",
            "%2e%2e",
            "%2f",
            "goals",
            "parser",
            "static",
            "events",
            "agents",
            "dashboard.js",
            "~",
            "%00",
            "%ff",
            "%c0%ae",
        ]
    ),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12).map(
        lambda s: quote(s, safe="")
    ),
)
PATHS = st.lists(SEGMENT, min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts))
FIELDS = st.dictionaries(
    st.sampled_from(
        [
            "gate_id",
            "resolution",
            "code",
            "title",
            "priority",
            "kind",
            "capabilities",
            "agent_id",
            "capability",
            "todo_id",
            "back",
            "x",
        ]
    ),
    st.one_of(
        st.text(max_size=30),
        st.sampled_from(
            ["api-review", "t1", "t10", "builder", "slow-ci", "-1", "99", "//evil", "/goals/parser"]
        ),
    ),
    max_size=6,
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, FileStore]]:
    root: Path = tmp_path_factory.mktemp("requests")
    store = FileStore(root)
    fleet(store)
    with served_thread(store) as served:
        yield served, store


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS"]), path=PATHS)
def test_any_path_is_a_documented_answer(site: tuple[Served, FileStore], method: str, path: str) -> None:
    served, _ = site
    reply = request(served, method, path)
    assert reply.status in ANSWERS, (method, path, reply.status)
    assert "Traceback" not in reply.body and "/tmp/" not in reply.body


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    action=st.sampled_from(sorted(ACTIONS)),
    goal=st.sampled_from(["parser", "docs", "ghost", "UP"]),
    fields=FIELDS,
)
def test_any_form_to_any_action_is_a_documented_answer(
    site: tuple[Served, FileStore], action: str, goal: str, fields: dict[str, str]
) -> None:
    served, _ = site
    reply = post_form(served, f"/goals/{quote(goal)}/{action}", fields)
    assert reply.status in ANSWERS - {200}, (action, fields, reply.status, reply.body[-300:])
    assert "Traceback" not in reply.body
    if reply.status == 303:
        location = reply.headers["location"]
        assert location.startswith("/") and not location.startswith("//"), location


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(action=st.sampled_from(sorted(ACTIONS)), fields=FIELDS)
def test_without_the_token_nothing_moves(
    site: tuple[Served, FileStore], action: str, fields: dict[str, str]
) -> None:
    served, store = site
    before = [store.read_goal(g).dump() for g in ("parser", "docs")], store.read_registry().dump()
    reply = request(
        served,
        "POST",
        f"/goals/parser/{action}",
        body=urlencode(fields),
        headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": served.base},
        signed_in=False,
    )
    assert reply.status == 403
    assert (
        [store.read_goal(g).dump() for g in ("parser", "docs")],
        store.read_registry().dump(),
    ) == before


def test_the_live_stream_is_answered_by_its_head(site: tuple[Served, FileStore]) -> None:
    """`/events` streams for as long as the page is open: a request reads its status and type only."""
    served, _ = site
    reply = request(served, "GET", "/events")
    assert reply.status == 200 and reply.headers["content-type"].startswith("text/event-stream")
