# Shared helpers for the scripts: idempotent installs of what a fresh Debian 12 machine with
# Rust and Node lacks. Sourced, not run.

# apt_need CMD PACKAGE: install PACKAGE when CMD is not on PATH.
apt_need() {
  local cmd=$1 pkg=$2
  command -v "$cmd" >/dev/null 2>&1 && return 0
  echo "installing $pkg (for $cmd)" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ -z "${APT_UPDATED:-}" ]; then
    $sudo apt-get update -qq >&2
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$pkg" >&2
}

# cargo_need CMD CRATE [ARGS...]: cargo install CRATE when CMD is missing.
cargo_need() {
  local cmd=$1 crate=$2
  shift 2
  command -v "$cmd" >/dev/null 2>&1 && return 0
  echo "installing $crate (for $cmd)" >&2
  cargo install --locked "$crate" "$@" >&2
}
