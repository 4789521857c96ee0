"""The notice sink kinds in force: the built-ins and every plugin's (the hook is a broadcast)."""

from __future__ import annotations

from loopx_core.hosts.manager import get_plugin_manager, notice_sinks
from loopx_core.notices.sinks import SinkKinds


def sink_kinds() -> SinkKinds:
    """File and Apprise sinks, plus what `loopx_register_notice_sinks` plugins add."""
    return SinkKinds(notice_sinks(get_plugin_manager()))
