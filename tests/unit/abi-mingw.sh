#!/bin/sh
# The public headers seen by a Windows compiler: each one must compile on
# its own with mingw-w64 (where kmt_wintypes.h takes the types from
# windows.h), and the layout assertions must really run there.  TAP output.
#
# Environment: KMT_MINGW_CC (set by make check), KMTSHIM_TEST_SRCDIR.

srcdir=${KMTSHIM_TEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cc=${KMT_MINGW_CC:-}

if [ -z "$cc" ] || ! command -v "$cc" >/dev/null 2>&1; then
    echo "1..0 # SKIP no mingw-w64 compiler"
    exit 0
fi

headers="kmt_wintypes.h kmt_ntstatus.h d3dukmdt.h d3dkmthk.h d3dkmddi.h kmtsoft.h kmtshim.h d3dumddi.h dispmprt.h kmtmiracast.h"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kmt-abi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# compile FILE: a syntax-only C11 build with warnings as errors.
compile() {
    "$cc" -std=c11 -fsyntax-only -Wall -Wextra -Werror -I"$srcdir/include" "$1" >"$tmp/log" 2>&1
}

report() {   # report OK NAME
    n=$((n + 1))
    if [ "$1" = 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        sed 's/^/# /' "$tmp/log"
        failed=1
    fi
}

echo "1..$(( $(echo $headers | wc -w) + 6 ))"

for h in $headers; do
    printf '#include <kmtshim/%s>\n' "$h" >"$tmp/one.c"
    compile "$tmp/one.c"
    report $? "mingw: $h compiles on its own"
done

{
    for h in $headers; do printf '#include <kmtshim/%s>\n' "$h"; done
    for h in $headers; do printf '#include <kmtshim/%s>\n' "$h"; done
} >"$tmp/all.c"
compile "$tmp/all.c"
report $? "mingw: all headers together, twice"

# The assertions are live: KMT_ABI_X86_64 is defined for the PE target...
cat >"$tmp/live.c" <<'EOF'
#include <kmtshim/kmtshim.h>
#ifndef KMT_ABI_X86_64
#error layout assertions are off for mingw-w64 x86_64
#endif
_Static_assert(sizeof(D3DKMT_CREATEALLOCATION) == 0x48, "size");
_Static_assert(sizeof(WCHAR) == 2 && sizeof(LONG) == 4 && sizeof(HANDLE) == 8, "LLP64");
/* winnt.h types a few STATUS_* as DWORD, as on Windows: compare values */
_Static_assert((NTSTATUS)STATUS_INVALID_PARAMETER == (NTSTATUS)0xC000000DL, "status");
_Static_assert((NTSTATUS)STATUS_GRAPHICS_NO_VIDEO_MEMORY == (NTSTATUS)0xC01E0100L, "graphics status");
_Static_assert(sizeof(NTSTATUS) == 4, "NTSTATUS");
EOF
compile "$tmp/live.c"
report $? "mingw: layout assertions enabled, LLP64 types"

# ...and a wrong layout is caught (negative control).
cat >"$tmp/wrong.c" <<'EOF'
#include <kmtshim/d3dkmthk.h>
KMT_CHECK_SIZE(D3DKMT_LOCK2, 0x20);
EOF
compile "$tmp/wrong.c"
if [ $? -ne 0 ] && grep -q 'sizeof(D3DKMT_LOCK2) != 0x20' "$tmp/log"; then r=0; else r=1; fi
report $r "mingw: a wrong layout fails to compile"

# Windows code can call the thunks through these prototypes with
# windows.h's own NTSTATUS and LUID.
cat >"$tmp/call.c" <<'EOF'
#include <kmtshim/d3dkmthk.h>
NTSTATUS probe(void);
NTSTATUS probe(void)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    LUID l = info[0].AdapterLuid;
    (void)l;
    return D3DKMTEnumAdapters2(&e);
}
EOF
compile "$tmp/call.c"
report $? "mingw: prototypes usable from Windows code"

# The i386 layouts (KMT_CHECK_SIZE_I386 / KMT_CHECK_OFFSET_I386: the
# structures with pointers) hold for 32-bit mingw-w64, and a wrong one is
# caught.
cc32=${KMT_MINGW_CC32:-i686-w64-mingw32-gcc}
if command -v "$cc32" >/dev/null 2>&1; then
    printf '#include <kmtshim/d3dkmthk.h>\n' >"$tmp/i386.c"
    "$cc32" -std=c11 -fsyntax-only -Wall -Wextra -Werror -I"$srcdir/include" "$tmp/i386.c" >"$tmp/log" 2>&1
    report $? "mingw i386: d3dkmthk.h's i386 layout assertions hold"
    cat >"$tmp/wrong32.c" <<'EOF'
#include <kmtshim/d3dkmthk.h>
KMT_CHECK_SIZE_I386(D3DKMT_SETVIDPNSOURCEOWNER, 0x20);
EOF
    "$cc32" -std=c11 -fsyntax-only -I"$srcdir/include" "$tmp/wrong32.c" >"$tmp/log" 2>&1
    if [ $? -ne 0 ] && grep -q 'i386: sizeof(D3DKMT_SETVIDPNSOURCEOWNER) != 0x20' "$tmp/log"; then r=0; else r=1; fi
    report $r "mingw i386: a wrong i386 layout fails to compile"
else
    n=$((n + 1)); echo "ok $n # SKIP no $cc32"
    n=$((n + 1)); echo "ok $n # SKIP no $cc32"
fi

exit $failed
