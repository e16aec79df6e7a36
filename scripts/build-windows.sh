#!/usr/bin/env bash
# Cross-compiles deepwork.exe and pult.exe for Windows (x86_64-pc-windows-gnu, Debian's
# mingw-w64) and tries pult's NSIS installer. Installs the Rust target, mingw-w64 and NSIS when
# missing, and says which it could not.
#
#   scripts/build-windows.sh [--debug] [--no-installer]
#
# Prints where each result is. pult's window needs WebView2, which Wine cannot run, so what is
# built here is tried on Windows by hand (docs/packages.md says what is and is not tested).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

profile=release
installer=1
for a in "$@"; do
  case "$a" in
    --debug) profile=debug ;;
    --no-installer) installer=0 ;;
    *) echo "usage: scripts/build-windows.sh [--debug] [--no-installer] (unknown: $a)" >&2; exit 2 ;;
  esac
done
cargo_profile=()
[ "$profile" = release ] && cargo_profile=(--release)

windows_toolchain
node_check
npm_deps
# tauri embeds the front end at compile time.
npx vite build ui --logLevel warn
cargo build "${cargo_profile[@]}" --target "$WIN_TARGET" -p deepwork --bin deepwork -p pult --bin pult
out=$(win_out "$profile")
echo "built $out/deepwork.exe" >&2
echo "built $out/pult.exe" >&2
# The webview2 crates link the WebView2 loader statically on the GNU target when they ship
# its .a; when they ship only the DLL, it must sit beside pult.exe.
loader=$(find "${CARGO_TARGET_DIR:-target}/$WIN_TARGET/$profile/build" -path '*x64/WebView2Loader.dll' 2>/dev/null | head -n 1)
if [ -n "$loader" ]; then
  cp "$loader" "$out/"
  echo "copied WebView2Loader.dll beside pult.exe" >&2
fi

[ "$installer" = 1 ] || exit 0
if ! apt_pkgs nsis; then
  echo "warning: cannot install nsis (makensis): no installer, pult.exe is built" >&2
  exit 0
fi
# The NSIS bundler of the Tauri CLI, on the GNU target. It may need files it downloads; where
# it cannot, docs/packages.md says why and the exes above are the result.
tauri_profile=()
[ "$profile" = debug ] && tauri_profile=(--debug)
if npx tauri build --target "$WIN_TARGET" --bundles nsis --ignore-version-mismatches "${tauri_profile[@]}"; then
  find "${CARGO_TARGET_DIR:-target}/$WIN_TARGET/$profile/bundle/nsis" -name '*.exe' -printf 'built %p\n' >&2
else
  echo "warning: the Tauri CLI could not make the NSIS installer (above; see docs/packages.md); pult.exe is built" >&2
fi
