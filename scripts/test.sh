#!/usr/bin/env bash
# The README's test command: installs what is missing, then runs every test.
# Output ends with the test runner's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

apt_need git git
command -v node >/dev/null || { echo "Node.js is required (node not found)" >&2; exit 1; }
cargo_need cargo-nextest cargo-nextest
# The real Claude Code CLI, pinned in package.json, for conveyor's integration tests.
if [ ! -x node_modules/.bin/claude ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "installing npm packages" >&2
  npm install --no-audit --no-fund >&2
fi

echo "== format and lints" >&2
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings

echo "== tests" >&2
cargo nextest run --workspace --no-fail-fast
