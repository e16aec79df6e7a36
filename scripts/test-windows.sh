#!/usr/bin/env bash
# deepwork on Windows, built and tested here: cross-compiles deepwork.exe, runs its Windows
# suite (crates/deepwork/tests/wine) under Wine, and checks that pult and deepwork compile for
# Windows with clippy clean. Installs the Rust target, mingw-w64 and Wine when missing.
# The `windows` phase of scripts/test.sh; runs alone as well. ARGS go to nextest.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

windows_toolchain
wine_env
bridge=$(win_fixtures)
cargo build --quiet --target "$WIN_TARGET" -p deepwork --bin deepwork
exe="$(win_out debug)/deepwork.exe"

# One wineserver for the whole suite (each test starts Wine several times), ended at the end;
# `-p` fails when one already serves this prefix, which is as good.
wineserver -p 2>/dev/null || true
trap 'wineserver -k 2>/dev/null || true' EXIT

DEEPWORK_WINE_EXE="$(realpath "$exe")" DEEPWORK_WINE_BRIDGE="$(realpath "$bridge")" \
  cargo nextest run -p deepwork --test wine --run-ignored only --no-fail-fast "$@"

# pult's and deepwork's Windows-only code (the bridge's job object, the dialog's paths, the
# keyring, opening a folder, the embedded daemon without its Linux sandbox) compiled for
# Windows with clippy clean; what of it cannot run here is listed in docs/packages.md.
cargo clippy --quiet --target "$WIN_TARGET" -p deepwork -p pult --all-targets -- -D warnings
