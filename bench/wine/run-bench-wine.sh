#!/bin/sh
# Runs bench_wine.exe under Wine, with the gdi32 proxy enabled for it, and
# prints ns per call: kmtshim against Wine's builtin gdi32, same process.
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
exit $rc
