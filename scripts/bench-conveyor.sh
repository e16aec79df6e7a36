#!/usr/bin/env bash
# The conveyor load check (not a test): GET /api/lines and /api/lines/{id} latency with 1,000
# lines and 100,000 journal entries at a fixed rate on loopback. Prints a markdown table.
#   scripts/bench-conveyor.sh [--rate 200] [--secs 20]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p conveyor --example load -- "$@"
