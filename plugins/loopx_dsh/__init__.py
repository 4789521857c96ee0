"""The built-in LoopX host plugin for DSH, the DeepSeek Harness (native plugin package and skill)."""
