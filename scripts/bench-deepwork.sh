#!/usr/bin/env bash
# Benchmark deepwork's tools against ripgrep and fd on a generated 100k-file tree, and a whole
# deepwork run (first message, FIND, LIST, two calls of the fake bridge) against `rg -F -n` +
# `fd -g` on that tree and on a real one (cargo's registry sources, when present); rewrite the
# generated section of docs/benchmarks/deepwork.md. A script to run by hand, not a test.
#
#   scripts/bench-deepwork.sh
#
# Environment (all optional):
#   BENCH_DIR       tree to use/generate        (default: <repo>/bench-data/tree100k, gitignored)
#   BENCH_FILES     files in the tree            (default: 100000)
#   BENCH_SEED      generator seed               (default: 1)
#   BENCH_RUNS      hyperfine runs per command   (default: 10)
#   BENCH_WARMUP    hyperfine warm-up runs       (default: 3)
#   BENCH_STEPS     steps of `tool loop`         (default: 20)
#   BENCH_LOOP_RUNS measured runs of `tool loop` (default: 3, after one warm-up run)
#   BENCH_TOOL      a prebuilt driver to use instead of building the `tool` example
#   BENCH_DEEPWORK  a prebuilt `deepwork` binary for the whole-run cases (else built with the driver)
#   BENCH_REAL_DIR  the real tree of the whole-run case (default: ~/.cargo/registry/src; none: skip)
#   BENCH_REAL_FIND the text the real tree's run looks for (default: "unsafe impl Send for")
#   BENCH_STRICT=1  stop before timing when a correctness check fails
#   BENCH_NO_DOC=1  print the table only, leave docs/benchmarks/deepwork.md alone
#   BENCH_DOC       the document to rewrite      (default: <repo>/docs/benchmarks/deepwork.md)
#   BENCH_NO_WAIT=1 do not wait for an idle machine (no rustc/cargo, CPU below BENCH_MAX_CPU %, default 15)
#
# Exit status: 0 when every correctness check passed (whether or not the speed targets were met),
# 1 when a check failed, 2 on a setup error.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-$ROOT/bench-data/tree100k}
BENCH_FILES=${BENCH_FILES:-100000}
BENCH_SEED=${BENCH_SEED:-1}
BENCH_RUNS=${BENCH_RUNS:-10}
BENCH_WARMUP=${BENCH_WARMUP:-3}
BENCH_STEPS=${BENCH_STEPS:-20}
BENCH_LOOP_RUNS=${BENCH_LOOP_RUNS:-3}
LOOP_TARGET_MS=50
DOC=${BENCH_DOC:-$ROOT/docs/benchmarks/deepwork.md}
RESULTS=$ROOT/bench-data/results
GEN=$ROOT/scripts/bench/gen-tree.mjs
REPORT=$ROOT/scripts/bench/report.mjs

say() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'bench-deepwork: %s\n' "$*" >&2; exit 2; }

# ---------------------------------------------------------------- tools
say "tools"
missing=()
command -v node >/dev/null || missing+=(nodejs)
command -v git >/dev/null || missing+=(git)
command -v rg >/dev/null || missing+=(ripgrep)
command -v fdfind >/dev/null || command -v fd >/dev/null || missing+=(fd-find)
command -v hyperfine >/dev/null || missing+=(hyperfine)
if ((${#missing[@]})); then
  SUDO=
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  echo "installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  $SUDO DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Debian names fd's binary fdfind; elsewhere it is fd
FD=$(command -v fdfind || command -v fd) || die "fd not found after install"
RG=$(command -v rg)
HF=$(command -v hyperfine)
RG_VERSION=$("$RG" --version | sed -n 1p)
FD_VERSION=$("$FD" --version | sed -n 1p)
HF_VERSION=$("$HF" --version | sed -n 1p)
echo "$RG_VERSION; $FD_VERSION; $HF_VERSION" >&2

# ---------------------------------------------------------------- tree
say "tree: $BENCH_DIR"
node "$GEN" "$BENCH_DIR" --files "$BENCH_FILES" --seed "$BENCH_SEED"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
STAMP=$BENCH_DIR/.bench-stamp.json
RARE=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).rare)' "$STAMP")
COMMON=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).common)' "$STAMP")

# ---------------------------------------------------------------- driver
if [[ -n ${BENCH_TOOL:-} ]]; then
  TOOL=$BENCH_TOOL
  REVISION="BENCH_TOOL=$TOOL"
