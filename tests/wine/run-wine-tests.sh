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
# the execution calls, and the events' way through both halves (duplicate,
# queued by the core's thread, set and released by the PE half)
WINEDEBUG=-all,+kmtshim run_exe trace-exec "$tests/test_kmtshim.exe" submit cpu_notification
missing=
for pattern in "trace:d3dkmt:D3DKMTCreateContextVirtual -> STATUS_SUCCESS" \
               "trace:d3dkmt:D3DKMTSubmitCommand Commands 0x" \
               "trace:d3dkmt:D3DKMTSubmitCommand -> STATUS_INVALID_PARAMETER" \
               "trace:d3dkmt:D3DKMTCreateSynchronizationObject2 -> STATUS_SUCCESS" \
               "trace:d3dkmt:D3DKMTSignalSynchronizationObject -> STATUS_SUCCESS" \
               "trace:d3dkmt:D3DKMTWaitForSynchronizationObjectFromCpu -> STATUS_SUCCESS" \
               "trace:d3dkmt:D3DKMTDestroyContext -> STATUS_SUCCESS" \
               "trace:kmtshim:pump_thread event pump running" \
               "trace:kmtshim:capture_event event [0-9A-Fa-f]*, kmtshim's duplicate" \
               "trace:kmtshim:event_set event 0x[0-9a-f]* queued" \
               "trace:kmtshim:deliver_one event [0-9A-Fa-f]* set" \
               "trace:kmtshim:deliver_one event [0-9A-Fa-f]* released"; do
    grep -q "$pattern" "$log" || missing="$missing
$pattern"
done
if [ "$rc" -eq 0 ] && [ -z "$missing" ]; then
    tap_ok "WINEDEBUG=+kmtshim traces contexts, submissions, sync objects and each event's way"
else
    tap_not_ok "WINEDEBUG=+kmtshim execution trace incomplete (exit $rc), see $log; missing:$missing"
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

# ---- the proxy's routing of names a newer Wine may have ----------------------------------------
# Wine 8 has none of the execution and sync-object names, so their routes
# are generated from Wine 8's list plus three such names, and compiled.
gen=$run/gen-proxy
mkdir -p "$gen"
{ cat "$builddir/dlls/gdi32/gdi32-exports.txt"
  echo "  00001000  9001 D3DKMTCreateContext"
  echo "  00001000  9002 D3DKMTSubmitCommand"
  echo "  00001000  9003 D3DKMTSignalSynchronizationObjectFromGpu2"; } >"$gen/exports.txt"
if AWK=${AWK:-awk} sh "$KMT_SRCDIR/dlls/gdi32/gen-proxy.sh" "$gen/exports.txt" \
        "$builddir/dlls/kmtshim/wine/kmtshim.list" "$KMT_SRCDIR/dlls/gdi32/routing.txt" "$gen" >"$logs/gen-proxy.log" 2>&1 &&
   grep -qx "KMT_ROUTE_HANDLE(CreateContext, 0)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_HANDLE(SubmitCommand, 28)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_HANDLE_PTR(SignalSynchronizationObjectFromGpu2, 24)" "$gen/routes.h" &&
   grep -q "D3DKMTSubmitCommand = route_D3DKMTSubmitCommand @9002" "$gen/gdi32.def" &&
   ! grep -q "KMT_PROXY_SHIM(SubmitCommand)" "$gen/routes.h" &&
   "$MINGW_CC" -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -I"$KMT_SRCDIR/include" -I"$gen" \
        -fsyntax-only "$KMT_SRCDIR/dlls/gdi32/proxy.c" >>"$logs/gen-proxy.log" 2>&1; then
    tap_ok "gdi32 proxy: a Wine with the execution names routes them by hDevice/hContext (SubmitCommand: BroadcastContext[0], FromGpu2: *BroadcastContextArray)"
else
    tap_not_ok "gdi32 proxy routes for the execution names, see $logs/gen-proxy.log"
    diag "$logs/gen-proxy.log"
fi

# ---- the sample program -------------------------------------------------------------------
if [ -f "$builddir/samples/win/kmtdemo.exe" ]; then
    run_exe kmtdemo "$builddir/samples/win/kmtdemo.exe"
    if [ "$rc" -eq 0 ] && grep -q "^kmtdemo: OK" "$log" &&
       grep -q "^signaled: WaitForSingleObject -> WAIT_OBJECT_0, .* fence value 1" "$log" &&
       grep -q "^result:   1024 of 1024 words read back" "$log"; then
        tap_ok "samples/win/kmtdemo.exe runs through kmtshim (GPU fill, fence signaled, read back)"
    else
        tap_not_ok "kmtdemo.exe: exit $rc"
        diag "$log"
    fi
fi

echo "1..$n"
[ "$failed" -eq 0 ]
