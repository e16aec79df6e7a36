#!/usr/bin/env bash
# Soaks the tests that can depend on timing: runs the end-to-end phase and the Rust phase N
# times, one after the other, while stress-ng keeps every core busy, and reports every failure
# with its test name. A suite that passes only on an idle machine fails here.
#
#   scripts/soak-tests.sh N [e2e|nextest|both]     (default: both)
#
# Everything is built before the load starts (the soak is of the tests, not the compiler). Each
# round's output is kept under tests/artifacts/soak-<time>/ (e2e-R.log and .tap, nextest-R.log)
# and the report, printed at the end, in report.txt there. Exit 0 only when no round failed.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

usage() {
  echo "usage: scripts/soak-tests.sh N [e2e|nextest|both]" >&2
  exit 2
}
rounds=${1:-}
what=${2:-both}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || usage
case "$what" in e2e | nextest | both) ;; *) usage ;; esac

export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
set -e
apt_pkgs stress-ng "${CONVEYOR_RUNTIME_PKGS[@]}" "${CONVEYOR_TEST_PKGS[@]}" "${TAURI_BUILD_PKGS[@]}" "${TAURI_TEST_PKGS[@]}"
npm_deps
fuzz_venv
cargo_need cargo-nextest cargo-nextest
cargo_need tauri-driver tauri-driver --version ^2
build_app
cargo nextest run --workspace --no-run --cargo-quiet
set +e

out="tests/artifacts/soak-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
cores=$(nproc)
# The load: one busy worker per core at the tests' own priority, as another build would be.
stress-ng --cpu "$cores" --cpu-method matrixprod --quiet &
load=$!
trap 'kill "$load" 2>/dev/null; wait "$load" 2>/dev/null' EXIT
echo "soak: $rounds round(s) of $what under stress-ng --cpu $cores; logs in $out" >&2

failures=()
# The failed tests of a node --test TAP file, as "file: test" (the file read from the failed
# test's `location`).
tap_failures() {
  awk '
    function flush() { if (pending != "") { print pending; pending = "" } }
    /^(ok|not ok) [0-9]+ - / || /^# Subtest: / { flush() }
    /^not ok [0-9]+ - / { t = $0; sub(/^not ok [0-9]+ - /, "", t); sub(/ # .*/, "", t); pending = t }
    /^ +location: / && pending != "" {
      f = $0; sub(/^ +location: \x27?/, "", f); sub(/\x27$/, "", f); sub(/:[0-9]+:[0-9]+$/, "", f); sub(/.*\//, "", f)
      print f ": " pending; pending = ""
    }
    END { flush() }
  ' "$1"
}
# The failed tests of a nextest log: the lines under its summary that name them.
nextest_failures() {
  nextest_summary "$1" | grep -E '^ +(FAIL|TIMEOUT|SIG[A-Z]+|ABORT|LEAK-FAIL) +\[' | sed -E 's/^ +([A-Z-]+) +\[[^]]*\] +(\([0-9]+\/[0-9]+\) +)?/\1 /'
}

# One phase of round $r: PHASE's command (the rest of the arguments) has run with exit status
# RC; LIST_FAILED prints its failed tests from LOG. Counts and names what failed.
declare -A runs=([e2e]=0 [nextest]=0) failed_rounds=([e2e]=0 [nextest]=0)
record() {
  local phase=$1 rc=$2 log=$3 list_failed=$4 start=$5 failed
  runs[$phase]=$((runs[$phase] + 1))
  mapfile -t failed < <("$list_failed" "$log")
  if [ "$rc" -ne 0 ] && [ ${#failed[@]} -eq 0 ]; then failed=("the $phase phase exited $rc without a failed test: see $log"); fi
  for f in "${failed[@]}"; do failures+=("round $r, $phase: $f"); done
  [ ${#failed[@]} -gt 0 ] && failed_rounds[$phase]=$((failed_rounds[$phase] + 1))
  echo "round $r $phase: $([ ${#failed[@]} -eq 0 ] && echo pass || echo "FAIL (${#failed[@]})") in $((SECONDS - start)) s" >&2
}

for r in $(seq 1 "$rounds"); do
  if [ "$what" != nextest ]; then
    start=$SECONDS
    e2e_tests --test-reporter=spec --test-reporter-destination=stdout \
      --test-reporter=tap --test-reporter-destination="$out/e2e-$r.tap" >"$out/e2e-$r.log" 2>&1
    record e2e $? "$out/e2e-$r.tap" tap_failures "$start"
  fi
  if [ "$what" != e2e ]; then
    start=$SECONDS
    rust_tests "$out/nextest-$r.log" >/dev/null
    record nextest $? "$out/nextest-$r.log" nextest_failures "$start"
  fi
done

{
  echo "soak: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null), $cores cores busy with stress-ng"
  for phase in e2e nextest; do
    [ "${runs[$phase]}" -gt 0 ] && echo "$phase: ${runs[$phase]} rounds, ${failed_rounds[$phase]} failed"
  done
  if [ ${#failures[@]} -eq 0 ]; then
    echo "no failures"
  else
    printf '%s\n' "${failures[@]}"
  fi
} | tee "$out/report.txt"
[ ${#failures[@]} -eq 0 ]
