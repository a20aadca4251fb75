#!/bin/sh
# The wow64 layout tables (dlls/kmtshim/wine/unix/wow64_layouts.h) against
# the headers' i386 layout: wow64_layouts_i386.c asserts every listed i386
# offset, size and 4-byte member under i686 mingw-w64 (Windows' own i386
# ABI) and gcc -m32, and a wrong offset must fail.  (The x86_64 side is
# asserted where the tables are built.)  TAP output.
#
# Environment: KMT_MINGW_CC32 (default i686-w64-mingw32-gcc), KMT_CC32
# (default "gcc -m32"), KMTSHIM_TEST_SRCDIR.

mingw32=${KMT_MINGW_CC32:-i686-w64-mingw32-gcc}
gcc32=${KMT_CC32:-gcc -m32}

. "${KMTSHIM_TEST_SRCDIR:-$(dirname "$0")/../..}/tests/unit/abi-common.sh"
unix=$srcdir/dlls/kmtshim/wine/unix

# check_with NAME CC...: two TAP lines, the tables and a negative control.
check_with() {
    name=$1; shift
    compile() {   # compile DIR CC...: DIR's wow64_layouts_i386.c
        dir=$1; shift
        "$@" -std=c11 -fsyntax-only -Wall -Wextra -Werror -I"$srcdir/include" -I"$srcdir/dlls/kmtshim/wine" \
            "$dir/wow64_layouts_i386.c" >"$tmp/log" 2>&1
    }
    printf '#include <stdint.h>\n' >"$tmp/probe.c"
    if ! "$@" -std=c11 -fsyntax-only "$tmp/probe.c" >/dev/null 2>&1; then
        n=$((n + 1)); echo "ok $n # SKIP no working $name"
        n=$((n + 1)); echo "ok $n # SKIP no working $name"
        return
    fi
    compile "$unix" "$@"
    report $? "$name: the wow64 layout tables match the i386 headers"

    # a copy with one wrong i386 offset
    mkdir -p "$tmp/unix"
    cp "$unix/wow64_layouts_i386.c" "$unix/wow64.h" "$tmp/unix/"
    sed 's/^KMT_W64_PTR(D3DKMT_LOCK2, pData, 0x0c)/KMT_W64_PTR(D3DKMT_LOCK2, pData, 0x10)/' \
        "$unix/wow64_layouts.h" >"$tmp/unix/wow64_layouts.h"
    compile "$tmp/unix" "$@"
    if [ $? -ne 0 ] && grep -q 'i386 offset of D3DKMT_LOCK2.pData' "$tmp/log"; then r=0; else r=1; fi
    report $r "$name: a wrong i386 offset in a table fails to compile"
}

echo "1..4"
if command -v "$mingw32" >/dev/null 2>&1; then
    check_with "$mingw32" $mingw32
else
    n=$((n + 1)); echo "ok $n # SKIP no $mingw32"
    n=$((n + 1)); echo "ok $n # SKIP no $mingw32"
fi
check_with "$gcc32" $gcc32

exit $failed
