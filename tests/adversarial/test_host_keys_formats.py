"""Class: the keys a host edits in an owned file (`FacadeFile.host_keys`), in either format.

The fingerprint of an owned JSON or TOML file leaves out the host's keys, so a host's edit of
them is no drift; a re-install carries the host's current values into the rendered file. On
generated documents: changing only host keys never changes the fingerprint, changing any
other key does; `adopt` yields the rendered document with exactly the host's values of its
keys and is the rendered text itself when nothing differs. A file that does not parse, or
JSON that is no object, is fingerprinted whole and never adopted into (nothing to read keys
from): the text is returned as it is, never an exception.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import tomlkit
from hypothesis import given
from hypothesis import strategies as st

from loopx_installer.hostkeys import adopt, core, fingerprint
from loopx_installer.manifest import sha256

HOST_KEYS = ("rrule", "status", "updated_at")
OTHER_KEYS = ("name", "prompt", "cwd")
VALUES = st.one_of(st.integers(-5, 5), st.text("abc xyz", max_size=6), st.booleans())
DOCS = st.fixed_dictionaries(
    {},
    optional={key: VALUES for key in (*HOST_KEYS, *OTHER_KEYS)},
)
FORMATS = st.sampled_from(["a.json", "a.toml"])


def dumped(rel: str, doc: dict[str, Any]) -> str:
    """The document as its format writes it."""
    return tomlkit.dumps(doc) if rel.endswith(".toml") else json.dumps(doc, indent=2) + "\n"


def loaded(rel: str, text: str) -> dict[str, Any]:
    """The document's values."""
    return dict(tomlkit.parse(text)) if rel.endswith(".toml") else json.loads(text)


@given(FORMATS, DOCS, DOCS)
def test_host_keys_are_left_out_of_the_fingerprint(
    rel: str, doc: dict[str, Any], host: dict[str, Any]
) -> None:
    edited = {**doc, **{k: v for k, v in host.items() if k in HOST_KEYS}}
    assert fingerprint(dumped(rel, edited), rel, HOST_KEYS) == fingerprint(dumped(rel, doc), rel, HOST_KEYS)
    without = {k: v for k, v in doc.items() if k not in HOST_KEYS}
    assert loaded(rel, core(dumped(rel, doc), rel, HOST_KEYS)) == without
    other = {**doc, "name": "changed by hand"}
    if doc.get("name") != "changed by hand":
        assert fingerprint(dumped(rel, other), rel, HOST_KEYS) != fingerprint(
            dumped(rel, doc), rel, HOST_KEYS
        )


@given(FORMATS, DOCS, DOCS)
def test_adopt_carries_exactly_the_hosts_values(
    rel: str, rendered: dict[str, Any], current: dict[str, Any]
) -> None:
    text = dumped(rel, rendered)
    result = adopt(text, dumped(rel, current), rel, HOST_KEYS)
    expected = {
        k: current[k] if k in HOST_KEYS and k in current and k in rendered else v for k, v in rendered.items()
    }
    assert loaded(rel, result) == expected
    if expected == rendered:
        assert result == text  # nothing the host changed: the rendered text as it is


@pytest.mark.parametrize("rel", ["a.json", "a.toml"])
@pytest.mark.parametrize("text", ["{", "[1, 2]", '"text"', "rrule = ", "= 1", "\x00"])
def test_a_file_that_does_not_parse_is_taken_whole(rel: str, text: str) -> None:
    assert core(text, rel, HOST_KEYS) == text
    assert fingerprint(text, rel, HOST_KEYS) == sha256(text)
    rendered = dumped(rel, {"rrule": "FREQ=HOURLY", "name": "n"})
    assert adopt(rendered, text, rel, HOST_KEYS) == rendered
    assert adopt(text, rendered, rel, HOST_KEYS) == text


@given(st.text(max_size=30), st.sampled_from(["a.md", "a.yaml", "a"]))
def test_other_formats_and_no_keys_are_taken_whole(text: str, rel: str) -> None:
    assert core(text, rel, HOST_KEYS) == text and core(text, "a.json", ()) == text
    assert adopt(text, "{}", rel, HOST_KEYS) == text and adopt(text, None, "a.json", HOST_KEYS) == text
    assert fingerprint(None, rel, HOST_KEYS) is None
