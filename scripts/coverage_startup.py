"""Coverage in every Python process of a `make test` run, even those started with a bare environment.

coverage.py's own `a1_coverage.pth` starts measuring in any process that inherits
COVERAGE_PROCESS_START. Some children do not inherit it: the MCP SDK's stdio client passes
only HOME, PATH, SHELL, TERM, USER and LOGNAME to the server it starts, some tests run
`loopx` with an environment of their own, and host CLIs may filter what their hooks get.
This file, run from a `.pth` file at interpreter start, finds the request in the nearest
ancestor process that has it (`/proc/<pid>/environ`, Linux) and starts coverage with it.

It also saves the data before `os._exit` (the fault-injection kill in loopx_core/faults.py),
which skips the atexit hooks that normally write it.

`python scripts/coverage_startup.py` installs the `.pth` file into the running interpreter's
site-packages; `--uninstall` removes it. The `.pth` does nothing unless the coverage data
folder exists, so a venv that has it costs other runs one `stat`.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING: this runs in every process of a run, a tick's too
if TYPE_CHECKING:
    from pathlib import Path

PTH_NAME = "zz_loopx_coverage.pth"  # after coverage's a1_coverage.pth, which handles the easy case
REQUEST_VARS = ("COVERAGE_PROCESS_START", "COVERAGE_FILE")
MAX_ANCESTORS = 12


def _ancestor_request() -> dict[str, str]:
    """COVERAGE_PROCESS_START and COVERAGE_FILE from the nearest ancestor that was started with them."""
    pid = os.getppid()
    for _ in range(MAX_ANCESTORS):
        if pid <= 1:
            return {}
        try:  # open(), not pathlib: a probed tick must not find pathlib loaded by its measurement
            with open(f"/proc/{pid}/environ", "rb") as file:
                environ = file.read()
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as file:
                stat = file.read()
        except OSError:
            return {}
        found = {}
        for entry in environ.split(b"\0"):
            name, _, value = entry.partition(b"=")
            if name.decode(errors="replace") in REQUEST_VARS:
                found[name.decode()] = value.decode(errors="surrogateescape")
        if "COVERAGE_PROCESS_START" in found:
            return found
        # /proc/<pid>/stat is "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        pid = int(stat.rpartition(")")[2].split()[1])
    return {}


def _save_before_os_exit(cov: object) -> None:
    """Wrap os._exit so a process killed on purpose still writes what it measured."""
    real_exit = os._exit

    def _exit(code: int) -> None:  # the same signature as os._exit
        try:
            cov.stop()  # type: ignore[attr-defined]
            cov.save()  # type: ignore[attr-defined]
        finally:
            real_exit(code)

    os._exit = _exit  # type: ignore[assignment]


OPT_OUT = "LOOPX_COVERAGE"
"""`LOOPX_COVERAGE=off`: no coverage in this process, whatever an ancestor asked. For the tests
that list the modules a command imports: coverage itself loads hashlib, threading, dataclasses."""


def boot() -> None:
    """Start coverage in this process if this run asks for it, directly or through an ancestor."""
    if os.environ.get(OPT_OUT) == "off":
        return
    started = sys.modules.get("coverage")  # imported only if a1_coverage.pth started it
    cov = getattr(getattr(started, "process_startup", None), "coverage", None)
    if cov is None:
        if not os.environ.get("COVERAGE_PROCESS_START"):
            request = _ancestor_request()
            if not request:
                return
            os.environ.update(request)  # this process's own children inherit it the easy way
        try:
            import coverage
        except ImportError:
            return
        cov = coverage.process_startup()
    if cov is not None:
        _save_before_os_exit(cov)


def pth_line(data_dir: Path) -> str:
    """The one line of the `.pth` file: run this file when the data folder exists."""
    me = os.path.realpath(__file__)
    return (
        f"import os; os.path.isdir({str(data_dir)!r}) and exec(compile(open({me!r}).read(), {me!r}, 'exec'),"
        " {'__name__': 'loopx_coverage_startup'})\n"
    )


def _site_packages() -> Path:
    """The running interpreter's site-packages folder."""
    import sysconfig
    from pathlib import Path

    return Path(sysconfig.get_paths()["purelib"])


def main(argv: list[str]) -> int:
    """Install (default) or `--uninstall` the `.pth` file; the data folder is the first argument."""
    target = _site_packages() / PTH_NAME
    if argv[:1] == ["--uninstall"]:
        target.unlink(missing_ok=True)
        return 0
    if len(argv) != 1:
        print("usage: coverage_startup.py DATA_DIR | --uninstall", file=sys.stderr)
        return 2
    from pathlib import Path

    line = pth_line(Path(argv[0]).resolve())
    if not target.exists() or target.read_text() != line:
        target.write_text(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
elif __name__ == "loopx_coverage_startup":
    try:  # noqa: SIM105 (no contextlib: a probed tick lists what it loaded)
        boot()
    except Exception:  # measurement must never change what the measured process does
        pass
