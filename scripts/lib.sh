# Shared helpers for the scripts: idempotent installs of what a fresh Debian 12 machine with
# Rust and Node lacks. Sourced, not run.

# cargo_need CMD CRATE [ARGS...]: cargo install CRATE when CMD is missing.
cargo_need() {
  local cmd=$1 crate=$2
  shift 2
  command -v "$cmd" >/dev/null 2>&1 && return 0
  echo "installing $crate (for $cmd)" >&2
  cargo install --locked "$crate" "$@" >&2
}

# apt_pkgs PKG...: install the Debian packages that are not installed yet.
apt_pkgs() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ -z "${APT_UPDATED:-}" ]; then
    $sudo apt-get update -qq >&2
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# The system packages the desktop app needs to build (webkit2gtk) and to be tested headless
# (xclip reads what the app put on the X clipboard).
TAURI_BUILD_PKGS=(libwebkit2gtk-4.1-dev libdbus-1-dev build-essential pkg-config libssl-dev file)
TAURI_TEST_PKGS=(xvfb xauth webkit2gtk-driver xclip)
# What the conveyor daemon runs, in pult or alone: git, and bubblewrap, the sandbox of every
# agent run (without it the preflight blocks every step; the packages depend on both).
CONVEYOR_RUNTIME_PKGS=(git bubblewrap)
# What only its tests run: curl, through the sandbox's proxy (tests/it/sandbox_net.rs), and
# Chromium, which the Telegram checks' mini-app scenarios drive through playwright-core (the
# npm devDependency; it downloads no browser) in tests/it/telegram.rs.
CONVEYOR_TEST_PKGS=(curl chromium)

# node_check: Node.js is there and one the repository runs on (package.json `engines.node`),
# or a clear error saying which is needed and where to get it.
node_check() {
  command -v node >/dev/null || { echo "error: Node.js is required (node not found): take Node 22 LTS from nodejs.org or NodeSource" >&2; return 1; }
  node scripts/node-version.mjs
}

# npm_deps: install the node packages of package-lock.json when node_modules is missing or
# older than the lock file. `npm install`, not `npm ci`: vite 8 names an optional,
# Windows-only package the registry here does not serve, which `npm ci` refuses and
# `npm install` skips, as optional packages should be.
npm_deps() {
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "installing npm packages" >&2
    npm install --no-audit --no-fund >&2
  fi
}

# build_app: the front end, then the desktop app (debug; the front end is embedded in it),
# and `conveyord` (the remote daemon the e2e tests start on their own port).
build_app() {
  npx vite build ui --logLevel warn
  cargo build -p pult -p conveyor --bins --quiet
}

# fuzz_venv: the API fuzzer (schemathesis, pinned in tests/fuzz/requirements.txt) in .venv at
# the repository's root, reinstalled when the requirements change. Debian's python3 lacks
# venv's pip until python3-venv is installed.
fuzz_venv() {
  if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    apt_pkgs python3 python3-venv
  fi
  if [ ! -x .venv/bin/st ] || [ tests/fuzz/requirements.txt -nt .venv/.installed ]; then
    echo "installing the API fuzzer into .venv" >&2
    python3 -m venv .venv >&2
    .venv/bin/pip install --quiet --disable-pip-version-check -r tests/fuzz/requirements.txt >&2
    touch .venv/.installed
  fi
}

# telegram_venv: the Telegram checks' user client (kurigram, pinned in
# crates/conveyor/telegram/requirements.txt) in .venv-telegram, for the test that builds the
# real transport without reaching Telegram (tests/it/telegram.rs); reinstalled when the
# requirements change. Pure Python: about 12 s and 70 MB (most of it pip).
telegram_venv() {
  if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    apt_pkgs python3 python3-venv
  fi
  local req=crates/conveyor/telegram/requirements.txt
  if [ ! -x .venv-telegram/bin/python ] || [ "$req" -nt .venv-telegram/.installed ]; then
    echo "installing the Telegram checks' client into .venv-telegram" >&2
    python3 -m venv .venv-telegram >&2
    .venv-telegram/bin/pip install --quiet --disable-pip-version-check -r "$req" >&2
    touch .venv-telegram/.installed
  fi
}

# disk_room: say up front when the disk is too full for a whole test run, instead of letting
# it fail half-way. A cold build needs about TARGET_GIB in the target folder (2.5 GiB measured), and every daemon
# under test refuses to start steps below 512 MiB free in its data folder (under $TMPDIR):
# that is its disk-space preflight doing its job, and it reads as a dozen unrelated failures.
TARGET_GIB=4
disk_room() {
  local target=${CARGO_TARGET_DIR:-target} tmp=${TMPDIR:-/tmp} free_target free_tmp
  mkdir -p "$target"
  free_target=$(df -Pk "$target" | awk 'NR==2 {print int($4 / 1048576)}')
  free_tmp=$(df -Pk "$tmp" | awk 'NR==2 {print int($4 / 1024)}')
  echo "disk: ${free_target} GiB free for $target, ${free_tmp} MiB free in $tmp" >&2
  if [ "$free_tmp" -lt 1024 ]; then
    echo "error: only ${free_tmp} MiB free in $tmp; the daemons under test need 512 MiB and more while they run" >&2
    return 1
  fi
  if [ "$free_target" -lt "$TARGET_GIB" ] && [ ! -d "$target/debug/deps" ]; then
    echo "warning: a cold build needs about ${TARGET_GIB} GiB in $target; ${free_target} GiB is free" >&2
  fi
}

