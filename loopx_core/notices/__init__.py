"""Owner notices: events LoopX tells a loop's owner about, an outbox, and delivery to sinks.

An event (`models.Notice`) has a stable id; `emit.queue_notice` writes it once into the outbox
(`.loopx/notices/events/<id>.json`) for every configured sink that wants it, and starts a
detached `loopx notify flush` that delivers it out of the turn's way, retrying a failing sink
with backoff (`delivery`). Sinks: a JSON-lines file (`file://PATH`), every Apprise URL, and
whatever plugins register through the `loopx_register_notice_sinks` hook (docs/notices.md).

Importing this package loads nothing: the hot path imports only the modules it uses.
"""
