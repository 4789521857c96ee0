"""`loopx doctor`: typed findings about state, installation, liveness and notices, and repairs.

Each check module returns `Finding`s (`findings.py`); `run.py` runs the checks asked for and,
with `repair`, each finding's repair (a dry run says what it would do). The package sits above
the hosts layer because the installation checks use the installer and the host plugins.
"""
