#!/bin/sh
# Runs bench_wine.exe under Wine, with the gdi32 proxy enabled for it, and
# prints ns per call: kmtshim against Wine's builtin gdi32, same process;
# then the same for the 32-bit bench_wine.exe (i686 kmtshim.dll and proxy)
# where the build has the 32-bit half and a 32-bit Wine is installed.
#
#   bench/wine/run-bench-wine.sh [BUILDDIR] [CALLS]
#
# Prefix: BUILDDIR/bench/wine/prefix (made on the first run).
usage() {
    echo "Usage: bench/wine/run-bench-wine.sh [BUILDDIR] [CALLS]"
    echo "Runs bench_wine.exe (CALLS no-op calls, default 1000000) under Wine with"
    echo "the gdi32 proxy enabled for it; the prefix is BUILDDIR/bench/wine/prefix."
}
case $1 in
    -h|--help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
esac
[ $# -le 2 ] || { usage >&2; exit 2; }
builddir=${1:-${KMTSHIM_BUILDDIR:-.}}
builddir=$(cd "$builddir" 2>/dev/null && pwd) || { echo "run-bench-wine: no directory $1" >&2; usage >&2; exit 2; }
calls=${2:-1000000}
case $calls in ''|*[!0-9]*) usage >&2; exit 2 ;; esac
exe=$builddir/bench/wine/bench_wine.exe
tree=$builddir/dlls/kmtshim/wine/tree
wine=$(sed -n "s/^WINE='\(.*\)'\$/\1/p" "$builddir/tests/wine/wine-tests.env" 2>/dev/null)
[ -x "$wine" ] || wine=$(command -v wine64 || command -v wine)
[ -f "$exe" ] && [ -n "$wine" ] || { echo "run-bench-wine: no bench_wine.exe or no wine" >&2; exit 77; }

export WINEPREFIX="$builddir/bench/wine/prefix" WINEDLLPATH="$tree" WINEDEBUG=-all
export KMTSHIM_MINIPORT=${KMTSHIM_MINIPORT:-soft}
log=$builddir/bench/wine/bench-wine.log
"$builddir/scripts/kmtshim-prefix" --prefix "$WINEPREFIX" --dllpath "$tree" \
    --proxy-dir "$builddir/dlls/gdi32/proxy" --proxy-exe bench_wine.exe >"$log" 2>&1 || { cat "$log"; exit 1; }
# output through a file, never a pipe
(cd "$(dirname "$exe")" && "$wine" bench_wine.exe "$calls") >"$log" 2>&1
rc=$?
"$wine" --version 2>/dev/null
cat "$log"

exe32=$builddir/bench/wine/i386/bench_wine.exe
wine32_dlldir=$(sed -n "s/^WINE32_DLLDIR='\(.*\)'\$/\1/p" "$builddir/tests/wine/wine-tests.env" 2>/dev/null)
# (a kernel without IA-32 emulation refuses Wine's 32-bit loader)
loader32=$(dirname "$wine")/wine
if [ "$rc" -eq 0 ] && [ -f "$exe32" ] && [ -f "$wine32_dlldir/ntdll.dll" ] &&
   { [ ! -x "$loader32" ] || "$loader32" --version >/dev/null 2>&1; }; then
    echo
    echo "32-bit: bench/wine/i386/bench_wine.exe (i686 kmtshim.dll, i386 kmtshim.so, 32-bit proxy)"
    (cd "$(dirname "$exe32")" && "$wine" bench_wine.exe "$calls") >"$log" 2>&1
    rc=$?
    cat "$log"
fi
exit $rc
