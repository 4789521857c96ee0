"""The conformance kit for host plugins: a sandbox, the checks, and the `HostConformance` suite.

Plugin authors activate it with one line in their tests' conftest.py:

    pytest_plugins = ["loopx_core.pytest_plugin"]

See docs/write-a-host-plugin.md. Importing this package needs pytest (it is a test kit).
"""

from loopx_core.conformance.sandbox import Case, ConformanceError, Rendered, Sandbox
from loopx_core.conformance.suite import HostConformance

__all__ = ["Case", "ConformanceError", "HostConformance", "Rendered", "Sandbox"]
