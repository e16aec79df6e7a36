#!/usr/bin/env bash
# How long a developer waits after a one-line change (not a test): appends one private function
# to FILE, runs the build (by default `cargo build -p conveyor --bin conveyord`, the default dev
# profile, incremental as cargo sets it; BUILD="…" names another command), removes the line
# again, ROUNDS times after one warm-up, and prints the median, minimum and maximum wall seconds.
# FILE is restored even when the build fails.
#   scripts/bench-rebuild.sh [FILE] [ROUNDS]
#   scripts/bench-rebuild.sh crates/conveyor/src/daemon.rs 5      # a change in the daemon
#   scripts/bench-rebuild.sh crates/conveyor-core/src/lib.rs 5    # a change in the policy core
#   BUILD="cargo test --no-run -p conveyor-core" scripts/bench-rebuild.sh crates/conveyor-core/src/lib.rs 5
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-crates/conveyor/src/daemon.rs}
rounds=${2:-5}
[ -f "$file" ] || { echo "error: $file: no such file" >&2; exit 2; }

backup=$(mktemp)
cp "$file" "$backup"
trap 'cp "$backup" "$file"; rm -f "$backup"' EXIT

build() { ${BUILD:-cargo build --quiet -p conveyor --bin conveyord} >/dev/null || { echo "error: the build failed: ${BUILD:-cargo build -p conveyor --bin conveyord}" >&2; exit 1; }; }
build # the starting point: everything up to date

times=()
for round in $(seq 0 "$rounds"); do
  cp "$backup" "$file"
  printf '\n#[allow(dead_code)]\nfn rebuild_probe() -> u32 {\n    %d\n}\n' "$((round + 1000))" >>"$file"
  start=$(date +%s.%N)
  build
  end=$(date +%s.%N)
  [ "$round" -eq 0 ] && continue # the warm-up
  times+=("$(echo "$end - $start" | bc)")
done
cp "$backup" "$file"
build # leave the target as the tree is

printf '%s\n' "${times[@]}" | sort -n | awk -v f="$file" '
  { t[NR] = $1 }
  END { m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
        printf "%s: median %.1f s over %d rounds (min %.1f, max %.1f)\n", f, m, NR, t[1], t[NR] }'