else
  say "build: cargo build --release -p deepwork --example tool --bin deepwork"
  [[ -f $ROOT/crates/deepwork/examples/tool.rs ]] || die "crates/deepwork/examples/tool.rs does not exist yet"
  (cd "$ROOT" && cargo build --release -p deepwork --example tool --bin deepwork)
  TARGET_DIR=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')
  TOOL=$TARGET_DIR/release/examples/tool
  BENCH_DEEPWORK=${BENCH_DEEPWORK:-$TARGET_DIR/release/deepwork}
  if REVISION=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
    [[ -z $(git -C "$ROOT" status --porcelain -- crates/deepwork 2>/dev/null) ]] || REVISION="$REVISION + uncommitted changes"
    REVISION="commit $REVISION"
  else
    REVISION="working tree (no commit yet)"
  fi
fi
[[ -x $TOOL ]] || die "driver $TOOL is not executable"
DEEPWORK=${BENCH_DEEPWORK:-}
[[ -n $DEEPWORK && -x $DEEPWORK ]] || die "no deepwork binary for the whole-run cases: set BENCH_DEEPWORK"
BRIDGE=$ROOT/tests/fixtures/fake-bridge.mjs
REAL_DIR=${BENCH_REAL_DIR-$HOME/.cargo/registry/src}
REAL_FIND=${BENCH_REAL_FIND:-unsafe impl Send for}
if [[ -n $REAL_DIR && ! -d $REAL_DIR ]]; then
  echo "bench-deepwork: no real tree at $REAL_DIR: the real tree's whole run is skipped" >&2
  REAL_DIR=
fi
[[ -z $REAL_DIR ]] || REAL_DIR=$(cd "$REAL_DIR" && pwd)

rm -rf "$RESULTS"
mkdir -p "$RESULTS"

# ---------------------------------------------------------------- correctness
say "correctness"
# Every command runs inside the tree, as a user would run rg and fd; deepwork gets --dir.
cd "$BENCH_DIR"
"$TOOL" find "$RARE" --dir "$BENCH_DIR" >"$RESULTS/find-rare.deepwork.out"
"$RG" -F -n -- "$RARE" >"$RESULTS/find-rare.rg.out" || true
"$TOOL" find "$COMMON" --dir "$BENCH_DIR" >"$RESULTS/find-common.deepwork.out"
"$RG" -F -n -- "$COMMON" >"$RESULTS/find-common.rg.out" || true
"$TOOL" list '**/*.rs' --dir "$BENCH_DIR" >"$RESULTS/list-rs.deepwork.out"
"$FD" --type f -g '*.rs' >"$RESULTS/list-rs.fd.out"
"$TOOL" walk --dir "$BENCH_DIR" >"$RESULTS/walk.deepwork.out"
"$FD" --type f >"$RESULTS/walk.fd.out"
"$TOOL" tree --dir "$BENCH_DIR" >"$RESULTS/tree.deepwork.out"

