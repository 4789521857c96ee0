"""The schema of every file LoopX keeps: pydantic models, each record's one declaration.

Nothing reads or writes a file through these models: scripts/gen_records.py generates from
them the records that do (`loopx_core.models.records`, no pydantic at run time), and
tests/test_records.py holds the generated reader to them on generated documents. The input
domain (`domain`) types the MCP tools' arguments too.
"""
