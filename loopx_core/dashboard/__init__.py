"""`loopx dashboard`: a local web app to see every loop at a glance and act as the owner.

Starlette and uvicorn, Jinja templates with autoescaping (an environment of its own, apart
from the facade renderer), server-side SVG charts, live updates by server-sent events, and
owner actions that call the same ops as the CLI, behind a per-launch token (docs/dashboard.md).
Reads go through the `Store` protocol, so it serves the file store and PostgreSQL alike.
"""
