"""The facade installer behind `loopx workflow-skills`: plan, diff, apply, manifest, uninstall, check."""
