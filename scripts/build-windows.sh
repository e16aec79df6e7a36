#!/usr/bin/env bash
# Cross-compiles deepwork.exe and pult.exe for Windows (x86_64-pc-windows-gnu,
# Debian's mingw-w64) and tries pult's NSIS installer. Installs the Rust target, mingw-w64 and
# NSIS when missing, and says which it could not.
#
#   scripts/build-windows.sh [--debug] [--no-installer]
#
# Prints where each result is. pult's window needs WebView2, which Wine cannot run, so what is
# built here is tried on Windows by hand (docs/packages.md, "Windows, built here", says what is
# and is not tested, and what this script printed when it was last run to the end).
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
cargo_profile=() tauri_profile=()
[ "$profile" = release ] && cargo_profile=(--release)
[ "$profile" = debug ] && tauri_profile=(--debug)

windows_toolchain
node_check
npm_deps
out=$(win_out "$profile")

cargo build --locked "${cargo_profile[@]}" --target "$WIN_TARGET" -p deepwork --bin deepwork
win_check_imports "$out/deepwork.exe"

# pult.exe through Tauri's CLI, not plain cargo: it builds with tauri's `custom-protocol`, the
# app as installed (the front end served from the binary, no dev server), and patches the
# bundle type the installer needs. (`npm run package` on Windows adds conveyord as a sidecar;
# this cross-build does not, see docs/packages.md.)
npx vite build ui --logLevel warn
npx tauri build --ci --no-bundle --target "$WIN_TARGET" --ignore-version-mismatches \
  "${tauri_profile[@]}"
# On the GNU target webview2-com-sys links WebView2's loader as a DLL (its static .lib is for
# MSVC only), and tauri-build copies WebView2Loader.dll beside pult.exe; the NSIS bundler
# packs it from there. Without it pult.exe does not start on Windows at all.
[ -f "$out/WebView2Loader.dll" ] || {
  echo "error: $out/WebView2Loader.dll is missing: pult.exe imports it (tauri-build copies it from webview2-com-sys)" >&2
  exit 1
}
win_check_imports "$out/pult.exe" WebView2Loader.dll
for f in deepwork.exe pult.exe WebView2Loader.dll; do
  echo "built $out/$f ($(du -h "$out/$f" | cut -f1))" >&2
done
[ "$installer" = 1 ] || exit 0

if ! apt_pkgs nsis; then
  echo "warning: cannot install nsis (makensis): no installer; the exes above are built" >&2
  exit 0
fi
# The NSIS bundler (Tauri's CLI) runs the system makensis with Debian's stock plugins, and one
# plugin of Tauri's own, nsis_tauri_utils.dll, which it downloads once from the
# tauri-apps/nsis-tauri-utils release on GitHub into its cache, checks by SHA-1, and fetches
# again whenever the file there differs. No package registry ships it, so a machine without
# GitHub cannot make the installer until that file is put in the cache by hand.
plugin=${XDG_CACHE_HOME:-$HOME/.cache}/tauri/NSIS/Plugins/x86-unicode/additional/nsis_tauri_utils.dll
if npx tauri bundle --ci --bundles nsis --target "$WIN_TARGET" "${tauri_profile[@]}"; then
  find "$out/bundle/nsis" -name '*.exe' -printf 'built %p (%s bytes)\n' >&2
elif [ ! -f "$plugin" ]; then
  echo "warning: no installer: Tauri's NSIS bundler could not download nsis_tauri_utils.dll (v0.5.3, release nsis_tauri_utils-v0.5.3 of tauri-apps/nsis-tauri-utils on GitHub, SHA-1 75197fee3c6a814fe035788d1c34ead39349b860) into $plugin; put that file there and run again. The exes above are built." >&2
else
  echo "warning: Tauri's NSIS bundler failed (above); the exes above are built" >&2
fi
