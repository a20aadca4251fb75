#!/bin/sh
# The Windows-side code as 32-bit Windows builds it (i686 mingw-w64), in
# every build: the 32-bit Wine half is built only where Debian's wine32 is
# installed, and this keeps its PE code compiling where it is not.  Each
# PE half source, the gdi32 proxy with its i386 routes, and the Windows test
# programs compile with -Werror; and the descriptor probe is live on i386
# (VirtualQuery, desc_probe.h) while x86_64 keeps its bounds check without
# a call.  TAP output.
#
# Environment: KMT_MINGW_CC32 (default i686-w64-mingw32-gcc), KMT_MINGW_CC64
# (default x86_64-w64-mingw32-gcc), KMTSHIM_TEST_SRCDIR, KMTSHIM_TEST_BUILDDIR.

cc32=${KMT_MINGW_CC32:-i686-w64-mingw32-gcc}
cc64=${KMT_MINGW_CC64:-x86_64-w64-mingw32-gcc}
srcdir=${KMTSHIM_TEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
wine=$srcdir/dlls/kmtshim/wine
flags="-std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
       -Wmissing-prototypes -Wstrict-prototypes -I$srcdir/include -I$wine"

if ! printf 'int x;\n' | "$cc32" -x c -fsyntax-only - >/dev/null 2>&1; then
    echo "1..0 # SKIP no working $cc32 (Debian: gcc-mingw-w64-i686)"
    exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
# row STATUS DESCRIPTION: one TAP line; the last compiler output on failure
row() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        failed=$((failed + 1))
        echo "not ok $n - $2"
        sed 's/^/# /' "$tmp/log"
    fi
}

for src in "$wine"/pe/*.c; do
    "$cc32" $flags -fsyntax-only "$src" >"$tmp/log" 2>&1
    row $? "i686: dlls/kmtshim/wine/pe/$(basename "$src") compiles"
done

# the proxy over Wine 8's gdi32 exports, routed for i386
exports=$builddir/dlls/gdi32/gdi32-exports.txt list=$builddir/dlls/kmtshim/wine/kmtshim.list
if [ -r "$exports" ] && [ -r "$list" ]; then
    mkdir -p "$tmp/gen" &&
    AWK=${AWK:-awk} sh "$srcdir/dlls/gdi32/gen-proxy.sh" "$exports" "$list" "$srcdir/dlls/gdi32/routing.txt" \
        "$tmp/gen" i386 >"$tmp/log" 2>&1 &&
    "$cc32" $flags -I"$tmp/gen" -fsyntax-only "$srcdir/dlls/gdi32/proxy.c" >>"$tmp/log" 2>&1
    row $? "i686: dlls/gdi32/proxy.c compiles with its i386 routes"
else
    n=$((n + 1)); echo "ok $n # SKIP no Wine build here: no gdi32 export list to route"
fi

for src in "$srcdir"/tests/wine/*.c; do
    case $(basename "$src") in test_unixlib.c|broker_stats.c) continue ;; esac
    "$cc32" $flags -O1 -D__USE_MINGW_ANSI_STDIO=1 -I"$srcdir/tests/wine" -I"$srcdir/tests/wine/fake" \
        -fsyntax-only "$src" >"$tmp/log" 2>&1
    row $? "i686: tests/wine/$(basename "$src") compiles"
done

# The probe is live where it must be: the i386 PE half asks VirtualQuery
# about descriptors, the x86_64 one checks bounds without a call.
printf '#include "desc_probe.h"\nBOOL f(const void *p);\nBOOL f(const void *p) { return kmt_win_desc_ok(p, 8); }\n' \
    >"$tmp/probe.c"
"$cc32" $flags -S -o "$tmp/probe32.s" "$tmp/probe.c" >"$tmp/log" 2>&1 && grep -q "VirtualQuery" "$tmp/probe32.s"
row $? "i686: kmt_win_desc_ok probes with VirtualQuery"
"$cc32" $flags -S -o "$tmp/events32.s" "$wine/pe/events.c" >"$tmp/log" 2>&1 && grep -q "VirtualQuery" "$tmp/events32.s"
row $? "i686: the PE half's event wrappers probe their descriptors"
if printf 'int x;\n' | "$cc64" -x c -fsyntax-only - >/dev/null 2>&1; then
    "$cc64" $flags -S -o "$tmp/probe64.s" "$tmp/probe.c" >"$tmp/log" 2>&1 && ! grep -q "call" "$tmp/probe64.s"
    row $? "x86_64: kmt_win_desc_ok is a bounds check without a call"
else
    n=$((n + 1)); echo "ok $n # SKIP no working $cc64"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
