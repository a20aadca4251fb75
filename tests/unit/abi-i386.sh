#!/bin/sh
# The public headers' i386 layouts (KMT_CHECK_SIZE_I386 / _OFFSET_I386: what
# a 32-bit Windows program passes) must hold for both 32-bit compilers:
# i686 mingw-w64, which is Windows' own i386 ABI, and gcc -m32, which builds
# the 32-bit Linux library.  Each checks every header on its own and all
# together, and must reject a wrong layout.  TAP output.
#
# Environment: KMT_MINGW_CC32 (default i686-w64-mingw32-gcc), KMT_CC32
# (default "gcc -m32"), KMTSHIM_TEST_SRCDIR.

mingw32=${KMT_MINGW_CC32:-i686-w64-mingw32-gcc}
gcc32=${KMT_CC32:-gcc -m32}

. "${KMTSHIM_TEST_SRCDIR:-$(dirname "$0")/../..}/tests/unit/abi-common.sh"
per_cc=$(($(echo $headers | wc -w) + 3))

skip_all() {   # skip_all WHY
    i=0
    while [ $i -lt $per_cc ]; do
        n=$((n + 1)); echo "ok $n # SKIP $1"; i=$((i + 1))
    done
}

# check_with NAME CC...: the headers under one 32-bit compiler.
check_with() {
    name=$1; shift
    compile() { "$@" -std=c11 -fsyntax-only -Wall -Wextra -Werror -I"$srcdir/include" "$src" >"$tmp/log" 2>&1; }
    printf '#include <stdint.h>\n' >"$tmp/probe.c"
    if ! "$@" -std=c11 -fsyntax-only "$tmp/probe.c" >/dev/null 2>&1; then
        skip_all "no working $name"
        return
    fi
    for h in $headers; do
        printf '#include <kmtshim/%s>\n' "$h" >"$tmp/one.c"
        src=$tmp/one.c compile "$@"
        report $? "$name: $h's i386 layouts hold"
    done
    for h in $headers; do printf '#include <kmtshim/%s>\n' "$h"; done >"$tmp/all.c"
    src=$tmp/all.c compile "$@"
    report $? "$name: all headers together"

    # The i386 assertions are live, with the ILP32 types of 32-bit Windows
    # and 64-bit integers aligned to 8 inside structures.
    cat >"$tmp/live.c" <<'EOS'
#include <kmtshim/kmtshim.h>
#ifdef KMT_ABI_X86_64
#error the x86_64 layout assertions are on for an i386 compiler
#endif
_Static_assert(sizeof(HANDLE) == 4 && sizeof(SIZE_T) == 4 && sizeof(LONG) == 4, "ILP32");
_Static_assert(sizeof(WCHAR) == 2, "WCHAR");
_Static_assert(offsetof(D3DKMT_LOCK, GpuVirtualAddress) == 0x20, "UINT64 after a pointer");
_Static_assert(sizeof(D3DKMT_CREATEALLOCATION) == 0x2c, "CreateAllocation");
KMT_CHECK_SIZE_I386(D3DKMT_CREATEDEVICE, 0x24);
EOS
    src=$tmp/live.c compile "$@"
    report $? "$name: i386 assertions enabled, ILP32 types, 8-aligned UINT64"

    cat >"$tmp/wrong.c" <<'EOS'
#include <kmtshim/d3dkmthk.h>
KMT_CHECK_SIZE_I386(D3DKMT_LOCK, 0x30);
EOS
    src=$tmp/wrong.c compile "$@"
    if [ $? -ne 0 ] && grep -q 'i386: sizeof(D3DKMT_LOCK) != 0x30' "$tmp/log"; then r=0; else r=1; fi
    report $r "$name: a wrong i386 layout fails to compile"
}

echo "1..$((2 * per_cc))"
if command -v "$mingw32" >/dev/null 2>&1; then
    check_with "$mingw32" $mingw32
else
    skip_all "no $mingw32"
fi
check_with "$gcc32" $gcc32

exit $failed
