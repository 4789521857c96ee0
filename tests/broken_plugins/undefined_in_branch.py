"""Broken: the skill uses an undefined variable only when no goal is given, a branch an install
with `--goal-id` never takes."""

from __future__ import annotations

from loopx_core.hosts import RenderContext
from tests.broken_plugins.toy import Plugin, Toy


class UndefinedInBranch(Toy):
    """`last_goal_id` is no template variable."""

    def skill(self, context: RenderContext) -> str:
        """The skill, with the bad branch."""
        return self.template("broken/skill_branch.md.j2", context)


plugin = Plugin(UndefinedInBranch())
