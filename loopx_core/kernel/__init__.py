"""The settlement kernel: the algebra of identity-bound steps, the turn result, journal inspection.

Pure functions over models: no store access. The settlement application
(`loopx_core.settlement`) runs these steps against a store.
"""
