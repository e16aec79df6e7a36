#!/usr/bin/env bash
# The night simulator (not a test): seeded synthetic nights replayed through conveyor's real
# budget policy with a virtual clock, against FCFS admission and an upper bound on the optimum.
# Prints a table per setting; docs/benchmarks/budget.md explains the columns.
#   scripts/bench-budget.sh [--seeds 20] [--first-seed 1] [--hours 10] [--server] [--block] [--live] [--sizes 0.5] [--quantile 0.9] [--margin 0.15] [--cap-factor 4] [--no-retry-floor]
#   scripts/bench-budget.sh --trace docs/traces/example-night.csv --slots 2 --threshold 10 --window-min 60 --hours 4
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p conveyor-core --example night -- "$@"
