"""Class: a refusal names a file's `schema_version` in words, whatever JSON value it holds (never a repr)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from loopx_core.models.codec import version_shown

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=60),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(JSON)
def test_any_schema_version_is_shown_in_words(version: object) -> None:
    shown = version_shown(version)
    assert "{'" not in shown and "['" not in shown and "None" not in shown and "True" not in shown
    assert len(shown) <= 60 and "\n" not in shown
    if isinstance(version, int) and not isinstance(version, bool):
        assert shown == f"schema_version {json.dumps(version)[:40]}"
