#!/bin/sh
# Runs the Windows-side conformance suite under wine and speaks TAP.
#
# One private prefix per run (tests/wine/run/prefix) with a persistent
# wineserver, every program's output in tests/wine/run/logs/; how a program
# passes and why it runs that way: wine-harness.sh.
#
# Environment: KMTSHIM_TEST_BUILDDIR (set by make check),
# KMTSHIM_KEEP_PREFIX=1 keeps the prefix and the server for a look after.

builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
. "$(dirname "$0")/wine-harness.sh"
harness_load "$builddir/tests/wine/wine-tests.env" "tests/wine/test_unixlib covers the Linux half"
tests=$builddir/tests/wine
harness_env "$tests/run"

# ---- the prefix ------------------------------------------------------------------
harness_prefix "prepared the prefix (trigger copy, proxy, overrides)" \
    'grep -q "system32" "$logs/kmtshim-prefix.log"'

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
run_suite test_desc_probe "$tests/test_desc_probe.exe"

# ---- kmtshim's handles and Wine 11's: the proxy over a fake Wine 11 gdi32 -----------------
# An app-local proxy (tests/wine/fake/Makefile.inc): the program, the proxy
# as gdi32.dll, the fake as gdi32_orig.dll and Wine's gdi32 as
# gdi32_wine.dll in one directory, gdi32=n,b for this run only.
ln -sf "$WINE_DLLDIR/gdi32.dll" "$tests/fake/app/gdi32_wine.dll"
overrides=$WINEDLLOVERRIDES
export WINEDLLOVERRIDES="$overrides;gdi32=n,b"
run_suite test_fakegdi "$tests/fake/app/test_fakegdi.exe"
export WINEDLLOVERRIDES="$overrides"

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

# ---- a library the Linux half needs is missing: one err: line names it ----------------------
# A tree like the build's whose kmtshim-core.so needs libdrm.so.0 (its
# libdrm.so.2 entry rewritten, same length), then one without the core.
# kmtdemo.exe makes several calls; the line comes once, with Wine's default
# channels (no WINEDEBUG).
missing_tree() {
    broken=$run/$1
    mkdir -p "$broken/x86_64-windows" "$broken/x86_64-unix"
    cp "$tree/x86_64-windows/kmtshim.dll" "$broken/x86_64-windows/" &&
    cp "$tree/x86_64-unix/kmtshim.so" "$broken/x86_64-unix/"
}
run_missing() {
    (unset WINEDEBUG; WINEDLLPATH=$broken run_exe "$1" "$builddir/samples/win/kmtdemo.exe"
     echo "$rc" >"$logs/$1.rc")
    log=$logs/$1.log rc=$(cat "$logs/$1.rc")
    errs=$(grep -c "err:kmtshim:" "$log")
}
if missing_tree missing-lib &&
   perl -0777 -pe 's/libdrm\.so\.2\0/libdrm.so.0\0/g' "$tree/x86_64-unix/kmtshim-core.so" \
       >"$broken/x86_64-unix/kmtshim-core.so"; then
    run_missing missing-lib
    check "a missing library: EnumAdapters2 is STATUS_DLL_NOT_FOUND and one err: line names it ($errs lines)" \
        '[ "$rc" -ne 0 ] && grep -q "EnumAdapters2 failed: 0xc0000135" "$log" && [ "$errs" -eq 1 ] &&
         grep -q "err:kmtshim:[a-z_]* kmtshim.s Linux half cannot run: libdrm\.so\.0: cannot open shared object file" "$log"'
else
    tap_not_ok "a missing library: cannot make the tree in $broken"
fi
if missing_tree missing-core; then
    run_missing missing-core
    check "kmtshim-core.so missing: STATUS_DLL_NOT_FOUND, one err: line saying to reinstall ($errs lines)" \
        '[ "$rc" -ne 0 ] && grep -q "EnumAdapters2 failed: 0xc0000135" "$log" && [ "$errs" -eq 1 ] &&
         grep -q "err:kmtshim:.*kmtshim-core\.so: cannot open shared object file.*reinstall kmtshim" "$log"'
else
    tap_not_ok "kmtshim-core.so missing: cannot make the tree in $broken"
fi

