#!/usr/bin/env bash
# The README's test command: installs what is missing, then runs every test — lints, the
# front end's unit tests, the test doubles' contracts, the desktop app end to end under Xvfb,
# deepwork.exe under Wine, and every Rust test.
#
# Each phase runs even when an earlier one failed: a red lint must not hide a red test, and a
# newcomer sees everything that is wrong in one run. At the end a table says which phases
# passed and how long each took, and the exit status is non-zero if any failed. The output
# still ends with the test runner's own summary (nextest's, printed again under the table).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

# One whole run gains nothing from incremental state, and it is a quarter of a cold target.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# What every phase needs. Without it no phase can run, so a failure here stops the run.
(
  set -e
  disk_room
  apt_pkgs "${CONVEYOR_RUNTIME_PKGS[@]}" "${CONVEYOR_TEST_PKGS[@]}" "${TAURI_BUILD_PKGS[@]}" "${TAURI_TEST_PKGS[@]}"
  node_check
  npm_deps
  fuzz_venv
  telegram_venv
  cargo_need cargo-nextest cargo-nextest
  cargo_need tauri-driver tauri-driver --version ^2
)
# (Tested apart, not with `||`: a subshell on the left of `||` runs with `set -e` ignored.)
[ $? -eq 0 ] || { echo "error: installing what the tests need failed (above); no test ran" >&2; exit 1; }

nextest_log=$(mktemp "${TMPDIR:-/tmp}/pult-nextest.XXXXXX")
trap 'rm -f "$nextest_log"' EXIT

phase fmt cargo fmt --all -- --check
# clippy, the e2e tests and the Rust tests need ui/dist: tauri embeds it at compile time.
phase build build_app
phase clippy cargo clippy --workspace --all-targets --quiet -- -D warnings
phase svelte-check svelte_check
phase vitest npx vitest run --root ui
# The mock Telegram and PlanFix servers hold to the real APIs' contracts, and the Node.js
# versions package.json declares to the packages' own.
phase contracts node --test tests/fixtures/*.test.mjs tests/node/*.test.mjs
phase e2e e2e_tests
# deepwork.exe's Windows suite under Wine and the Windows clippy of deepwork and pult; the
# script installs the Rust target, mingw-w64 and Wine itself when they are missing.
phase windows bash scripts/test-windows.sh
phase nextest rust_tests "$nextest_log"

phase_summary
# The runner's summary ends the output: nextest's closing block, or, when nextest could not
# run at all, a count of the phases in the plain form.
failed=$(phases_failed)
summary=$(nextest_summary "$nextest_log")
if [ -n "$summary" ]; then
  echo "$summary" >&2
else
  echo "phases: $((${#PHASE_RESULTS[@]} - failed)) passed, $failed failed" >&2
fi
[ "$failed" -eq 0 ]
