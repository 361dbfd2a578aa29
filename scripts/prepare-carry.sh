#!/usr/bin/env bash
# Prepares .carry/ (ignored by git): what the CUDA variant's build needs from our Debian packages
# and the GPU machine lacks (it has nvcc, CMake, ninja and torch in /opt/torch/.venv, but no network
# and none of our packages). The device tool carries the folder (`carry: [".carry"]`) and
# scripts/gpu-check.sh builds with CMAKE_PREFIX_PATH=.carry. Holds the headers and CMake package
# files of toml++, CLI11, nlohmann-json, fmt, googletest and SQLite, their x86-64 libraries, and
# ninja and pkg-config as fallbacks. MPI is left out: one GPU runs one rank. It also holds the
# parity fixtures (fixtures/, tests/models/make_fixtures.py, made with the project venv's
# transformers: `make torch-ref`), which the *_CUDA parity tests read; gpu-check.sh puts them where
# the test binary looks. The tree and this folder must stay under 64 MiB together (the device
# tool's limit; gpu-check.sh measures it): about 56 MiB on 2026-12-01.
# Usage: scripts/prepare-carry.sh [DEST]   (default: .carry in the repository root)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/.carry}
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
[ "$arch" = x86_64-linux-gnu ] || { echo "prepare-carry: the GPU machine is x86-64; this is $arch" >&2; exit 1; }

packages=(libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libfmt-dev libsqlite3-dev libgtest-dev
          libgloo-dev libicu-dev libstb-dev)  # gloo: headers only (dist/c10d); ICU, stb: src/data
bash "$root/scripts/install-deps.sh"

rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib/$arch"

# Copies /usr/<path> to $dest/<path>, following links (a carried folder is safest without them).
copy() {
  local rel=${1#/usr/}
  mkdir -p "$dest/$(dirname "$rel")"
  cp -L "$1" "$dest/$rel"
}

for p in "${packages[@]}"; do
  while IFS= read -r f; do
    [ -f "$f" ] || continue  # folders; links to files pass (-f follows them)
    case "$f" in
      /usr/share/doc/* | */pkgconfig/* | /usr/src/* | *.a | /usr/lib/"$arch"/libicu*) ;;
      /usr/include/* | /usr/lib/"$arch"/* | /usr/share/cmake/*) copy "$f" ;;
    esac
  done < <(dpkg -L "$p")
done
# Static googletest (the only static libraries we link), and every name of each shared library the
# package files point at (lib<name>.so for the linker, the soname for the loader, the real file
# for CMake's import checks).
cp -L /usr/lib/"$arch"/libgtest.a /usr/lib/"$arch"/libgtest_main.a "$dest/lib/$arch/"
for lib in libtomlplusplus libfmt libsqlite3 libstb; do
  for f in /usr/lib/"$arch"/"$lib".so*; do cp -L "$f" "$dest/lib/$arch/"; done
done
# ICU (src/data's tokenizer) once: its data library is 31 MB, so each is carried under its soname
# only, and the linker's name is a one-line linker script pointing at it.
for lib in libicuuc libicudata; do
  real=$(readlink -f /usr/lib/"$arch"/"$lib".so)
  soname=$(objdump -p "$real" | awk '/SONAME/ {print $2}')
  cp -L "$real" "$dest/lib/$arch/$soname"
  echo "INPUT($soname)" > "$dest/lib/$arch/$lib.so"
done
cp -L "$(command -v ninja)" "$dest/bin/ninja"
# pkg-config finds stb (src/data): the binary, its library, and stb.pc relative to the carry.
cp -L "$(command -v pkg-config)" "$dest/bin/pkg-config"
for f in /usr/lib/"$arch"/libpkgconf.so*; do cp -L "$f" "$dest/lib/$arch/"; done
mkdir -p "$dest/lib/$arch/pkgconfig"
# shellcheck disable=SC2016  # ${pcfiledir} is pkg-config's, not the shell's
sed 's|^prefix=.*|prefix=${pcfiledir}/../../..|' /usr/lib/"$arch"/pkgconfig/stb.pc \
  > "$dest/lib/$arch/pkgconfig/stb.pc"

# The parity fixtures (3.8 MB, about 15 s).
ref_python=${GPUDAYS_REF_PYTHON:-$root/.venv/bin/python}
if "$ref_python" -c 'import transformers, safetensors' 2> /dev/null; then
  mkdir -p "$dest/fixtures/tmp"
  if ! TMPDIR="$dest/fixtures/tmp" "$ref_python" "$root/tests/models/make_fixtures.py" \
      --out "$dest/fixtures" "$root"/tests/models/data/*.toml > "$dest/fixtures/tmp/log" 2>&1; then
    cat "$dest/fixtures/tmp/log" >&2
    echo "prepare-carry: make_fixtures.py failed (above)" >&2
    exit 1
  fi
  rm -rf "$dest/fixtures/tmp"
  touch "$dest/fixtures/stamp"
else
  echo "prepare-carry: warning: $ref_python has no transformers (make torch-ref): no parity" \
    "fixtures, so the *_CUDA parity tests will fail on the GPU machine" >&2
fi

cat > "$dest/README" <<EOF
Made by scripts/prepare-carry.sh on $(hostname) ($(date -u +%F)) from Debian packages:
$(dpkg-query -W -f='${Package} ${Version}\n' "${packages[@]}" ninja-build)
Use: cmake -DCMAKE_PREFIX_PATH=\$PWD/.carry ... (scripts/gpu-check.sh does).
fixtures/: tests/models/make_fixtures.py's parity fixtures (transformers $("$ref_python" -c \
'import transformers; print(transformers.__version__)' 2> /dev/null || echo absent)).
EOF
echo "prepare-carry: $dest, $(du -sh "$dest" | cut -f1)"
