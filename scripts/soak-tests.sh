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
apt_pkgs git stress-ng "${TAURI_BUILD_PKGS[@]}" "${TAURI_TEST_PKGS[@]}"
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
e2e_fail=0
nextest_fail=0
e2e_runs=0
nextest_runs=0
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
  sed -n '/^ *Summary \[/,$p' "$1" | grep -E '^ +(FAIL|TIMEOUT|SIG[A-Z]+|ABORT|LEAK-FAIL) +\[' | sed -E 's/^ +([A-Z-]+) +\[[^]]*\] +(\([0-9]+\/[0-9]+\) +)?/\1 /'
}

for r in $(seq 1 "$rounds"); do
  if [ "$what" != nextest ]; then
    start=$SECONDS
    e2e_tests --test-reporter=spec --test-reporter-destination=stdout \
      --test-reporter=tap --test-reporter-destination="$out/e2e-$r.tap" >"$out/e2e-$r.log" 2>&1
    rc=$?
    e2e_runs=$((e2e_runs + 1))
    mapfile -t failed < <(tap_failures "$out/e2e-$r.tap")
    if [ "$rc" -ne 0 ] && [ ${#failed[@]} -eq 0 ]; then failed=("the e2e phase exited $rc without a failed test: see e2e-$r.log"); fi
    for f in "${failed[@]}"; do failures+=("round $r, e2e: $f"); done
    [ ${#failed[@]} -gt 0 ] && e2e_fail=$((e2e_fail + 1))
    echo "round $r e2e: $([ ${#failed[@]} -eq 0 ] && echo pass || echo "FAIL (${#failed[@]})") in $((SECONDS - start)) s" >&2
  fi
  if [ "$what" != e2e ]; then
    start=$SECONDS
    rust_tests "$out/nextest-$r.log" >/dev/null
    rc=$?
    nextest_runs=$((nextest_runs + 1))
    mapfile -t failed < <(nextest_failures "$out/nextest-$r.log")
    if [ "$rc" -ne 0 ] && [ ${#failed[@]} -eq 0 ]; then failed=("the nextest phase exited $rc without a failed test: see nextest-$r.log"); fi
    for f in "${failed[@]}"; do failures+=("round $r, nextest: $f"); done
    [ ${#failed[@]} -gt 0 ] && nextest_fail=$((nextest_fail + 1))
    echo "round $r nextest: $([ ${#failed[@]} -eq 0 ] && echo pass || echo "FAIL (${#failed[@]})") in $((SECONDS - start)) s" >&2
  fi
done

{
  echo "soak: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null), $cores cores busy with stress-ng"
  [ "$e2e_runs" -gt 0 ] && echo "e2e: $e2e_runs rounds, $e2e_fail failed"
  [ "$nextest_runs" -gt 0 ] && echo "nextest: $nextest_runs rounds, $nextest_fail failed"
  if [ ${#failures[@]} -eq 0 ]; then
    echo "no failures"
  else
    printf '%s\n' "${failures[@]}"
  fi
} | tee "$out/report.txt"
[ ${#failures[@]} -eq 0 ]
