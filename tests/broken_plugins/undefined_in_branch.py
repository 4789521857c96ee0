"""Broken: the skill uses an undefined variable only when no goal is given, a branch an install
with `--goal-id` never takes."""

from __future__ import annotations

from loopx_core.hosts.jinja import render
from loopx_core.hosts.model import RenderContext
from tests.broken_plugins.toy import Toy


class UndefinedInBranch(Toy):
    """`last_goal_id` is no template variable."""

    def skill(self, context: RenderContext) -> str:
        """The skill, with the bad branch."""
        return render(self.surface, "broken/skill_branch.md.j2", context)


plugin = UndefinedInBranch()