# ---- the proxy's routing of names a newer Wine may have ----------------------------------------
# wine_exports NAME: the installed gdi32 exports D3DKMT<NAME> (winedump's
# line for it ends with the name, or with "(-> win32u.X)" where Wine 10's
# gdi32 forwards it)
wine_exports() {
    awk -v n="D3DKMT$1" '$3 == n { found = 1 } END { exit !found }' "$builddir/dlls/gdi32/gdi32-exports.txt"
}
# gen_routes NAME D3DKMT-NAMES...: the proxy generated for the installed
# gdi32 plus those of the names it lacks (ordinals from 9001; Wine 10 has
# some of them already), in $run/NAME, and compiled (not
# with gen_arch=i386: generated for i386 only); the
# log in $logs/NAME.log.  The caller then greps $gen/routes.h and gdi32.def.
gen_routes() {
    gen=$run/$1 glog=$logs/$1.log
    shift
    mkdir -p "$gen"
    { cat "$builddir/dlls/gdi32/gdi32-exports.txt"
      ord=9000
      for name in "$@"; do
          wine_exports "$name" && continue
          ord=$((ord + 1)); echo "  00001000  $ord D3DKMT$name"
      done; } >"$gen/exports.txt"
    AWK=${AWK:-awk} sh "$KMT_SRCDIR/dlls/gdi32/gen-proxy.sh" "$gen/exports.txt" \
        "$builddir/dlls/kmtshim/wine/kmtshim.list" "$KMT_SRCDIR/dlls/gdi32/routing.txt" "$gen" \
        "${gen_arch:-x86_64}" >"$glog" 2>&1 || return 1
    # (this build's compiler is for one architecture only)
    [ -z "$gen_arch" ] || return 0
    "$MINGW_CC" -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -I"$KMT_SRCDIR/include" \
        -I"$KMT_SRCDIR/dlls/kmtshim/wine" -I"$gen" \
        -fsyntax-only "$KMT_SRCDIR/dlls/gdi32/proxy.c" >>"$glog" 2>&1
}
# Wine 8 has none of the execution and sync-object names.
if gen_routes gen-proxy CreateContext SubmitCommand SignalSynchronizationObjectFromGpu2 &&
   grep -qx "KMT_ROUTE_HANDLE(CreateContext, 0)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_HANDLE(SubmitCommand, 28)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_HANDLE_PTR(SignalSynchronizationObjectFromGpu2, 24)" "$gen/routes.h" &&
   grep -q "D3DKMTSubmitCommand = route_D3DKMTSubmitCommand @9002" "$gen/gdi32.def" &&
   ! grep -q "KMT_PROXY_SHIM(SubmitCommand)" "$gen/routes.h"; then
    tap_ok "gdi32 proxy: a Wine with the execution names routes them by hDevice/hContext (SubmitCommand: BroadcastContext[0], FromGpu2: *BroadcastContextArray)"
else
    tap_not_ok "gdi32 proxy routes for the execution names, see $glog"
    diag "$glog"
fi
# Wine 8 has no sharing name, Wine 10 most of them: for a Wine that has
# them, routing.txt's rules (device, global handle, NT handle or name,
# object array); ShareObjects' five arguments also when Wine lacks it, so
# this build's own proxy has the form for the installed Wine.
if wine_exports ShareObjects; then
    own_share="KMT_ROUTE_OBJECTS(ShareObjects)"
else
    own_share="KMT_PROXY_SHIM_OBJECTS(ShareObjects)"
fi
if gen_routes gen-proxy-share OpenResource OpenResourceFromNtHandle OpenSyncObjectFromNtHandle2 \
        OpenSynchronizationObject OpenKeyedMutex OpenSyncObjectFromNtHandle OpenNtHandleFromName ShareObjects \
        CreateKeyedMutex AcquireKeyedMutex &&
   grep -qx "KMT_ROUTE_HANDLE(OpenResource, 0)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_HANDLE(OpenResourceFromNtHandle, 0)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_HANDLE(OpenSyncObjectFromNtHandle2, 8)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_GLOBAL(OpenSynchronizationObject, 0)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_GLOBAL(OpenKeyedMutex, 0)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_NT_HANDLE(OpenSyncObjectFromNtHandle, 0)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_NT(OpenNtHandleFromName)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_OBJECTS(ShareObjects)" "$gen/routes.h" &&
   grep -q "D3DKMTShareObjects = route_D3DKMTShareObjects @[0-9]" "$gen/gdi32.def" &&
   grep -qx "KMT_PROXY_SHIM(CreateKeyedMutex)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_HANDLE(AcquireKeyedMutex, 0)" "$gen/routes.h" &&
   grep -qx "$own_share" "$builddir/dlls/gdi32/gen/routes.h"; then
    tap_ok "gdi32 proxy: a Wine with the sharing names routes them by device, global handle, NT handle or name, object array"
