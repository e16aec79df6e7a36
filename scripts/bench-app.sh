#!/usr/bin/env bash
# Measures pult beside a bare Tauri window built the same way (debug builds of the same tauri),
# in one run, under Xvfb through tauri-driver: launch → interactive page, the summed RSS of the
# app's processes idle and with a 100k-file folder open, and the time to show that folder's
# tree; and a run of 5,000 events opened and scrolled in a line's conversation view
# (scripts/bench/transcript.mjs). Writes the results into docs/benchmarks/pult.md. A script to
# run by hand, not a test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
. scripts/lib.sh

apt_pkgs "${TAURI_BUILD_PKGS[@]}" "${TAURI_TEST_PKGS[@]}"
npm_deps
cargo_need tauri-driver tauri-driver --version ^2
tree="${BENCH_DIR:-$root/bench-data/tree100k}"
node scripts/bench/gen-tree.mjs "$tree" --files 100000 --seed 1 >&2
build_app
cargo build -p bare-window --quiet
runs="${BENCH_RUNS:-5}"
xvfb-run -a -s "-screen 0 1280x800x24" node scripts/bench/app.mjs "$tree" "$runs" --write-docs
# A run of 5,000 events: opened and scrolled in the conversation view.
xvfb-run -a -s "-screen 0 1280x800x24" node scripts/bench/transcript.mjs "${BENCH_OPENS:-7}" --write-docs
