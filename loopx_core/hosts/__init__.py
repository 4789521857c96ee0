"""The host toolkit: hook specs, the plugin manager, the facade model and the Jinja environment.

Plugin authors start at `loopx_core.hosts.hookspecs` (the hooks) and
`loopx_core.hosts.model` (what the hooks exchange); the entry-point group is `loopx`.
"""
