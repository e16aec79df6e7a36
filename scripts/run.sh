#!/usr/bin/env bash
# The README's run command. Until the desktop app lands it builds the deepwork CLI and runs
# it: with arguments, as `deepwork ARGS`; without, its offline selftest and its --check of the
# configured bridge.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release --quiet -p deepwork
bin="${CARGO_TARGET_DIR:-$root/target}/release/deepwork"
if [ $# -gt 0 ]; then
  cd "${INIT_CWD:-$root}"
  exec "$bin" "$@"
fi
"$bin" --selftest
echo
"$bin" --check || true
echo
echo "Ask about a folder:  npm start -- --dir /path/to/project \"your question\""
