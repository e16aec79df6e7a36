#!/usr/bin/env bash
# `npm run package`: the installable packages, in dist/.
#
# Linux: pult's .deb (Tauri's bundler, the deb target only: the AppImage bundler downloads its
# tools while it builds, which cannot work offline) carrying conveyord in /usr/lib/pult/, and
# conveyord's own .deb (the daemon, its systemd unit, the system user conveyor and
# /etc/conveyor/conveyor.toml), assembled here from crates/conveyor/debian/ with dpkg-deb.
# macOS: pult.app and the .dmg; Windows (Git Bash): the NSIS and MSI installers; both carry
# conveyord beside pult as a Tauri sidecar. Installs what is missing first, idempotently; once
# it is installed nothing here needs the network on Linux.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

target_dir=${CARGO_TARGET_DIR:-$PWD/target}
dist=$PWD/dist
# The workspace's version (conveyor inherits it), for the conveyord package.
version=$(cargo metadata --no-deps --format-version 1 --offline \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).packages.find(p=>p.name==="conveyor").version))')
# Tauri's CLI checks that the tauri crates and the @tauri-apps npm packages share major.minor;
# the workspace's lock has tauri 2.11 under @tauri-apps/api 2.12 (and the plugins likewise),
# the same pair `npm start` and `npm test` build and test, so the package is built from it.
tauri_build=(npx tauri build --ci --ignore-version-mismatches)

conveyord_release() {
  echo "building conveyord (release)" >&2
  cargo build --release --locked -p conveyor --bin conveyord
}

frontend() {
  npx vite build ui --logLevel warn
}

