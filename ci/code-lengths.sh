#!/usr/bin/env bash
# The length habits of the house, as CI checks them (the ctest test
# code_lengths, label unit): no non-test function over 100 lines
# (ci/function-lengths.sh) and no non-test file over 900 lines unless
# ci/length-allow.txt names it with its reason (ci/file-lengths.sh). Both
# checks always run and print; exits 1 when either fails (4: no ctags).
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
ci/function-lengths.sh 20 100 || rc=$?
echo
ci/file-lengths.sh 900 || { r=$?; [ "$rc" -ne 0 ] || rc=$r; }
exit "$rc"
