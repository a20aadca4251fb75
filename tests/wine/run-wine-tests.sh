#!/bin/sh
# Runs the Windows-side conformance suite under wine and speaks TAP.
#
# One private prefix per run, under the build dir (tests/wine/run/prefix),
# served by a persistent wineserver (`wineserver -p`, ~40 ms a program
# instead of ~0.5 s) and stopped with `wineserver -k` at the end.  Every
# program's output goes to a file (tests/wine/run/logs/): with a persistent
# server, output captured through a pipe never ends, because Wine's
# background processes inherit the pipe.  A program passes when its exit
# status is 0 AND its summary line is there and reports 0 failures: wine's
# exit status alone is modulo 256, and a crash may end with a small code.
#
# Environment: KMTSHIM_TEST_BUILDDIR (set by make check),
# KMTSHIM_KEEP_PREFIX=1 keeps the prefix and the server for a look after.

builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
env_file=$builddir/tests/wine/wine-tests.env
if [ ! -r "$env_file" ]; then
    echo "1..0 # SKIP $env_file missing (run through make check)"
    exit 0
fi
. "$env_file"

if [ "$KMT_HAVE_WINE" != yes ]; then
    echo "1..0 # SKIP configure found no Wine / mingw-w64: the Wine side is not built"
    exit 0
fi
if [ "$KMT_SANITIZERS" = yes ]; then
    echo "1..0 # SKIP sanitizer build: an ASan kmtshim.so cannot be loaded by wine (tests/wine/test_unixlib covers the Linux half)"
    exit 0
fi
if [ ! -x "$WINE" ] || [ ! -x "$WINESERVER" ]; then
    echo "1..0 # SKIP wine ($WINE) or wineserver ($WINESERVER) not executable"
    exit 0
fi

tests=$builddir/tests/wine
run=$tests/run
logs=$run/logs
tree=$builddir/dlls/kmtshim/wine/tree
proxy=$builddir/dlls/gdi32/proxy
timeout_s=${KMTSHIM_WINE_TIMEOUT:-120}

export WINEPREFIX="$run/prefix"
export WINEDLLPATH="$tree"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="
export KMTSHIM_MINIPORT=soft            # deterministic: the software adapter only
unset KMTSHIM_DEBUG

n=0
failed=0
tap_ok() { n=$((n + 1)); echo "ok $n - $*"; }
tap_not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { sed 's/^/# /' "$@"; }

stop_server() {
    if [ -z "$KMTSHIM_KEEP_PREFIX" ]; then
        "$WINESERVER" -k >/dev/null 2>&1
        "$WINESERVER" -w >/dev/null 2>&1
        rm -rf "$WINEPREFIX"
    fi
}

# ---- the prefix ------------------------------------------------------------------
# a run that was killed may have left its persistent server behind
[ -d "$WINEPREFIX" ] && "$WINESERVER" -k >/dev/null 2>&1
rm -rf "$run"
mkdir -p "$logs" "$WINEPREFIX" || { echo "1..0 # SKIP cannot create $run"; exit 0; }
trap 'stop_server' EXIT
trap 'exit 1' INT TERM HUP

"$WINESERVER" -p >"$logs/wineserver.log" 2>&1
if timeout "$timeout_s" "$WINE" wineboot -i >"$logs/wineboot.log" 2>&1; then
    tap_ok "a new prefix under the build dir (wineboot -i, persistent wineserver)"
else
    tap_not_ok "wineboot -i failed, see $logs/wineboot.log"
    echo "1..$n"
    exit 1
fi
# the background processes, started once (output to a file, never a pipe)
timeout "$timeout_s" "$WINE" cmd /c exit >"$logs/cmd.log" 2>&1

if "$builddir/scripts/kmtshim-prefix" --prefix "$WINEPREFIX" --dllpath "$tree" --proxy-dir "$proxy" \
        --wine-dlldir "$WINE_DLLDIR" --proxy-exe test_proxy.exe --proxy-exe test_proxy_static.exe \
        --proxy-exe test_proxy_user32.exe >"$logs/kmtshim-prefix.log" 2>&1 &&
   grep -q "system32" "$logs/kmtshim-prefix.log"; then
    tap_ok "kmtshim-prefix prepared the prefix (trigger copy, proxy, overrides)"
else
    tap_not_ok "kmtshim-prefix failed"
    diag "$logs/kmtshim-prefix.log"
fi

# ---- running one program ------------------------------------------------------------
# run_exe NAME EXE [ARGS...]: runs EXE (from its own directory), output in
# $logs/NAME.log; sets rc.
run_exe() {
    name=$1 exe=$2
    shift 2
    log=$logs/$name.log
    (cd "$(dirname "$exe")" && exec timeout "$timeout_s" "$WINE" "$(basename "$exe")" "$@") >"$log" 2>&1
    rc=$?
}

# summary_of LOG PROG: prints "executed todo failures skipped" from the
# program's summary line, nothing if it is missing.
summary_of() {
    tr -d '\r' <"$1" | sed -n "s/^$2: \([0-9]*\) tests executed (\([0-9]*\) marked as todo, \([0-9]*\) failures), \([0-9]*\) skipped\.\$/\1 \2 \3 \4/p" | tail -n 1
}

# classify LOG PROG RC: "pass", "fail", or "crash" (no summary line)
classify() {
    s=$(summary_of "$1" "$2")
    if [ -z "$s" ]; then
        echo crash
    elif [ "$3" -eq 0 ] && [ "$(echo "$s" | cut -d' ' -f3)" = 0 ]; then
        echo pass
    else
        echo fail
    fi
}

