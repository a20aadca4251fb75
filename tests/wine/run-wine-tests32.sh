#!/bin/sh
# Runs the Windows-side suite's 32-bit programs (the nested i386 build in
# wine32/, see dlls/kmtshim/wine/wine32.mk) under wine and speaks TAP: the
# i686 kmtshim.dll with its i386 kmtshim.so, the 32-bit gdi32 proxy, the
# run's session broker for the sharing rows, and the 32-bit kmtdemo.exe.
# The prefix is the one this Wine starts 32-bit programs in, told by its
# loaders (wine32-prefix.sh): a 32-bit prefix where a separate i386 loader
# sits beside wine64 (WINEARCH=win32, the files in its system32, run by
# that loader), a 64-bit prefix where one loader runs both (the files in
# its syswow64).  SKIP where configure built no 32-bit half, no 32-bit Wine
# is installed or the kernel runs no 32-bit programs.
#
# Environment: as run-wine-tests.sh; KMTSHIM_WINE32_PREFIX=win32|win64
# chooses the prefix instead of the loaders.

builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
. "$(dirname "$0")/wine-harness.sh"
. "$(dirname "$0")/wine32-prefix.sh"
harness_load "$builddir/tests/wine/wine-tests.env" "tests/wine/test_unixlib covers the Linux half"
if [ "$KMT_HAVE_WINE32" != yes ]; then
    echo "1..0 # SKIP no 32-bit half: $KMT_WINE32_WHY"
    exit 0
fi
if [ ! -f "$WINE32_DLLDIR/ntdll.dll" ]; then
    echo "1..0 # SKIP no 32-bit Wine ($WINE32_DLLDIR/ntdll.dll missing: Debian's wine32:i386)"
    exit 0
fi
# Wine's 32-bit loader beside $WINE (Debian: /usr/lib/wine/wine) must
# start: a kernel without IA-32 emulation (or a sandbox such as gVisor)
# refuses every 32-bit ELF program with "Exec format error".
loader32=$(dirname "$WINE")/wine
[ -x "$loader32" ] || loader32=$(command -v wine || echo "$loader32")
if [ -x "$loader32" ] && ! "$loader32" --version >/dev/null 2>&1; then
    echo "1..0 # SKIP $loader32 does not start: this kernel runs no 32-bit programs (IA-32 emulation off?)"
    exit 0
fi
tests=$KMT_WINE32_BUILDDIR/tests/wine
harness_env "$builddir/tests/wine/run32"

arch=${KMTSHIM_WINE32_PREFIX:-$(wine32_prefix_arch "$WINE" "$loader32")}
case $arch in
win32)
    export WINEARCH=win32
    WINE=$loader32
    dir32=$WINEPREFIX/drive_c/windows/system32 ;;
win64)
    dir32=$WINEPREFIX/drive_c/windows/syswow64 ;;
*)
    echo "not ok 1 - KMTSHIM_WINE32_PREFIX=$arch: not win32 or win64"
    echo "1..1"
    exit 1 ;;
esac
# The sharing rows start tests/wine/broker_stats, a Linux program, from the
# test program's own directory.
ln -sf "$builddir/tests/wine/broker_stats" "$tests/broker_stats"

harness_prefix "put the i686 kmtshim.dll and the 32-bit proxy into the $arch prefix's ${dir32##*/}" \
    'cmp -s "$dir32/kmtshim.dll" "$tree/i386-windows/kmtshim.dll" &&
     cmp -s "$dir32/gdi32.dll" "$builddir/dlls/gdi32/proxy/i386/gdi32.dll" &&
     [ "$(readlink "$dir32/gdi32_orig.dll")" = "$WINE32_DLLDIR/gdi32.dll" ]' \
    --wine32-dlldir "$WINE32_DLLDIR"

# ---- the harness sees 32-bit failures and crashes too -------------------------------------
for mode in pass crash; do
    run_exe "selftest-$mode" "$tests/selftest.exe" "$mode"
    got=$(classify "$log" selftest "$rc")
    if [ "$got" = "$mode" ]; then
        tap_ok "harness: 32-bit selftest $mode is classified $mode"
    else
        tap_not_ok "harness: 32-bit selftest $mode classified $got (exit $rc)"
        diag "$log"
    fi
done

# ---- the suites, 32-bit ---------------------------------------------------------------------
run_suite test_kmtshim "$tests/test_kmtshim.exe"
run_suite test_proxy "$tests/test_proxy.exe"
run_suite test_proxy_static "$tests/test_proxy_static.exe"
run_suite test_proxy_user32 "$tests/test_proxy_user32.exe"
run_suite test_desc_probe "$tests/test_desc_probe.exe"

# ---- a 32-bit process loads the i386 Linux half (the only one it can) ---------------------------
WINEDEBUG=-all,+kmtshim run_exe trace "$tests/test_kmtshim.exe" open_close
if grep -q "trace:kmtshim:init_unix_call Linux half loaded" "$log" &&
   grep -q "trace:d3dkmt:D3DKMTOpenAdapterFromLuid -> STATUS_SUCCESS" "$log"; then
    tap_ok "a 32-bit program loads the i386 kmtshim.so and its calls trace as the 64-bit ones"
else
    tap_not_ok "32-bit trace: no Linux half or no traced call, see $log"
fi

# ---- the sample program, 32-bit ----------------------------------------------------------------
run_exe kmtdemo "$builddir/samples/win/i386/kmtdemo.exe"
if [ "$rc" -eq 0 ] && grep -q "^kmtdemo: OK" "$log" &&
   grep -q "^result:   1024 of 1024 words read back" "$log"; then
    tap_ok "samples/win/i386/kmtdemo.exe runs through the 32-bit kmtshim (GPU fill, read back)"
else
    tap_not_ok "32-bit kmtdemo.exe: exit $rc"
    diag "$log"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