# A whole run: the real `deepwork` binary with the fake bridge (tests/fixtures), whose first
# answer asks for a FIND and a LIST and whose second answer asks for nothing. `run_setup <case>
# <dir> <text> <glob>` writes its config and scenario; the hyperfine run later removes the
# bridge's call log before each run (the fake bridge numbers its calls by that log).
run_setup() {
  local dir=$2 text=$3 glob=$4 d=$RESULTS/$1
  mkdir -p "$d"
  TEXT="$text" GLOB="$glob" BRIDGE="$BRIDGE" node -e '
    const fs = require("fs"), e = process.env, d = process.argv[1];
    fs.writeFileSync(d + "/config.json", JSON.stringify({ bridge: e.BRIDGE, chat: "bench", steps: 4 }));
    // the same run with each bridge started only when its message is ready, as before issue 18
    fs.writeFileSync(d + "/config-late.json", JSON.stringify({ bridge: e.BRIDGE, chat: "bench", steps: 4, prespawn: false }));
    fs.writeFileSync(d + "/scenario.json", JSON.stringify({ steps: [
      { answer: `=== FIND: ${e.TEXT} ===\n=== LIST: **/${e.GLOB} ===\n` },
      { answer: "Done." } ] }));
  ' "$d"
  # the same run once, to check it did what it is timed for
  rm -f "$d/calls.jsonl"
  (cd "$dir" && FAKE_BRIDGE_SCENARIO=$d/scenario.json FAKE_BRIDGE_LOG=$d/calls.jsonl \
    "$DEEPWORK" --config "$d/config.json" --dir "$dir" --json "Where is it?" >"$d/run.json" 2>"$d/run.log")
  rm -f "$d/calls.jsonl"
  (cd "$dir" && FAKE_BRIDGE_SCENARIO=$d/scenario.json FAKE_BRIDGE_LOG=$d/calls.jsonl \
    "$DEEPWORK" --config "$d/config-late.json" --dir "$dir" --json "Where is it?" >"$d/run-late.json" 2>"$d/run-late.log")
  (cd "$dir" && "$RG" -F -n -- "$text" | wc -l >"$d/rg.count") || true
  (cd "$dir" && "$FD" --type f -g "$glob" | wc -l >"$d/fd.count")
  # rg and fd only honour .gitignore inside a git repository; deepwork honours it everywhere
  (cd "$dir" && "$RG" --no-require-git -F -n -- "$text" | wc -l >"$d/rg-no-require-git.count") || true
  printf '%s\n%s\n%s\n' "$dir" "$text" "$glob" >"$d/case.txt"
}
run_setup run-generated "$BENCH_DIR" "$RARE" '*.rs'
[[ -z $REAL_DIR ]] || run_setup run-real "$REAL_DIR" "$REAL_FIND" '*.rs'
"$TOOL" index --dir "$BENCH_DIR" >"$RESULTS/index.out"
[[ -z $REAL_DIR ]] || "$TOOL" index --dir "$REAL_DIR" >"$RESULTS/index-real.out"

