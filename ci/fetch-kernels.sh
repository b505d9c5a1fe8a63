#!/usr/bin/env bash
# Fetches Debian kernel images for a smoke kernel matrix under qemu
# (docs/qemu.md): the generic, PREEMPT_RT and cloud flavours of the newest
# 6.1 ABI in the archive, as the -unsigned packages (the same kernels as the
# signed ones, without the Secure Boot signature), extracted with dpkg -x.
#
#   ci/fetch-kernels.sh [DEST] [FLAVOUR...]
#     DEST     default $NIGHTJAR_KERNELS, else ~/.cache/nightjar/kernels
#     FLAVOUR  amd64, rt-amd64, cloud-amd64 (default: all three)
#
# Also installs what the qemu runner needs when missing (qemu-system-x86,
# busybox-static, cpio). Prints one line per kernel: FLAVOUR RELEASE IMAGE
# MODULES, and leaves DEST/FLAVOUR/{boot,lib/modules} (about 100 MB each):
#   nightjar run JOB --kernel DEST/amd64/boot/vmlinuz-* --kernel DEST/rt-amd64/boot/vmlinuz-*
# (the modules are found next to each image; --modules DEST/amd64 also works).
# Idempotent: a flavour already extracted is not fetched again.
set -euo pipefail

dest=${1:-${NIGHTJAR_KERNELS:-$HOME/.cache/nightjar/kernels}}
shift || true
flavours=("$@")
[ ${#flavours[@]} -gt 0 ] || flavours=(amd64 rt-amd64 cloud-amd64)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
need=()
for p in qemu-system-x86 busybox-static cpio; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "ci/fetch-kernels.sh: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# The ABI the linux-image-amd64 metapackage points at ("6.1.0-57").
abi=$(apt-cache depends linux-image-amd64 2>/dev/null |
  sed -n 's/.*Depends: linux-image-\([0-9][0-9.]*-[0-9][0-9]*\)-amd64$/\1/p' | head -n1)
if [ -z "$abi" ]; then
  echo "ci/fetch-kernels.sh: cannot tell the kernel ABI from 'apt-cache depends linux-image-amd64'; run apt-get update" >&2
  exit 4
fi

mkdir -p "$dest"
for flavour in "${flavours[@]}"; do
  pkg="linux-image-$abi-$flavour-unsigned"
  out="$dest/$flavour"
  image=$(ls "$out"/boot/vmlinuz-* 2>/dev/null | head -n1 || true)
  if [ -z "$image" ]; then
    work=$(mktemp -d)
    chmod 755 "$work"  # apt-get download runs as _apt where it can
    echo "ci/fetch-kernels.sh: apt-get download $pkg" >&2
    (cd "$work" && apt-get download -q "$pkg" >&2)
    rm -rf "$out.tmp" && mkdir -p "$out.tmp"
    dpkg -x "$work"/"$pkg"_*.deb "$out.tmp"
    rm -rf "$work" "$out" && mv "$out.tmp" "$out"
    image=$(ls "$out"/boot/vmlinuz-* | head -n1)
  fi
  release=${image##*/vmlinuz-}
  echo "$flavour $release $image $out/lib/modules/$release"
done
