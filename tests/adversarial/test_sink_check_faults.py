"""Class: a sink URL that cannot be checked, or shown, is one line that never echoes it.

`SinkKinds.check` runs when a sink is added: a URL over one line or 2,000 characters is a
usage error; a plugin kind whose `check` raises its own bug is one `plugin_failed` line
(exit 1) naming the kind and the exception's type, never the URL; a kind's `LoopxError`
passes through as it is; a kind that keeps `NoticeSink`'s defaults accepts every URL and
shows it redacted. `redact` answers for any text: no scheme is `<not a URL>`, an address
urllib cannot parse (a port out of range, a broken IPv6 host) hides everything after the
scheme, and a file sink outside the project and the home is shown by its name only.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopx_core.errors import ExitCode, LoopxError, NotFoundError, UsageError
from loopx_core.notices.sinks import NoticeSink, SinkKinds, redact

SECRET = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=10, max_size=24).map(lambda s: "S3cr" + s)


class Defaults(NoticeSink):
    """A plugin kind that overrides nothing but its schemes."""

    schemes = ("plain",)


class Buggy(NoticeSink):
    """A plugin kind whose check has a bug that quotes the URL."""

    schemes = ("buggy",)
    title = "Buggy pager"

    def __init__(self, error: type[Exception]) -> None:
        self.error = error

    def check(self, url: str) -> str | None:
        """Fails as a library would, with the URL in the text."""
        raise self.error(f"cannot parse {url}")


class Untitled(Buggy):
    """The same bug in a kind without a title."""

    schemes = ("untitled",)
    title = ""


class Refusing(NoticeSink):
    """A kind that refuses with LoopX's own error."""

    schemes = ("refusing",)

    def check(self, url: str) -> str | None:
        """Refuses every URL as not found."""
        raise NotFoundError("no such pager account")


@given(SECRET, st.sampled_from(["\n", "\r", "\t"]), st.booleans())
def test_a_url_over_one_line_is_refused_without_echoing_it(secret: str, control: str, first: bool) -> None:
    url = f"plain://{control}{secret}" if first else f"plain://{secret}{control}x"
    with pytest.raises(UsageError) as caught:
        SinkKinds([Defaults()]).check(url)
    assert caught.value.message == "a sink URL is one line of at most 2000 characters"


def test_a_url_over_2000_characters_is_refused_and_2000_is_not() -> None:
    kinds = SinkKinds([Defaults()])
    kinds.check("plain://" + "x" * (2000 - len("plain://")))
    with pytest.raises(UsageError, match="one line of at most 2000 characters"):
        kinds.check("plain://" + "x" * (2001 - len("plain://")))


@pytest.mark.parametrize("error", [ValueError, KeyError, RuntimeError, TypeError, ZeroDivisionError])
@pytest.mark.parametrize("kind", [Buggy, Untitled])
def test_a_check_that_raises_is_one_plugin_failed_line(
    error: type[Exception], kind: type[Buggy], tmp_path: Path
) -> None:
    with pytest.raises(LoopxError) as caught:
        SinkKinds([kind(error)]).check(f"{kind.schemes[0]}://admin:S3cretpass@pager/T0KEN")
    name = "Buggy pager" if kind is Buggy else "Untitled"
    assert caught.value.message == f"notice sink {name!r} failed to check the URL: {error.__name__}"
    assert caught.value.code == "plugin_failed" and caught.value.exit_code == ExitCode.INTERNAL
    assert "S3cretpass" not in caught.value.message and "T0KEN" not in caught.value.message


def test_a_kinds_own_refusal_passes_through() -> None:
    with pytest.raises(NotFoundError) as caught:
        SinkKinds([Refusing()]).check("refusing://pager")
    assert caught.value.message == "no such pager account" and caught.value.exit_code == ExitCode.NOT_FOUND


@given(SECRET)
def test_a_kind_keeping_the_defaults_accepts_and_shows_a_url_redacted(secret: str) -> None:
    kind = Defaults()
    url = f"plain://bob:{secret}@{secret}/{secret}?token={secret}"
    SinkKinds([kind]).check(url)  # the default check accepts
    assert kind.shown(url) == redact(url) == "plain://***"
    assert secret not in kind.shown(url)


@given(st.text(max_size=40).filter(lambda t: "://" not in t))
def test_text_without_a_scheme_is_not_a_url(text: str) -> None:
    assert redact(text) == "<not a URL>"
    with pytest.raises(UsageError, match="a sink is a URL"):
        SinkKinds().for_url(text)


@given(
    SECRET, st.sampled_from(["json", "jsons", "mailto", "form"]), st.sampled_from([":99999", ":-1", ":port"])
)
def test_an_address_urllib_cannot_parse_hides_all_but_the_scheme(secret: str, scheme: str, port: str) -> None:
    assert redact(f"{scheme}://bob:{secret}@host{port}/{secret}") == f"{scheme}://***"
    assert redact(f"{scheme}://[{secret}/x") == f"{scheme}://***"


def test_a_file_sink_is_shown_from_the_project_the_home_or_by_name(tmp_path: Path) -> None:
    root = tmp_path / "project"
    assert redact(f"file://{root}/logs/n.jsonl", root) == "file://logs/n.jsonl"
    assert redact("file://logs/n.jsonl", root) == "file://logs/n.jsonl"
    assert redact(f"file://{Path.home()}/n.jsonl") == "file://~/n.jsonl"
    assert redact("file://~/a/n.jsonl", root) == "file://~/a/n.jsonl"
    assert redact("file:///var/log/loopx/n.jsonl", root) == "file://.../n.jsonl"
    assert redact("file:///var/log/loopx/n.jsonl") == "file://.../n.jsonl"
