# Shared by abi-mingw.sh and abi-i386.sh: the public headers, a scratch
# folder and TAP reporting.  Sourced, not run; sets srcdir, headers, tmp, n
# and failed.

srcdir=${KMTSHIM_TEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
headers="kmt_wintypes.h kmt_ntstatus.h d3dukmdt.h d3dkmthk.h d3dkmddi.h kmtsoft.h kmtshim.h d3dumddi.h dispmprt.h kmtmiracast.h kmtdrm.h"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kmt-abi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

report() {   # report OK NAME: one TAP line, the compiler's log on failure
    n=$((n + 1))
    if [ "$1" = 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        sed 's/^/# /' "$tmp/log"
        failed=1
    fi
}
