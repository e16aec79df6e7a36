#!/usr/bin/env bash
# What the sandbox costs one agent run (docs/benchmarks/conveyor.md, "The sandbox"): the start of
# bwrap with a run's whole plan (the shape `conveyor_core::sandbox::Plan` builds: the data folder
# hidden, the worktree, the agents' folder, git's four folders and the CLI home bound, the proxy
# socket bound in) and `conveyord bridge` inside it, against the bare command; then the memory of
# those processes while a run goes on.
#
#   scripts/bench-sandbox.sh [PAIRS]        (default 30; needs bwrap)
#   CONVEYORD=path/to/conveyord scripts/bench-sandbox.sh    (a release binary already built)
#
# Prints the median wall time of each side over PAIRS runs taken in turn (sandboxed, bare, ...),
# the median of the pairs' differences, and each process's RSS, PSS and anonymous memory.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-30}
command -v bwrap >/dev/null || { echo "bwrap is missing: apt install bubblewrap" >&2; exit 1; }
if [ -z "${CONVEYORD:-}" ]; then
  cargo build --release --quiet -p conveyor --bin conveyord
  CONVEYORD=${CARGO_TARGET_DIR:-target}/release/conveyord
fi
bin=$(realpath "$CONVEYORD")

dir=$(mktemp -d /var/tmp/bench-sandbox.XXXXXX)
trap 'rm -rf "$dir"' EXIT
data=$dir/data home=$dir/home repo=$dir/proj
mkdir -p "$data/lines/L1/agent" "$home/.claude" "$repo"
git -C "$repo" init -q -b main
echo a >"$repo/a"
git -C "$repo" add a
git -C "$repo" -c user.name=b -c user.email=b@b commit -qm a
git -C "$repo" worktree add -q -b line/L1 "$data/worktrees/L1"
g=$repo/.git
mkdir -p "$g/logs/refs/heads/line"
python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$dir/proxy.sock"

sandboxed() {
  bwrap --die-with-parent --unshare-all --cap-drop ALL --new-session --ro-bind / / \
    --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run --dir /run/conveyor \
    --tmpfs "$data" --ro-bind "$repo" "$repo" --bind "$home/.claude" "$home/.claude" \
    --ro-bind "$data/lines/L1" "$data/lines/L1" --bind "$data/lines/L1/agent" "$data/lines/L1/agent" \
    --bind "$data/worktrees/L1" "$data/worktrees/L1" \
    --ro-bind "$data/worktrees/L1/.git" "$data/worktrees/L1/.git" \
    --bind "$g/objects" "$g/objects" --bind "$g/worktrees/L1" "$g/worktrees/L1" \
    --bind "$g/refs/heads/line" "$g/refs/heads/line" \
    --bind "$g/logs/refs/heads/line" "$g/logs/refs/heads/line" \
    --ro-bind "$dir/proxy.sock" /run/conveyor/proxy.sock \
    --remount-ro "$data" --remount-ro /run --chdir "$data/worktrees/L1" -- \
    "$bin" bridge --listen 127.0.0.1:3128 --socket /run/conveyor/proxy.sock -- "$@"
}

ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(((t1 - t0) / 1000)); }
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f", m/1000}'; }
sandboxed true # warm the caches
: >"$dir/a"; : >"$dir/b"; : >"$dir/d"
for _ in $(seq "$pairs"); do
  a=$(ms sandboxed true); b=$(ms true)
  echo "$a" >>"$dir/a"; echo "$b" >>"$dir/b"; echo $((a - b)) >>"$dir/d"
done
echo "start, median of $pairs pairs: sandboxed $(median <"$dir/a") ms, bare $(median <"$dir/b") ms, added $(median <"$dir/d") ms"

sandboxed sleep 2 &
# Read once the run's command is running inside (the bridge has started it), not after a guess.
until pgrep -f "^sleep 2$" >/dev/null; do :; done
echo "memory while a run goes on (kB):"
for p in $(pgrep -f "bwrap --die-with-parent --unshare-all" || true) $(pgrep -f "^$bin bridge" || true); do
  printf '  %-10s' "$(tr '\0' ' ' </proc/"$p"/cmdline | awk '{print $1 == "bwrap" ? "bwrap" : "bridge"}')"
  awk '/^(Rss|Pss|Anonymous):/ {printf " %s %s", $1, $2} END {print ""}' /proc/"$p"/smaps_rollup
done
wait
