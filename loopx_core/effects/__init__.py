"""The effect lens: read existing packets as request -> interpretation -> observation -> next.

The lens itself is `loopx_core.effects.lens`; the package holds only the turn-result packet's
schema name, which every settlement command writes without needing the lens.
"""

TURN_RESULT_SCHEMA = "loopx_turn_result_v0"
"""The schema of the packet a turn command prints (`kernel.results`), which the lens reads."""