# deb_conveyord BIN: conveyord's .deb from the stripped binary BIN, into dist/.
deb_conveyord() {
  local bin=$1 src=crates/conveyor/debian
  local arch root deb depends
  arch=$(dpkg --print-architecture)
  root=$target_dir/package/conveyord-root
  deb=$dist/conveyord_${version}_${arch}.deb
  rm -rf "$root"
  install -d -m 0755 "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" \
    "$root/etc/conveyor" "$root/usr/share/doc/conveyord"
  install -m 0755 "$bin" "$root/usr/bin/conveyord"
  install -m 0644 "$src/conveyord.service" "$root/lib/systemd/system/conveyord.service"
  conffile "$root/etc/conveyor/conveyor.toml"
  install -m 0644 "$src/copyright" "$root/usr/share/doc/conveyord/copyright"
  install -m 0755 "$src/postinst" "$src/prerm" "$src/postrm" "$root/DEBIAN/"
  install -m 0644 "$src/conffiles" "$root/DEBIAN/conffiles"
  # bubblewrap: the agents' sandbox (DESIGN.md, "Containment"); without it the preflight blocks every step.
  depends="adduser, git, bubblewrap, $(shlibs "$bin")"
  sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@DEPENDS@|$depends|" \
    -e "s|@INSTALLED_SIZE@|$(du -sk --exclude=DEBIAN "$root" | cut -f1)|" \
    "$src/control.in" >"$root/DEBIAN/control"
  (cd "$root" && find usr lib -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
  chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
  dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
}

# conffile OUT: /etc/conveyor/conveyor.toml, made from docs/conveyor.example.toml (the one
# commented list of keys) with the package's paths: the token lives in data_dir, where the
# daemon, running as conveyor, may create it (/etc/conveyor is root's and read-only to it).
conffile() {
  local out=$1
  {
    echo "# /etc/conveyor/conveyor.toml: conveyord's configuration, from the conveyord package."
    echo "# A conffile: your changes are kept on upgrade. After editing: systemctl restart conveyord."
    echo "# The daemon runs as the system user conveyor (so root_mode does not apply); its HOME is"
    echo "# /var/lib/conveyor, where \`claude\` keeps its login."
    echo "#"
    sed -e 's|^token_file = "/etc/conveyor/token" *#|token_file = "/var/lib/conveyor/token" #|' \
      docs/conveyor.example.toml
  } >"$out"
  grep -q '^token_file = "/var/lib/conveyor/token"' "$out" \
    || { echo "docs/conveyor.example.toml: its token_file line changed; update package.sh" >&2; exit 1; }
  grep -q '^data_dir = "/var/lib/conveyor"' "$out" \
    || { echo "docs/conveyor.example.toml: data_dir is no longer /var/lib/conveyor" >&2; exit 1; }
  grep -q '^listen = "127.0.0.1:8790"' "$out" \
    || { echo "docs/conveyor.example.toml: listen is no longer 127.0.0.1:8790" >&2; exit 1; }
  chmod 0644 "$out"
}

# shlibs BIN: the Depends the shared libraries BIN links need (dpkg-shlibdeps wants a
# debian/control to exist; an empty one in a scratch folder does).
shlibs() {
  local bin scratch
  bin=$(realpath "$1")
  scratch=$(mktemp -d)
  mkdir "$scratch/debian"
  touch "$scratch/debian/control"
  (cd "$scratch" && dpkg-shlibdeps -O -e"$bin" 2>/dev/null) | sed -n 's/^shlibs:Depends=//p'
  rm -rf "$scratch"
}

mkdir -p "$dist"
case "$(uname -s)" in
  Linux)
    apt_pkgs "${TAURI_BUILD_PKGS[@]}" dpkg-dev
    npm_deps
    conveyord_release
    mkdir -p "$target_dir/package"
    bin=$target_dir/package/conveyord
    # Debug info dropped (Debian ships binaries stripped); the symbols stay, so a panic's
    # backtrace still names its functions.
    strip --strip-debug -o "$bin" "$target_dir/release/conveyord"
    frontend
    # conveyord in pult's .deb through `bundle.linux.deb.files` (a plain copy; nothing is
    # fetched), at /usr/lib/pult/conveyord: a sidecar (`externalBin`) would land in
    # /usr/bin/conveyord, the file conveyord's own package installs, and dpkg refuses two
    # packages that own one file. Passed here, not in tauri.conf.json: its path is this
    # build's target folder. Before bundling, pult's debug info goes as conveyord's did (the
    # release profile keeps line tables: 155 MB of the binary's 191).
    overlay=$target_dir/package/tauri.deb.json
    # shellcheck disable=SC2016 # a JavaScript template string, not the shell's
    node -e '
      const [bin, pult] = process.argv.slice(1);
      console.log(JSON.stringify({
        build: {beforeBundleCommand: `strip --strip-debug "${pult}"`},
        bundle: {linux: {deb: {files: {"/usr/lib/pult/conveyord": bin}}}},
      }))' "$bin" "$target_dir/release/pult" >"$overlay"
    "${tauri_build[@]}" --bundles deb --config "$overlay"
    pult_deb=$target_dir/release/bundle/deb/pult_${version}_$(dpkg --print-architecture).deb
    cp "$pult_deb" "$dist/"
    deb_conveyord "$bin"
    echo "pult:      $dist/$(basename "$pult_deb")"
    echo "conveyord: $dist/conveyord_${version}_$(dpkg --print-architecture).deb"
    ;;
  Darwin | MINGW* | MSYS* | CYGWIN*)
    # Built on those systems (Tauri's bundlers need them: hdiutil, WiX and NSIS).
    exe="" bundles=app,dmg
    case "$(uname -s)" in Darwin) ;; *) exe=.exe bundles=nsis,msi ;; esac
    npm_deps
    conveyord_release
    # A Tauri sidecar: src-tauri/binaries/conveyord-<host triple>, installed beside pult.
    triple=$(rustc -vV | sed -n 's/^host: //p')
    mkdir -p src-tauri/binaries
    cp "$target_dir/release/conveyord$exe" "src-tauri/binaries/conveyord-$triple$exe"
    frontend
    "${tauri_build[@]}" --bundles "$bundles" --config '{"bundle": {"externalBin": ["binaries/conveyord"]}}'
    cp -R "$target_dir"/release/bundle/* "$dist/"
    echo "bundles in $dist/"
    ;;
  *)
    echo "npm run package: no packages for $(uname -s)" >&2
    exit 2
    ;;
esac
