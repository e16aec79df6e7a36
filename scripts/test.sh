#!/usr/bin/env bash
# The README's test command: installs what is missing, then runs every test — lints, the
# front end's unit tests, the desktop app end to end under Xvfb, and every Rust test. The
# output ends with the test runner's summary (nextest, last).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

# One whole run gains nothing from incremental state, and it is a quarter of a cold target.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
disk_room

apt_pkgs git "${TAURI_BUILD_PKGS[@]}" "${TAURI_TEST_PKGS[@]}"
command -v node >/dev/null || { echo "Node.js is required (node not found)" >&2; exit 1; }
npm_deps
fuzz_venv
cargo_need cargo-nextest cargo-nextest
cargo_need tauri-driver tauri-driver --version ^2

echo "== format and lints" >&2
cargo fmt --all -- --check
build_app # clippy and the tests need ui/dist: tauri embeds it at compile time
cargo clippy --workspace --all-targets --quiet -- -D warnings
npx svelte-check --workspace ui --threshold error --output machine | tail -n 3

echo "== front end unit tests" >&2
npx vitest run --root ui

echo "== test doubles: the mock Telegram and PlanFix servers hold to their contracts" >&2
node --test tests/fixtures/*.test.mjs

echo "== end to end: the app under Xvfb" >&2
xvfb-run -a -s "-screen 0 1280x800x24" node --test --test-concurrency=1 tests/e2e/*.e2e.mjs

echo "== Rust tests" >&2
cargo nextest run --workspace --no-fail-fast
