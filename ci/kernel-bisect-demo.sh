#!/bin/sh
# The end-to-end kernel bisect (docs/bisect.md "Bisecting kernels"): Debian's
# linux-source-6.1 made a git repository, 16 small commits on top -- one
# plants a slowdown in the anonymous page-fault path (mm/memory.c
# do_anonymous_page), one fails to build, one panics at boot -- then
# `nightjar bisect run --kernel-build` with pft in qemu. Passes when the
# bisect names the planted commit; prints the time of every step.
#
#   ci/kernel-bisect-demo.sh [BUILD_DIR]    (default: build; it holds
#                                            nightjar and nightjar-static)
#
# Environment: KBISECT_DIR (default ~/.cache/nightjar/kernel-bisect-demo)
# holds the repository (linux/), the kernel build tree (out/), image cache
# (images/), build and boot logs (logs/, boots/) and the
# results database; a second run reuses them (the commits are made with
# fixed dates, so their ids and the cached images stay the same).
# LINUX_SOURCE: the tarball (default /usr/src/linux-source-6.1.tar.xz,
# `apt-get install linux-source-6.1`). Exits 77 when the tarball, qemu,
# busybox-static, cpio or nightjar-static is missing. Kernel builds and the guest
# run under `nice -n ${DEMO_NICE:-19}` (DEMO_NICE=-10 on a machine shared
# with other builds, so the measured guest is not starved; DEMO_SPIN: the
# planted slowdown's loop count, default 16 (-24% [-42, -1] of pft's faults/sec,
# 10 boots a side on huge pages in a TCG guest here; 8 was about -6%, inside
# the guest's noise);
# DEMO_ITERATIONS: first batch per step; DEMO_MAX_ITERATIONS: cap (50, i.e.
# 10 boots of 5 iterations per side);
# DEMO_JOB: the job measured, default jobs/pft-quick.yaml;
# jobs/pft-bisect-profile.yaml adds perf-stat and perf-profile, and the
# bisect's answer then lists the kernel symbols that moved, the planted one
# marked as changed by the culprit). ctest: `ctest -L kernel-bisect` (not in CI's
# default set: ci/test.sh excludes the label).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
build=$(cd "$build" && pwd)
nightjar=$build/nightjar
dir=${KBISECT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nightjar/kernel-bisect-demo}
tarball=${LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
repo=$dir/linux

skip() { echo "kernel-bisect-demo: skipped: $*"; exit 77; }
[ -r "$tarball" ] || skip "no $tarball (apt-get install linux-source-6.1)"
[ -x "$build/nightjar-static" ] || skip "no $build/nightjar-static (configure with -DNIGHTJAR_STATIC=ON)"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
command -v busybox >/dev/null || [ -x /bin/busybox ] || skip "no busybox (apt-get install busybox-static)"
command -v cpio >/dev/null || skip "no cpio (apt-get install cpio: the guests' initramfs)"
for t in make gcc flex bison bc; do
  command -v $t >/dev/null || skip "no $t (apt-get install build-essential flex bison bc libelf-dev libssl-dev)"
done

t0=$(date +%s)
stamp() { echo "kernel-bisect-demo: [$(($(date +%s) - t0)) s] $*"; }
mkdir -p "$dir"

# 1. The repository: the tarball as commit demo-base (Debian's .gitignore
#    ignores every top-level path of the package; its last stanza goes).
if ! git -C "$repo" rev-parse -q --verify demo-base >/dev/null 2>&1; then
  stamp "unpacking $tarball"
  rm -rf "$repo" "$dir/unpack"
  mkdir -p "$dir/unpack"
  nice -n "${DEMO_NICE:-19}" tar xf "$tarball" -C "$dir/unpack"
  mv "$dir/unpack"/linux-source-* "$repo"
  rmdir "$dir/unpack"
  sed -i '/^# Debian packaging: ignore everything/,$d' "$repo/.gitignore"
  git -C "$repo" init -q
  git -C "$repo" add -A
  GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' \
    git -C "$repo" -c user.name=nightjar-demo -c user.email=demo@nightjar.invalid \
    commit -q -m "Debian linux-source-6.1"
  git -C "$repo" tag demo-base
fi

# 2. Sixteen commits on top, the same every time (fixed dates).
n=0
commit() {  # commit SUBJECT: commits what the caller changed
  n=$((n + 1))
  d=$(printf '2026-01-02T00:%02d:00Z' "$n")
  GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git -C "$repo" -c user.name=nightjar-demo \
    -c user.email=demo@nightjar.invalid commit -q -a -m "$1"
}
note() {  # note FILE TEXT: appends a C comment line
  printf '/* %s */\n' "$2" >> "$repo/$1"
}
git -C "$repo" checkout -q -f -B demo demo-base
git -C "$repo" clean -q -fdx
note mm/mmap.c "demo 1: a comment in mm/mmap.c";                   commit "mm/mmap: comment"
note kernel/fork.c "demo 2: a comment in kernel/fork.c";           commit "fork: comment"
note mm/page_alloc.c "demo 3: a comment in mm/page_alloc.c";       commit "mm/page_alloc: comment"
note lib/string.c "demo 4: a comment in lib/string.c";             commit "lib/string: comment"
note mm/memory.c "demo 5: a comment in mm/memory.c";               commit "mm/memory: comment"
note kernel/exit.c "demo 6: a comment in kernel/exit.c";           commit "exit: comment"
note mm/filemap.c "demo 7: a comment in mm/filemap.c";             commit "mm/filemap: comment"
# 8: does not build (an undeclared identifier); 9 fixes it.
printf 'int nightjar_demo_broken(void) { return nightjar_demo_undeclared; }\n' >> "$repo/mm/mmap.c"
commit "mm/mmap: helper (does not build)"
sed -i '/nightjar_demo_broken/d' "$repo/mm/mmap.c"
commit "mm/mmap: fix the build"
note mm/rmap.c "demo 10: a comment in mm/rmap.c";                  commit "mm/rmap: comment"
# 11: the planted slowdown, SPIN pause instructions per anonymous fault, in
#     a function of its own (noinline) called by do_anonymous_page: a
#     kernel profile then names it, and the commit's diff adds it, so that
#     bisect's "what else changed" block marks it as changed by the culprit
#     (with a job that has the perf-profile monitor: DEMO_JOB).
spin=${DEMO_SPIN:-16}
sed -i "/^static vm_fault_t do_anonymous_page(struct vm_fault \*vmf)\$/i\\
/* nightjar demo: the planted slowdown, $spin pause instructions per fault */\\
static noinline void nightjar_demo_fault_work(void)\\
{\\
\tint i;\\
\\
\tfor (i = 0; i < $spin; i++)\\
\t\tcpu_relax();\\
}\\
" "$repo/mm/memory.c"
sed -i "/^static vm_fault_t do_anonymous_page(struct vm_fault \*vmf)\$/,/File mapping without/{s|^\t/\* File mapping without|\tnightjar_demo_fault_work();\n\n&|}" \
  "$repo/mm/memory.c"
[ "$(grep -c nightjar_demo_fault_work "$repo/mm/memory.c")" = 2 ] || { echo "kernel-bisect-demo: cannot plant in mm/memory.c"; exit 1; }
commit "mm/memory: planted slowdown in do_anonymous_page"
note kernel/sys.c "demo 12: a comment in kernel/sys.c";            commit "sys: comment"
# 13: panics at boot; 14 takes it out.
sed -i '/^static int __ref kernel_init(void \*unused)$/,/^\tint ret;$/{s|^\tint ret;$|&\n\n\tpanic("nightjar demo: planted boot panic");|}' \
  "$repo/init/main.c"
grep -q 'planted boot panic' "$repo/init/main.c" || { echo "kernel-bisect-demo: cannot plant in init/main.c"; exit 1; }
commit "init: planted boot panic"
sed -i '/planted boot panic/d' "$repo/init/main.c"
commit "init: take the boot panic out"
note mm/shmem.c "demo 15: a comment in mm/shmem.c";                commit "mm/shmem: comment"
note mm/swap.c "demo 16: a comment in mm/swap.c";                  commit "mm/swap: comment"
planted=$(git -C "$repo" rev-parse demo~5)
stamp "repository $repo: demo-base + $n commits, planted $(git -C "$repo" log -1 --format='%h %s' "$planted")"

# 3. The bisect. As root the guests' memory is on the host's 2 MiB huge
# pages (--vm-hugepages, reserved for each boot and given back): with
# ordinary host memory some TCG boots ran pft a third slower than others
# (docs/qemu.md "Guest memory on huge pages"). DEMO_HUGEPAGES=0 leaves it out.
rm -f "$dir/demo.db" "$dir/demo.db-wal" "$dir/demo.db-shm"
huge=""
[ "${DEMO_HUGEPAGES:-1}" = 1 ] && [ "$(id -u)" = 0 ] && huge=--vm-hugepages
set +e
nice -n "${DEMO_NICE:-19}" "$nightjar" bisect run --repo "$repo" --good demo-base --bad demo \
  --job "${DEMO_JOB:-$here/jobs/pft-quick.yaml}" --set size=32M --set clients=1 --set mode=processes \
  --iterations "${DEMO_ITERATIONS:-5}" --max-iterations "${DEMO_MAX_ITERATIONS:-50}" \
  --kernel-build --defconfig tinyconfig --config-fragment "$here/ci/kernel/nightjar-guest.config" \
  --kernel-dir "$dir" --db "$dir/demo.db" $huge 2>&1 | tee "$dir/bisect.out"
rc=$?  # tee's: the verdict is read from the output below
set -e
stamp "bisect run exited $rc"
"$nightjar" bisect log --db "$dir/demo.db"
first=$(sed -n 's/^first bad commit: \([0-9a-f]*\).*/\1/p' "$dir/bisect.out" | tail -1)
stamp "first bad commit: ${first:-none}; planted: $planted"
case "$planted" in
  "$first"*) [ -n "$first" ] && { stamp "PASS: the bisect named the planted commit"; exit 0; } ;;
esac
stamp "FAIL: the bisect did not name the planted commit"
exit 1