# svelte_check: the front end's types, errors only (the last lines of its machine output).
svelte_check() {
  npx svelte-check --workspace ui --threshold error --output machine | tail -n 3
}

# e2e_tests [ARGS...]: the desktop app end to end under Xvfb, one file at a time (each starts
# its own app, daemon and mocks); ARGS go to `node --test` (a reporter, say).
e2e_tests() {
  xvfb-run -a -s "-screen 0 1280x800x24" node --test --test-concurrency=1 "$@" tests/e2e/*.e2e.mjs
}

# rust_tests LOG [ARGS...]: every Rust test, its output also kept in LOG (the summary is read
# back from it); ARGS go to nextest. No retries: a test that passes only on a second try is a
# failure to mend, not to hide.
rust_tests() {
  local log=$1
  shift
  cargo nextest run --workspace --no-fail-fast "$@" 2>&1 | tee "$log"
}

# nextest_summary LOG: nextest's closing block in LOG (its summary line and what follows:
# the failed tests named), nothing when nextest never got that far.
nextest_summary() {
  sed -n '/^ *Summary \[/,$p' "$1"
}

# phase NAME CMD...: runs one phase of a test run, in a subshell with `set -e`, and records
# whether it passed (PHASE_RESULTS: pass or FAIL) and how many seconds it took; never stops
# the caller.
PHASE_NAMES=()
PHASE_SECS=()
PHASE_RESULTS=()
phase() {
  local name=$1 start=$SECONDS rc
  shift
  echo "== $name" >&2
  (
    set -e
    "$@"
  )
  rc=$?
  PHASE_NAMES+=("$name")
  PHASE_SECS+=($((SECONDS - start)))
  if [ "$rc" -eq 0 ]; then
    PHASE_RESULTS+=(pass)
  else
    PHASE_RESULTS+=(FAIL)
    echo "== $name failed (exit $rc)" >&2
  fi
}

# phases_failed: how many of the phases run so far failed.
phases_failed() {
  local r n=0
  for r in "${PHASE_RESULTS[@]}"; do [ "$r" = FAIL ] && n=$((n + 1)); done
  echo "$n"
}

# phase_summary: the table of the phases run so far, in their order.
phase_summary() {
  local i
  echo >&2
  echo "== phases" >&2
  printf '%-14s %-6s %8s\n' phase result seconds >&2
  for i in "${!PHASE_NAMES[@]}"; do
    printf '%-14s %-6s %8s\n' "${PHASE_NAMES[$i]}" "${PHASE_RESULTS[$i]}" "${PHASE_SECS[$i]}" >&2
  done
}

# Windows, built here: the x86_64-pc-windows-gnu target with Debian's mingw-w64 (rustc's
# default linker for that target is its x86_64-w64-mingw32-gcc), and Wine to run what it builds.
WIN_TARGET=x86_64-pc-windows-gnu
WIN_BUILD_PKGS=(gcc-mingw-w64-x86-64)
# wine64 runs 64-bit programs; `wine` is its launcher. No wine32: nothing we build is 32-bit.
WIN_TEST_PKGS=(wine wine64)

# windows_toolchain: the Rust target and the cross compiler, or a clear error naming what
# could not be installed.
windows_toolchain() {
  if ! rustup target list --installed 2>/dev/null | grep -qx "$WIN_TARGET"; then
    echo "installing the Rust target $WIN_TARGET" >&2
    rustup target add "$WIN_TARGET" >&2 || {
      echo "error: cannot install the Rust target $WIN_TARGET (rustup target add failed above)" >&2
      return 1
    }
  fi
  apt_pkgs "${WIN_BUILD_PKGS[@]}" || {
    echo "error: cannot install ${WIN_BUILD_PKGS[*]} (the mingw-w64 cross compiler): no Windows build" >&2
    return 1
  }
}

# win_out [debug|release]: where cargo puts the Windows build.
win_out() {
  echo "${CARGO_TARGET_DIR:-target}/$WIN_TARGET/${1:-debug}"
}

# wine_env: Wine installed and a prefix of our own in the target folder (never the user's
# ~/.wine), made once, with the shim Wine 8 lacks: Rust's std imports ProcessPrng from
# bcryptprimitives.dll, which Wine 8 does not have (tests/fixtures/windows/bcryptprimitives.c).
# Exports WINEPREFIX and WINEDEBUG.
wine_env() {
  apt_pkgs "${WIN_TEST_PKGS[@]}" || {
    echo "error: cannot install ${WIN_TEST_PKGS[*]}: deepwork.exe's tests need Wine" >&2
    return 1
  }
  local target=${CARGO_TARGET_DIR:-target}
  mkdir -p "$target"
  WINEPREFIX="$(cd "$target" && pwd)/wine-prefix"
  export WINEPREFIX WINEDEBUG=-all
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "making the Wine prefix $WINEPREFIX" >&2
    # No display here: keep wineboot from asking for Mono or Gecko (nothing we run needs them).
    WINEDLLOVERRIDES="mscoree,mshtml=" wineboot -i >&2 2>/dev/null
    wineserver -w
  fi
  local dll="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
  local src=tests/fixtures/windows/bcryptprimitives.c
  if [ ! -f "$dll" ] || [ "$src" -nt "$dll" ]; then
    x86_64-w64-mingw32-gcc -shared -O2 -o "$dll" "$src" tests/fixtures/windows/bcryptprimitives.def -ladvapi32
  fi
}

# win_fixtures: the Windows test doubles, built beside the Windows build (std only, so rustc
# alone builds them). Prints the fake bridge's path.
win_fixtures() {
  local out
  out="$(win_out debug)/fixtures"
  mkdir -p "$out"
  local src=tests/fixtures/windows/fake-bridge.rs exe="$out/fake-bridge.exe"
  if [ ! -f "$exe" ] || [ "$src" -nt "$exe" ]; then
    rustc --edition 2024 -O --target "$WIN_TARGET" -o "$exe" "$src" >&2
  fi
  echo "$exe"
}

# The DLLs a program of ours may import: those every Windows 10 and 11 has in System32 (and
# the api-ms-win-* API sets, which map onto them). Anything else, a mingw runtime DLL such as
# libwinpthread-1.dll or libgcc_s_seh-1.dll above all, would make the exe fail to start on a
# clean Windows with "the code execution cannot proceed". A new system DLL a dependency starts
# to import goes here once it is known to ship with Windows 10.
WIN_STOCK_DLLS=" advapi32.dll bcrypt.dll bcryptprimitives.dll combase.dll comctl32.dll comdlg32.dll
  crypt32.dll d2d1.dll d3d11.dll dwmapi.dll dwrite.dll dxgi.dll gdi32.dll gdiplus.dll imm32.dll
  iphlpapi.dll kernel32.dll msimg32.dll msvcrt.dll ncrypt.dll netapi32.dll ntdll.dll ole32.dll
  oleacc.dll oleaut32.dll powrprof.dll propsys.dll psapi.dll rpcrt4.dll secur32.dll setupapi.dll
  shcore.dll shell32.dll shlwapi.dll uiautomationcore.dll user32.dll userenv.dll uxtheme.dll
  version.dll winhttp.dll winmm.dll winspool.drv ws2_32.dll wtsapi32.dll "

# win_imports EXE: the DLLs EXE imports, lower-cased, one a line, each once.
win_imports() {
  x86_64-w64-mingw32-objdump -p "$1" | sed -n 's/^[[:space:]]*DLL Name: //p' | tr '[:upper:]' '[:lower:]' | sort -u
}

# win_check_imports EXE [DLL...]: EXE imports only stock Windows DLLs and the DLLs named (each
# of which must then sit beside it), or an error naming EXE and every DLL that is neither.
win_check_imports() {
  local exe=$1 dll bad=() extra stock
  shift
  # The list's line breaks as spaces, so every name has one on both sides.
  stock=" ${WIN_STOCK_DLLS//$'\n'/ } "
  extra=" $(printf '%s ' "$@")"
  extra=${extra,,}
  [ -f "$exe" ] || { echo "error: $exe: not built" >&2; return 1; }
  while read -r dll; do
    case "$dll" in api-ms-win-*) continue ;; esac
    [[ "$stock" == *" $dll "* ]] && continue
    if [[ "$extra" == *" $dll "* ]]; then
      # Windows finds DLLs by name whatever their case.
      local f found=0
      for f in "$(dirname "$exe")"/*; do
        f=${f##*/}
        [ "${f,,}" = "$dll" ] && found=1
      done
      [ "$found" = 1 ] || bad+=("$dll (not beside it)")
      continue
    fi
    bad+=("$dll")
  done < <(win_imports "$exe")
  if [ ${#bad[@]} -gt 0 ]; then
    echo "error: $exe imports DLLs a stock Windows 10/11 lacks: ${bad[*]} (x86_64-w64-mingw32-objdump -p shows the import table; scripts/lib.sh, WIN_STOCK_DLLS, lists what is allowed)" >&2
    return 1
  fi
  echo "$exe: imports $(win_imports "$exe" | tr '\n' ' ')" >&2
}
