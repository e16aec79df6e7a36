#!/usr/bin/env bash
# The README's run command: installs what is missing, builds the desktop app and opens it.
# Arguments go to the app (`npm start -- /path/to/project` opens that folder).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
. scripts/lib.sh

node_check
apt_pkgs "${TAURI_BUILD_PKGS[@]}" "${CONVEYOR_RUNTIME_PKGS[@]}"
npm_deps
build_app
app="${CARGO_TARGET_DIR:-$root/target}/debug/pult"
# The embedded conveyor daemon runs `claude`: the pinned one from npm unless one is on PATH
# already (or `claude_bin` is set in the daemon's conveyor.toml, see the README).
if ! command -v claude >/dev/null 2>&1; then export PATH="$PATH:$root/node_modules/.bin"; fi
args=()
for a in "$@"; do
  # A relative folder is relative to where `npm start` was typed.
  if [ -e "${INIT_CWD:-$PWD}/$a" ]; then args+=("$(cd "${INIT_CWD:-$PWD}" && realpath "$a")"); else args+=("$a"); fi
done
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  apt_pkgs xvfb xauth
  echo "no display: starting pult under Xvfb" >&2
  exec xvfb-run -a -s "-screen 0 1280x800x24" "$app" "${args[@]}"
fi
exec "$app" "${args[@]}"
