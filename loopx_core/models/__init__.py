"""The records LoopX reads and writes: `records` (generated from `loopx_core.schema`), their
runtime (`record`), the one codec of their bytes (`codec`), and the values they are built on."""
