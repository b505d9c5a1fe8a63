#!/usr/bin/env bash
# Installs LAVA's dispatcher (no server) for `nightjar lava run` and the
# ctest label `lava` (docs/lava.md "One machine"), and renders the device
# configurations the tests use from lava-server's device-type templates:
#
#   ci/install-lava.sh [DEST]      DEST default build/lava
#
#  - apt-get install --no-install-recommends lava-dispatcher python3-jinja2
#    (about 30 s the first time; nothing is started);
#  - `apt-get download lava-server` + `dpkg -x` into DEST/lava-server: the
#    device-type templates (usr/share/lava-server/device-types), without
#    installing the server (no PostgreSQL, no services);
#  - renders DEST/devices/*.jinja2 (the device dictionaries below) with
#    Debian's python3 and jinja2 (trim_blocks, loader over the dictionaries
#    and the device types) into DEST/NAME.yaml, the `--device` of lava-run:
#      qemu01.yaml  device type qemu: amd64, TCG (no_kvm), 1024 MiB, 2 CPUs
#      x86-01.yaml  device type x86 (an iPXE board): validates the
#                   docs/lava-x86-ipxe.yaml template (never booted)
# Idempotent: what is there is not fetched again.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$here/build/lava}
mkdir -p "$dest/devices"

# Through the build dependencies' installer, which installs only what is missing.
"$here/ci/install-deps.sh" lava-dispatcher python3-jinja2 cpio busybox-static

templates=$dest/lava-server/usr/share/lava-server/device-types
if [ ! -f "$templates/qemu.jinja2" ]; then
  work=$(mktemp -d)
  chmod 755 "$work"  # apt-get download runs as _apt where it can
  echo "ci/install-lava.sh: apt-get download lava-server (for its device-type templates)" >&2
  (cd "$work" && apt-get download -q lava-server >&2)
  rm -rf "$dest/lava-server" && dpkg -x "$work"/lava-server_*.deb "$dest/lava-server"
  rm -rf "$work"
fi

cat >"$dest/devices/qemu01.jinja2" <<'EOF'
{# nightjar's CI device (ci/install-lava.sh): qemu under TCG #}
{% extends 'qemu.jinja2' %}
{% set arch = 'amd64' %}
{% set no_kvm = True %}
{% set memory = 1024 %}
{% set mac_addr = '52:54:00:12:34:59' %}
{% set extra_options = ['-accel tcg', '-smp 2'] %}
EOF
cat >"$dest/devices/x86-01.jinja2" <<'EOF'
{# an x86 board booted by iPXE over TFTP, for validating docs/lava-x86-ipxe.yaml #}
{% extends 'x86.jinja2' %}
{% set connection_command = 'telnet localhost 7001' %}
{% set power_on_command = '/usr/local/bin/pdu on 1' %}
{% set power_off_command = '/usr/local/bin/pdu off 1' %}
{% set hard_reset_command = '/usr/local/bin/pdu reboot 1' %}
{% set lava_mac_address = '00:90:05:af:00:7d' %}
EOF

/usr/bin/python3 - "$dest/devices" "$templates" "$dest" <<'EOF'
import sys, pathlib, jinja2
devices, templates, dest = sys.argv[1:4]
env = jinja2.Environment(loader=jinja2.FileSystemLoader([devices, templates]),
                         trim_blocks=True, autoescape=False)
for d in sorted(pathlib.Path(devices).glob("*.jinja2")):
    out = pathlib.Path(dest) / (d.stem + ".yaml")
    out.write_text(env.get_template(d.name).render())
    print(f"ci/install-lava.sh: {out}", file=sys.stderr)
EOF
