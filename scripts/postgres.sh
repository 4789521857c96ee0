#!/usr/bin/env bash
# Make sure PostgreSQL's server programs (initdb, pg_ctl) are on this machine: the tests start
# a throw-away cluster of their own with them (tests/pg.py: a private unix socket in a
# temporary folder, no TCP port, stopped at the end). `make test` runs this first.
#
#   scripts/postgres.sh            install Debian's postgresql if initdb/pg_ctl are missing
#   scripts/postgres.sh --quiet    print nothing unless something is installed or fails
#
# Needs root and apt (a Debian machine, as CI is); anywhere else it says what to install.
# Nothing is configured: the package's own cluster is not used by LoopX or its tests.
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
      echo "postgres.sh: unknown argument: $arg" >&2
      exit 2
      ;;
  esac
done

server_bin() {
  if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v pg_ctl)"
    return
  fi
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

found="$(server_bin)"
if [ -n "$found" ] && [ -x "$found/initdb" ] && [ -x "$found/pg_ctl" ]; then
  [ "$QUIET" = 1 ] || echo "postgres.sh: PostgreSQL server programs in $found"
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "postgres.sh: initdb and pg_ctl are missing: install PostgreSQL's server (Debian: apt-get install -y postgresql)" >&2
  exit 1
fi

echo "postgres.sh: installing Debian's postgresql (initdb, pg_ctl) for the tests' throw-away clusters"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
found="$(server_bin)"
if [ -z "$found" ] || [ ! -x "$found/initdb" ]; then
  echo "postgres.sh: postgresql installed but initdb was not found under /usr/lib/postgresql" >&2
  exit 1
fi
echo "postgres.sh: PostgreSQL server programs in $found"
