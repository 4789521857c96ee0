"""Class: how a host's read-back names what differs in an installed file (hosts/readback.py).

`owned_key_problems` compares one owned key of the installed JSON/TOML with LoopX's fragment:
equal is no problem; an object that differs names each of its keys that differs, with both
values (keys only the installed copy has are the user's); anything else that differs names the key with both values; an array's LoopX entry
missing names the array and the entry; a missing key names its path. `front_matter` reads the
top-level `key: value` pairs, skipping nested, commented, list and colon-less lines, and is
None without a closed front matter. On generated values.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from loopx_core.hosts.readback import ARRAY, front_matter, owned_key_problems

SCALARS = st.one_of(st.integers(-3, 3), st.text("abc", max_size=3), st.booleans(), st.none())
SERVER = st.dictionaries(st.sampled_from(["command", "args", "env"]), SCALARS, min_size=1, max_size=3)


@given(SERVER, SERVER)
def test_an_object_that_differs_names_each_differing_key(want: dict[str, Any], have: dict[str, Any]) -> None:
    found = owned_key_problems(
        {"servers": {"loopx": want}}, {"servers": {"loopx": have}}, ("servers", "loopx")
    )
    assert found == [  # keys only the installed copy has are the user's: no problem
        f"servers.loopx.{name} is {json.dumps(have.get(name))}, expected {json.dumps(value)}"
        for name, value in want.items()
        if have.get(name) != value
    ]


@given(SCALARS, SCALARS)
def test_a_value_that_differs_names_both(want: Any, have: Any) -> None:
    found = owned_key_problems({"tools": {"loopx": want}}, {"tools": {"loopx": have}}, ("tools", "loopx"))
    assert found == (
        [] if want == have else [f"tools.loopx is {json.dumps(have)}, expected {json.dumps(want)}"]
    )


@given(st.lists(SCALARS, max_size=3), SCALARS)
def test_an_arrays_loopx_entry_must_be_in_it(have: list[Any], entry: Any) -> None:
    found = owned_key_problems({"hooks": [entry]}, {"hooks": have}, ("hooks", ARRAY))
    assert found == ([] if entry in have else [f"hooks lacks the LoopX entry {json.dumps(entry)}"])


def test_a_missing_key_or_a_non_object_names_the_path() -> None:
    fragment = {"a": {"b": {"c": 1}}}
    assert owned_key_problems(fragment, {"a": {}}, ("a", "b")) == ["no a.b entry"]
    assert owned_key_problems(fragment, {"a": []}, ("a", "b")) == ["no a.b entry"]
    assert owned_key_problems(fragment, [], ("a",)) == ["no a entry"]
    assert owned_key_problems({"a": {"list": [1]}}, {"a": {"list": "x"}}, ("a", "list", ARRAY)) == [
        "a.list lacks the LoopX entry 1"
    ]


def test_front_matter_reads_top_level_pairs_only() -> None:
    text = '---\nname: loopx\ndescription: "Runs \\"loops\\""\n  nested: no\n# comment: no\n- item: no\nbare line\n---\nbody\n'
    assert front_matter(text) == {"name": "loopx", "description": 'Runs "loops"'}
    assert front_matter("---\nname: loopx\nno end\n") is None
    assert front_matter("no front matter\n---\n") is None
    assert front_matter('---\nbad: "unclosed\n---\n') == {"bad": '"unclosed'}
