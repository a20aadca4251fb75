#!/bin/sh
# The public headers seen by a Windows compiler: each one must compile on
# its own with mingw-w64 (where kmt_wintypes.h takes the types from
# windows.h), and the layout assertions must really run there.  The i386
# layouts are abi-i386.sh's.  TAP output.
#
# Environment: KMT_MINGW_CC (set by make check), KMTSHIM_TEST_SRCDIR.

cc=${KMT_MINGW_CC:-}

if [ -z "$cc" ] || ! command -v "$cc" >/dev/null 2>&1; then
    echo "1..0 # SKIP no mingw-w64 compiler"
    exit 0
fi

. "${KMTSHIM_TEST_SRCDIR:-$(dirname "$0")/../..}/tests/unit/abi-common.sh"

# compile FILE: a syntax-only C11 build with warnings as errors.
compile() {
    "$cc" -std=c11 -fsyntax-only -Wall -Wextra -Werror -I"$srcdir/include" "$1" >"$tmp/log" 2>&1
}

echo "1..$(( $(echo $headers | wc -w) + 4 ))"

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

exit $failed