else
    tap_not_ok "gdi32 proxy routes for the sharing names, see $glog"
    diag "$glog"
fi

# The 32-bit proxy: i386 thunks, routing.txt's i386 offsets where a pointer
# or HANDLE comes before the deciding handle, two-argument forwarders only
# where the function takes two (stdcall: the callee pops its arguments).
# CreateAllocation is kmtshim's alone under Wine 8 and routed under Wine 10.
if wine_exports CreateAllocation; then
    create_alloc="KMT_ROUTE_HANDLE(CreateAllocation, 0)"
else
    create_alloc="KMT_PROXY_SHIM(CreateAllocation)"
fi
gen_arch=i386
if gen_routes gen-proxy-i386 SubmitCommand SignalSynchronizationObjectFromGpu2 \
        OpenSyncObjectFromNtHandle2 SetProcessSchedulingPriorityClass &&
   grep -qx "KMT_ROUTE_HANDLE(QueryVideoMemoryInfo, 4)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_HANDLE(SubmitCommand, 28)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_HANDLE_PTR(SignalSynchronizationObjectFromGpu2, 16)" "$gen/routes.h" &&
   grep -qx "KMT_ROUTE_HANDLE(OpenSyncObjectFromNtHandle2, 4)" "$gen/routes.h" &&
   grep -qx "KMT_PROXY_SHIM2(SetProcessSchedulingPriorityClass)" "$gen/routes.h" &&
   grep -qx "KMT_PROXY_SHIM2(GetProcessSchedulingPriorityClass)" "$gen/routes.h" &&
   grep -qx "$create_alloc" "$gen/routes.h" &&
   grep -qx "_px_AbortDoc:" "$gen/thunks.S" && grep -q "jmp \*__imp__AbortDoc\$" "$gen/thunks.S" &&
   grep -qx "KMT_ROUTE_HANDLE(QueryVideoMemoryInfo, 8)" "$builddir/dlls/gdi32/gen/routes.h"; then
    tap_ok "gdi32 proxy for i386: i386 thunks, i386 offsets (QueryVideoMemoryInfo 4, FromGpu2 16), exact argument counts, $create_alloc"
else
    tap_not_ok "gdi32 proxy for i386, see $glog and $gen"
    diag "$glog"
fi
gen_arch=

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

# ---- wineserver requests of async CPU waits on one event (docs/wine.md, "Events") ---------
# In the steady state a round (an async wait, the CPU signal that satisfies
# it, the program's WaitForSingleObject) makes the program's wait, the set
# and the check of kmtshim's cached duplicate: three requests of the
# program's thread between the subtest's two marker events.  Only a server
# started with -d1 traces requests, so a tracing one replaces the
# persistent server for this last program.
"$WINESERVER" -k >/dev/null 2>&1
"$WINESERVER" -w >/dev/null 2>&1
"$WINESERVER" -p -d1 2>"$logs/server-trace.log"
run_exe server-requests "$tests/test_kmtshim.exe" event_rounds
"$WINESERVER" -k >/dev/null 2>&1
"$WINESERVER" -w >/dev/null 2>&1
rounds=$(sed -n 's/^#define KMT_EVENT_ROUNDS \([0-9]*\).*/\1/p' "$KMT_SRCDIR/tests/wine/conformance.h")
awk '/create_event\(.*kmtshim-event-rounds-begin/ { tid = $1; next }
     /create_event\(.*kmtshim-event-rounds-end/ { exit }
     tid != "" && $1 == tid && /^[0-9a-f]+: [a-z_]+\( / { sub(/\(.*/, "", $2); print $2 }' \
    "$logs/server-trace.log" | sort | uniq -c >"$logs/server-requests.count"
requests=$(awk '{ n += $1 } END { print n + 0 }' "$logs/server-requests.count")
waits=$(awk '$2 == "select" { print $1 }' "$logs/server-requests.count")
if [ "$rc" -eq 0 ] && [ -n "$rounds" ] && [ "${waits:-0}" -ge "$rounds" ] && [ "$requests" -le $((rounds * 3)) ]; then
    tap_ok "event used again: $requests wineserver requests in $rounds rounds (the wait, the set, one check)"
else
    tap_not_ok "event used again: $requests wineserver requests in ${rounds:-?} rounds (exit $rc), at most $((${rounds:-0} * 3)) expected"
fi
diag "$logs/server-requests.count"

echo "1..$n"
[ "$failed" -eq 0 ]
