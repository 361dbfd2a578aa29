#!/usr/bin/env bash
# The relocatable tarball of gpudays (`make dist`): the install of BUILD_DIR (bin/, lib/gpudays,
# share/gpudays, share/doc/gpudays) under one top folder, gzip-compressed, written to
# BUILD_DIR/gpudays-VERSION-linux-ARCH.tar.gz; prints its path and size.
set -euo pipefail
build_dir=${1:-build}
version=$("$build_dir/gpudays" --version | sed -E 's/^gpudays ([^ ]+) .*/\1/')
name="gpudays-${version}-linux-$(uname -m)"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build_dir" --prefix "$stage/$name" >/dev/null
if ! grep -q "cpu build" "$stage/$name/share/gpudays/BUILD"; then
  echo "make-dist: $build_dir is not the CPU build; the CUDA variant is installed, not packed" >&2
  exit 2
fi
tarball="$(cd "$build_dir" && pwd)/$name.tar.gz"
tar -C "$stage" -cf - "$name" | gzip -1 > "$tarball.part"
mv "$tarball.part" "$tarball"
echo "$tarball ($(du -m "$tarball" | cut -f1) MiB; $(du -sm "$stage/$name" | cut -f1) MiB unpacked)"
