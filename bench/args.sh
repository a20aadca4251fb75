#!/bin/sh
# Every benchmark program answers --help (a Usage line, exit 0, nothing
# timed) and refuses what it does not know (exit 2) instead of running
# with nonsense counts.  TAP; bench_wine.exe runs under Wine when built.
builddir=${KMTSHIM_TEST_BUILDDIR:?run through make check}
n=0 failed=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# one_program NAME CMD...: the three cases of one program
one_program() {
    name=$1; shift
    "$@" --help >"$out" 2>"$err"; rc=$?
    n=$((n + 1))
    if [ "$rc" = 0 ] && grep -qi '^usage:' "$out" && [ "$(wc -l <"$out")" -lt 40 ]; then
        echo "ok $n - $name --help: Usage, exit 0"
    else
        failed=1; echo "not ok $n - $name --help: exit $rc"; sed 's/^/# /' "$out" "$err" | head -5
    fi
    for bad in --no-such-option abc; do
        "$@" "$bad" >"$out" 2>"$err"; rc=$?
        n=$((n + 1))
        if [ "$rc" = 2 ] && grep -qi 'usage:' "$out" "$err"; then
            echo "ok $n - $name $bad: refused with the usage, exit 2"
        else
            failed=1; echo "not ok $n - $name $bad: exit $rc"; sed 's/^/# /' "$out" | head -5
        fi
    done
}

for p in bench/kmtbench bench/exec/kmtbench-exec bench/vblank/kmtbench-vblank bench/query/kmtbench-query bench/share/kmtbench-share bench/keyedmutex/kmtbench-keyedmutex bench/syncshare/kmtbench-syncshare bench/drm/drm_bench bench/drm/drm_exec_bench bench/drm/drm_share_bench; do
    [ -x "$builddir/$p" ] && one_program "${p##*/}" "$builddir/$p"
done
# the script that runs bench_wine.exe: its own arguments, before any Wine
one_program run-bench-wine.sh sh "$(dirname "$0")/wine/run-bench-wine.sh"
exe=$builddir/bench/wine/bench_wine.exe
wine=$(sed -n "s/^WINE='\(.*\)'\$/\1/p" "$builddir/tests/wine/wine-tests.env" 2>/dev/null)
if [ -f "$exe" ] && [ -x "$wine" ]; then
    export WINEPREFIX="$builddir/bench/wine/args-prefix" WINEDEBUG=-all
    one_program bench_wine.exe "$wine" "$exe"
    timeout 30 "${wine%/*}/wineserver" -k >/dev/null 2>&1
fi
echo "1..$n"
exit $failed
