#!/usr/bin/env bash
# The night simulator (not a test): seeded synthetic nights replayed through conveyor's real
# budget policy with a virtual clock, against FCFS admission and an upper bound on the optimum.
# Prints a table per setting; docs/benchmarks/budget.md explains the columns.
#   scripts/bench-budget.sh [--seeds 20] [--first-seed 1] [--hours 10] [--server] [--block] [--live] [--sizes 0.5] [--quantile 0.9] [--margin 0.15] [--cap-factor 4] [--no-retry-floor]
#   scripts/bench-budget.sh --trace docs/traces/example-night.csv --slots 2 --threshold 10 --window-min 60 --hours 4
#   scripts/bench-budget.sh --kind projects [--seeds 100] --live --block --server      # one kind (lognormal, heavy, bimodal, uniform, projects)
#   scripts/bench-budget.sh --trace docs/traces/projects-1001.csv --slots 3 --threshold 50 --window-min 300 --hours 10 --live --block --server --history OLDEST.csv … LAST.csv
#   scripts/bench-budget.sh --kind projects --seeds 20 --live --block --server --sizes 0.5 --resume-keeps 0.15  # a cut step's resumed session keeps 15% of its spend
#   scripts/bench-budget.sh --write-traces DIR --first-seed 1001 --seeds 1               # a projects night and its three earlier nights as traces
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p conveyor-core --example night -- "$@"
