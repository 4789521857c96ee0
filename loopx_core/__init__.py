"""LoopX core engine: state, quota, decisions and settlement for long-running agent loops."""

__version__ = "0.1.0"