# run_suite NAME EXE: one TAP line per subtest, one for the whole program.
run_suite() {
    name=$1 exe=$2
    if [ ! -f "$exe" ]; then
        tap_not_ok "$name: $exe was not built"
        return
    fi
    run_exe "$name" "$exe"
    while read -r tag id executed fails todos skips; do
        [ "$tag" = "kmtw-subtest:" ] || continue
        skips=$(printf '%s' "$skips" | tr -d '\r')
        detail="$executed checks, $todos todo, $skips skipped"
        if [ "$fails" = 0 ]; then
            tap_ok "$id ($detail)"
        else
            tap_not_ok "$id: $fails failures ($detail)"
            # the failure lines of this subtest: between the previous subtest line and this one
            awk -v id="$id" '/^kmtw-subtest: / { if ($2 == id) { printf "%s", buf; exit } buf = ""; next }
                             /Test failed|succeeded inside todo|exception/ { buf = buf "# " $0 "\n" }' "$log"
        fi
    done <"$log"
    case $(classify "$log" "$name" "$rc") in
    pass) tap_ok "$name: exit status 0, summary: $(summary_of "$log" "$name" | awk '{ printf "%s checks, %s todo, %s failures, %s skipped", $1, $2, $3, $4 }')" ;;
    fail) tap_not_ok "$name: exit status $rc, summary: $(summary_of "$log" "$name")"; grep -E "Test failed|inside todo" "$log" | head -n 20 | sed 's/^/# /' ;;
    crash) tap_not_ok "$name: no summary line (exit status $rc: crash or hang), see $log"; tail -n 15 "$log" | sed 's/^/# /' ;;
    esac
}

# ---- the harness must see failures ----------------------------------------------------
selftest() {
    mode=$1 want=$2 want_summary=$3
    run_exe "selftest-$mode" "$tests/selftest.exe" "$mode"
    got=$(classify "$log" selftest "$rc")
    if [ "$got" = "$want" ] && [ "$(summary_of "$log" selftest)" = "$want_summary" ]; then
        tap_ok "harness: selftest $mode is classified $want"
    else
        tap_not_ok "harness: selftest $mode classified $got (exit $rc, summary '$(summary_of "$log" selftest)'), expected $want '$want_summary'"
        diag "$log"
    fi
}
selftest pass pass "3 1 0 1"
selftest fail fail "5 1 1 1"
selftest todo-pass fail "1 0 1 0"
selftest crash crash ""

# ---- the suites --------------------------------------------------------------------------
run_suite test_kmtshim "$tests/test_kmtshim.exe"
run_suite test_proxy "$tests/test_proxy.exe"
run_suite test_proxy_static "$tests/test_proxy_static.exe"
run_suite test_proxy_user32 "$tests/test_proxy_user32.exe"

# ---- tracing: WINEDEBUG=+kmtshim shows each call, its arguments and NTSTATUS ---------------
WINEDEBUG=-all,+kmtshim run_exe trace "$tests/test_kmtshim.exe" open_close
if grep -q "trace:d3dkmt:D3DKMTOpenAdapterFromLuid luid " "$log" &&
   grep -q "trace:d3dkmt:D3DKMTOpenAdapterFromLuid -> STATUS_SUCCESS" "$log" &&
   grep -q "trace:d3dkmt:D3DKMTCloseAdapter -> STATUS_INVALID_PARAMETER" "$log" &&
   grep -q "trace:kmtshim:init_unix_call" "$log"; then
    tap_ok "WINEDEBUG=+kmtshim traces calls, arguments and NTSTATUS on both halves"
else
    tap_not_ok "WINEDEBUG=+kmtshim trace incomplete, see $log"
fi
WINEDEBUG=-all run_exe trace-off "$tests/test_kmtshim.exe" open_close
if ! grep -q "trace:" "$log"; then
    tap_ok "WINEDEBUG=-all: no trace lines"
else
    tap_not_ok "WINEDEBUG=-all still traces, see $log"
fi
# the stubs say so once per function (each is called twice)
WINEDEBUG=-all,fixme+kmtshim run_exe stub-fixme "$tests/test_kmtshim.exe" stubs
once=$(grep -c "fixme:kmtshim:D3DKMT[A-Za-z0-9]* (" "$log")
twice=$(grep "fixme:kmtshim:D3DKMT[A-Za-z0-9]* (" "$log" | sed 's/.*fixme:kmtshim:\(D3DKMT[A-Za-z0-9]*\) .*/\1/' | sort | uniq -d | wc -l)
if [ "$rc" -eq 0 ] && [ "$once" -gt 150 ] && [ "$twice" -eq 0 ]; then
    tap_ok "stubs: one FIXME per function ($once functions), STATUS_NOT_SUPPORTED, no abort"
else
    tap_not_ok "stubs: $once FIXME lines, $twice functions twice, exit $rc"
fi

# ---- the sample program -------------------------------------------------------------------
if [ -f "$builddir/samples/win/kmtdemo.exe" ]; then
    run_exe kmtdemo "$builddir/samples/win/kmtdemo.exe"
    if [ "$rc" -eq 0 ] && grep -q "^kmtdemo: OK" "$log"; then
        tap_ok "samples/win/kmtdemo.exe runs through kmtshim"
    else
        tap_not_ok "kmtdemo.exe: exit $rc"
        diag "$log"
    fi
fi

echo "1..$n"
[ "$failed" -eq 0 ]
