#!/usr/bin/env bash
# Run the suite on another supported CPython (3.12 or 3.13): a virtual environment of its own in
# .venv-<version> (made once, re-made when pyproject.toml changes), then pytest. `make
# test-pythons` runs it for each; `make test` covers 3.11 (with coverage and the browser tests).
#
#   scripts/other-python.sh 3.13                the suite but the browser tests
#   scripts/other-python.sh 3.13 -k should_run  pytest's own arguments after the version
#
# The interpreter comes from pyenv (`pyenv prefix 3.13`, the newest 3.13.x it has), else from
# `python3.13` on PATH; neither is a clear error.
set -euo pipefail

VERSION="${1:?usage: scripts/other-python.sh 3.12|3.13 [pytest arguments]}"
shift
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

interpreter() {
  if command -v pyenv >/dev/null 2>&1; then
    local prefix
    prefix="$(pyenv prefix "$VERSION" 2>/dev/null | tail -1 || true)"
    if [ -z "$prefix" ]; then
      prefix="$(ls -d "$(pyenv root)/versions/$VERSION".* 2>/dev/null | sort -V | tail -1 || true)"
    fi
    if [ -n "$prefix" ] && [ -x "$prefix/bin/python$VERSION" ]; then
      echo "$prefix/bin/python$VERSION"
      return
    fi
  fi
  command -v "python$VERSION" || true
}

PY="$(interpreter)"
if [ -z "$PY" ]; then
  echo "other-python.sh: no CPython $VERSION here (pyenv install $VERSION, or put python$VERSION on PATH)" >&2
  exit 1
fi
VENV="$ROOT/.venv-$VERSION"
STAMP="$VENV/.installed-stamp"
if [ ! -f "$STAMP" ] || [ "$ROOT/pyproject.toml" -nt "$STAMP" ]; then
  echo "==> $VENV: $("$PY" --version), pip install -e '.[test]'"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet -e '.[test]'
  touch "$STAMP"
fi
echo "==> the suite on $("$VENV/bin/python" --version)"
exec "$VENV/bin/python" -m pytest -n 2 -q -p no:cacheprovider --ignore=tests/test_dashboard_browser.py "$@"
