#!/usr/bin/env bash
# Make sure Debian's Chromium is on this machine: the dashboard's browser tests drive it with
# Playwright by executable path (tests/browser.py), never a browser Playwright downloads.
# `make test` runs this first.
#
#   scripts/chromium.sh            install Debian's chromium if /usr/bin/chromium is missing
#   scripts/chromium.sh --quiet    print nothing unless something is installed or fails
#
# Needs root and apt (a Debian machine, as CI is); anywhere else it says what to install.
# LOOPX_CHROMIUM names another Chromium binary for the tests instead.
set -euo pipefail

QUIET=0
for arg in "$@"; do
  case "$arg" in
    --quiet | -q) QUIET=1 ;;
    -h | --help)
      sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "chromium.sh: unknown argument: $arg" >&2
      exit 2
      ;;
  esac
done

found="${LOOPX_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$found" ]; then
  [ "$QUIET" = 1 ] || echo "chromium.sh: Chromium at $found"
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium.sh: Chromium is missing: install it (Debian: apt-get install -y chromium) or set LOOPX_CHROMIUM" >&2
  exit 1
fi

echo "chromium.sh: installing Debian's chromium for the dashboard's browser tests"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
if [ ! -x /usr/bin/chromium ]; then
  echo "chromium.sh: chromium installed but /usr/bin/chromium was not found" >&2
  exit 1
fi
echo "chromium.sh: Chromium at /usr/bin/chromium"
