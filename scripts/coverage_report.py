"""Line coverage per package from a combined data file, and the floor the suite must keep.

`python scripts/coverage_report.py DATA_FILE` prints one row per package (loopx_core's
subpackages one by one, the installer, each plugin, the templates) and the total, then exits 2
if the total is below `[tool.coverage.report] fail_under` in pyproject.toml.
`--files N` also lists the N files with the most uncovered lines.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import coverage

REPO = Path(__file__).resolve().parent.parent


def package_of(path: Path) -> str:
    """The row a source file counts in: `loopx_core/<sub>`, `loopx_installer`, `plugins/<name>`..."""
    parts = path.relative_to(REPO).parts
    if parts[0] == "loopx_core":
        return f"loopx_core/{parts[1]}" if len(parts) > 2 else "loopx_core (top level)"
    if parts[0] == "plugins":
        return f"plugins/{parts[1]}"
    if parts[0] == "installer":
        return "loopx_installer"
    return parts[0]


def main(argv: list[str]) -> int:
    """Print the table; exit 2 below the floor."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_file")
    parser.add_argument("--files", type=int, default=0, help="also list the N least covered files")
    args = parser.parse_args(argv)
    cov = coverage.Coverage(data_file=args.data_file, config_file=str(REPO / "pyproject.toml"))
    cov.load()
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per_file: list[tuple[int, str, str]] = []
    for name in sorted(cov.get_data().measured_files()):
        path = Path(name)
        if not path.is_relative_to(REPO) or not path.exists():
            continue
        _, statements, _, missing, missing_text = cov.analysis2(name)
        row = totals[package_of(path)]
        row[0] += len(statements)
        row[1] += len(missing)
        if missing:
            per_file.append((len(missing), str(path.relative_to(REPO)), missing_text))
    width = max(len(p) for p in totals) if totals else 10
    print(f"\n{'package':<{width}}  {'lines':>6}  {'missed':>6}  {'cover':>6}")
    all_lines = all_missed = 0
    for package in sorted(totals):
        lines, missed = totals[package]
        all_lines += lines
        all_missed += missed
        print(f"{package:<{width}}  {lines:>6}  {missed:>6}  {percent(lines, missed):>6}")
    total = 100.0 * (all_lines - all_missed) / all_lines if all_lines else 0.0
    print(f"{'TOTAL':<{width}}  {all_lines:>6}  {all_missed:>6}  {percent(all_lines, all_missed):>6}")
    for count, name, text in sorted(per_file, reverse=True)[: args.files]:
        print(f"  {count:>4} missed  {name}: {text}")
    floor = float(cov.config.fail_under)
    if total < floor:
        print(f"coverage {total:.1f}% is below the floor of {floor:g}% (pyproject.toml)", file=sys.stderr)
        return 2
    print(f"coverage {total:.1f}% (floor {floor:g}%)")
    return 0


def percent(lines: int, missed: int) -> str:
    """`93.4%`, or `-` for a package with no statements."""
    return f"{100.0 * (lines - missed) / lines:.1f}%" if lines else "-"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