CPU=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | sed 's/^model name[[:space:]]*:[[:space:]]*//' || true)
MEM=$(awk '/^MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo 2>/dev/null || true)
OS="$(uname -sr)"
RUSTC_VERSION=$(rustc --version 2>/dev/null || echo "rustc ?")
DIR_DISPLAY=$BENCH_DIR
[[ $BENCH_DIR == "$ROOT"/* ]] && DIR_DISPLAY=${BENCH_DIR#"$ROOT"/}

write_meta() {
  # everything the report needs that is not in the results' own files
  DIR="$BENCH_DIR" DIR_DISPLAY="$DIR_DISPLAY" STAMP="$STAMP" DOC="$DOC" NPROC="$(nproc)" CPU="${CPU:-unknown CPU}" \
    MEM="${MEM:-? RAM}" OS="$OS" RG_VERSION="$RG_VERSION" FD_VERSION="$FD_VERSION" HF_VERSION="$HF_VERSION" \
    RUSTC_VERSION="$RUSTC_VERSION" REVISION="$REVISION" CLK_TCK="$(getconf CLK_TCK 2>/dev/null || echo 100)" WARMUP="$BENCH_WARMUP" RUNS="$BENCH_RUNS" \
    STEPS="$BENCH_STEPS" LOOP_TARGET_MS="$LOOP_TARGET_MS" BUSY_NOTE="${BUSY_NOTE:-}" REAL_DIR="$REAL_DIR" \
    node -e '
      const fs = require("fs"), e = process.env;
      const st = JSON.parse(fs.readFileSync(e.STAMP, "utf8"));
      const meta = {
        date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
        command: "scripts/bench-deepwork.sh",
        dir: e.DIR, dir_display: e.DIR_DISPLAY, doc: e.DOC,
        nproc: Number(e.NPROC), cpu: e.CPU, mem: e.MEM, os: e.OS,
        rg_version: e.RG_VERSION, fd_version: e.FD_VERSION, hyperfine_version: e.HF_VERSION,
        rustc_version: e.RUSTC_VERSION, revision: e.REVISION, clk_tck: Number(e.CLK_TCK),
        warmup: Number(e.WARMUP), runs: Number(e.RUNS), loop_steps: Number(e.STEPS),
        loop_target_ms: Number(e.LOOP_TARGET_MS), busy_note: e.BUSY_NOTE, real_dir: e.REAL_DIR,
        params: st.params, stats: st.stats, rare: st.rare, rare_lines: st.rare_lines, common: st.common,
      };
      fs.writeFileSync(process.argv[1], JSON.stringify(meta, null, 2) + "\n");
    ' "$RESULTS/meta.json"
}
write_meta

CHECKS_OK=1
node "$REPORT" check "$RESULTS" || CHECKS_OK=0
if [[ $CHECKS_OK == 0 && ${BENCH_STRICT:-0} == 1 ]]; then
  echo "bench-deepwork: a correctness check failed and BENCH_STRICT=1: not timing" >&2
  exit 1
fi

# ---------------------------------------------------------------- quiet machine
# Two cores: a compile or a load test running beside the benchmark makes every number
# meaningless. Each timed case waits until no rustc/cargo runs and the cores are idle (30 min in
# all at most), and a case during which a build was seen is named in the report; the report also
# marks a figure whose spread (sd) is over 10% of its mean.
BUSY_NOTE=
WAITED=0
GAVE_UP=0
busy() { command -v pgrep >/dev/null && { pgrep -x rustc >/dev/null || pgrep -x cargo >/dev/null; }; }
# Percent of all cores busy over the next 2 s (from /proc/stat; 0 where it is missing).
cpu_busy() {
  [[ -r /proc/stat ]] || { echo 0; return; }
  local a b
  a=$(sed -n 1p /proc/stat)
  sleep 2
  b=$(sed -n 1p /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN {
    n = split(a, x); split(b, y); tot = 0; idle = 0
    for (i = 2; i <= n; i++) tot += y[i] - x[i]
    idle = (y[5] - x[5]) + (y[6] - x[6])
    pct = (tot > 0) ? 100 * (tot - idle) / tot : 0
    printf "%d\n", pct }'
}
BENCH_MAX_CPU=${BENCH_MAX_CPU:-15}
wait_idle() { # until no rustc/cargo runs and the cores are idle (below BENCH_MAX_CPU %)
  [[ ${BENCH_NO_WAIT:-0} == 1 || $GAVE_UP == 1 ]] && return 0
  local said=0 pct
  while :; do
    if ! busy; then
      pct=$(cpu_busy)
      [[ $pct =~ ^[0-9]+$ ]] || pct=0
      ((pct < BENCH_MAX_CPU)) && return 0
      pct="$pct% CPU"
    else
      pct=build
      sleep 2
    fi
    if ((WAITED >= 1800)); then
      GAVE_UP=1
      return 0
    fi
    if ((said == 0)); then echo "waiting for the machine to be idle (now: $pct; BENCH_NO_WAIT=1 to skip)" >&2; said=1; fi
    sleep 3
    WAITED=$((WAITED + 5))
  done
}
# A sampler looks once a second, while a case is timed, whether a build started meanwhile.
WATCH_PID=
watch_start() { # watch_start <case>
  local flag=$RESULTS/busy-$1
  rm -f "$flag"
  # CPU time of the whole machine over the case: the report subtracts what the timed commands
  # used (hyperfine's user + system) and names a case that had other load beside it
  { sed -n 1p /proc/stat; date +%s.%N; } >"$RESULTS/cpu-$1.start" 2>/dev/null || true
  (while :; do
    if busy; then touch "$flag"; fi
    sleep 1
  done) &
  WATCH_PID=$!
}
watch_stop() { # watch_stop <case>
  { sed -n 1p /proc/stat; date +%s.%N; } >"$RESULTS/cpu-$1.end" 2>/dev/null || true
  kill "$WATCH_PID" 2>/dev/null || true
  wait "$WATCH_PID" 2>/dev/null || true
  WATCH_PID=
  if [[ -e $RESULTS/busy-$1 ]]; then
    BUSY_NOTE="${BUSY_NOTE:+$BUSY_NOTE, }$1"
    echo "bench-deepwork: a rustc/cargo process ran during '$1': its figures are unreliable" >&2
  fi
}
trap '[[ -z $WATCH_PID ]] || kill "$WATCH_PID" 2>/dev/null || true' EXIT

# ---------------------------------------------------------------- timing
# --shell=none: no shell start-up in the figures. --output=null: both sides write to /dev/null.
# (--output=pipe adds hyperfine's reader to the figures: on 2 cores it costs rg ~40% on the common
# text. rg 13 does not cut its work short on /dev/null: its common-text time there is the full
# search's, ~400 ms vs ~360 ms for the rare text on the 100k tree.)
q() { printf '%q' "$1"; }
T=$(q "$TOOL")
D=$(q "$BENCH_DIR")
bench() { # bench <case> <deepwork command> <competitor name> <competitor command>
  wait_idle
  say "time: $1"
  watch_start "$1"
  "$HF" --shell=none --warmup "$BENCH_WARMUP" --runs "$BENCH_RUNS" --output=null --style basic \
    --export-json "$RESULTS/hyperfine-$1.json" -n deepwork "$2" -n "$3" "$4" >&2
  watch_stop "$1"
}
bench find-rare "$T find $(q "$RARE") --dir $D" rg "$(q "$RG") -F -n $(q "$RARE")"
bench find-common "$T find $(q "$COMMON") --dir $D" rg "$(q "$RG") -F -n $(q "$COMMON")"
bench list-rs "$T list '**/*.rs' --dir $D" fd "$(q "$FD") --type f -g '*.rs'"
bench walk "$T walk --dir $D" fd "$(q "$FD") --type f"
bench tree "$T tree --dir $D" fd "$(q "$FD") --type f"

# whole runs: deepwork (its two bridge start-ups included) against rg and fd, each timed alone;
# the report divides deepwork's time by the sum of theirs. One bridge call alone (Node's start-up
# and the fake bridge's work, any small input) is timed too, and the run with `"prespawn": false`
# (each bridge started only when its message is ready), to show deepwork's own share and what
# starting the bridge early gains.
bench_run() { # bench_run <case>
  local d=$RESULTS/$1 dir text glob
  { read -r dir; read -r text; read -r glob; } <"$d/case.txt"
  wait_idle
  say "time: $1 ($dir)"
  watch_start "$1"
  (cd "$dir" && FAKE_BRIDGE_SCENARIO=$d/scenario.json FAKE_BRIDGE_LOG=$d/calls.jsonl \
    "$HF" --shell=none --warmup "$BENCH_WARMUP" --runs "$BENCH_RUNS" --output=null --style basic \
    --prepare "rm -f $(q "$d/calls.jsonl")" --export-json "$RESULTS/hyperfine-$1.json" \
    -n deepwork "$(q "$DEEPWORK") --config $(q "$d/config.json") --dir $(q "$dir") $(q "Where is it?")" \
    -n rg "$(q "$RG") -F -n $(q "$text")" \
    -n fd "$(q "$FD") --type f -g $(q "$glob")" \
    -n bridge "node $(q "$BRIDGE") ask --chat bench --file $(q "$d/config.json") --out $(q "$d/bridge.out") --quiet" \
    -n deepwork-late "$(q "$DEEPWORK") --config $(q "$d/config-late.json") --dir $(q "$dir") $(q "Where is it?")" >&2)
  watch_stop "$1"
}
bench_run run-generated
[[ -z $REAL_DIR ]] || bench_run run-real

wait_idle
watch_start loop
say "time: loop (--steps $BENCH_STEPS, 1 warm-up + $BENCH_LOOP_RUNS runs)"
"$TOOL" loop --dir "$BENCH_DIR" --steps "$BENCH_STEPS" --find "$RARE" >/dev/null
for ((i = 1; i <= BENCH_LOOP_RUNS; i++)); do
  "$TOOL" loop --dir "$BENCH_DIR" --steps "$BENCH_STEPS" --find "$RARE" >"$RESULTS/loop-$i.out"
  tail -n1 "$RESULTS/loop-$i.out" >&2
done
say "time: loop with a live index (--live: pult's case)"
"$TOOL" loop --dir "$BENCH_DIR" --steps "$BENCH_STEPS" --find "$RARE" --live >/dev/null
for ((i = 1; i <= BENCH_LOOP_RUNS; i++)); do
  "$TOOL" loop --dir "$BENCH_DIR" --steps "$BENCH_STEPS" --find "$RARE" --live >"$RESULTS/live-$i.out"
  tail -n1 "$RESULTS/live-$i.out" >&2
done
watch_stop loop
[[ -z $BUSY_NOTE ]] || BUSY_NOTE="a rustc/cargo process ran during: $BUSY_NOTE (figures unreliable)"
((GAVE_UP == 0)) || BUSY_NOTE="${BUSY_NOTE:+$BUSY_NOTE; }the machine was not idle after 30 min of waiting, timed anyway (figures unreliable)"

# ---------------------------------------------------------------- report
write_meta
say "report"
node "$REPORT" report "$RESULTS"
echo "raw results: $RESULTS" >&2
((CHECKS_OK)) || { echo "bench-deepwork: a correctness check FAILED (see above)" >&2; exit 1; }
