#!/bin/sh
# Wine's own Direct3D stack (wined3d) through the gdi32 proxy, in TAP.
#
# d3d9_check.exe, d3d11_check.exe and dxgi_check.exe run under Xvfb (Wine's
# X11 driver, Mesa's llvmpipe for wined3d's GL context) in one prefix,
# first with Wine's gdi32, then with the proxy for every program of the
# prefix (kmtshim-prefix --proxy-all).  Every program must pass both times
# and print the same lines both times; lines starting with '#' (a LUID, a
# budget) differ by design and are left out, the programs compare
# predicates on them instead.  With the proxy, wined3d's display-based
# open (its adapter's LUID), its device, its VidPn ownership and its
# video-memory query (the traces) must have reached kmtshim.
#
# Xvfb and a GL driver are required: a machine without them fails here.
# Environment: KMTSHIM_TEST_BUILDDIR (set by make check),
# KMTSHIM_KEEP_PREFIX=1 keeps the prefix and the server for a look after.

builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
. "$(dirname "$0")/wine-harness.sh"
harness_load "$builddir/tests/wine/wine-tests.env" "wined3d needs Wine"

# The whole run (wineserver, explorer, the programs) on one X server.
harness_xvfb KMT_WINED3D_XVFB "-screen 0 1280x1024x24" "$0" "$@"

tests=$builddir/tests/wine
proxy=$builddir/dlls/gdi32/proxy
programs="d3d9_check d3d11_check dxgi_check"
harness_env "$tests/run-wined3d"

harness_boot_tap "under Xvfb on $DISPLAY"

# prefix MODE: kmtshim-prefix with --no-proxy or --proxy-all
prefix() {
    "$builddir/scripts/kmtshim-prefix" --prefix "$WINEPREFIX" --dllpath "$tree" --proxy-dir "$proxy" \
        --wine-dlldir "$WINE_DLLDIR" "$1" >"$logs/kmtshim-prefix$1.log" 2>&1
}

# run_config NAME: every program; stdout in NAME/PROG.out, Wine's and
# kmtshim's traces in NAME/PROG.err
run_config() {
    mkdir -p "$logs/$1"
    for prog in $programs; do
        (cd "$tests" && exec timeout "$timeout_s" "$WINE" "$prog.exe") \
            >"$logs/$1/$prog.out" 2>"$logs/$1/$prog.err"
        prc=$?
        if [ "$prc" -eq 0 ] && tr -d '\r' <"$logs/$1/$prog.out" | grep -q "^$prog: OK"; then
            tap_ok "$1: $prog.exe passes every step"
        else
            tap_not_ok "$1: $prog.exe exit status $prc"
            diag "$logs/$1/$prog.out"
            tail -n 15 "$logs/$1/$prog.err" | diag
        fi
    done
}

# the channels that show which side answered: kmtshim's thunks (d3dkmt)
# and its PE half (kmtshim); Wine's err lines stay on
export WINEDEBUG=-all,err+all,+kmtshim

# Wine's own budget (the programs' KMT_WINE_BUDGET=wine rule,
# tests/wine/dxgicheck.h): all 0 where Wine's QueryVideoMemoryInfo answers
# with no Vulkan driver to ask (Wine 10.0 in scripts/wine10-lane's root),
# or > 0 (wined3d's estimate where Wine 8.0's gdi32 fails the call).  The
# run checks Wine's answer, not kmtshim's; through the proxy kmtshim
# answers and the rule is > 0.
echo "# $("$WINE" --version 2>/dev/null): without the proxy, Wine's own budget (0 or > 0)"

if prefix --no-proxy; then
    tap_ok "kmtshim-prefix --no-proxy: Wine's gdi32 for every program"
else
    tap_not_ok "kmtshim-prefix --no-proxy failed"
    diag "$logs/kmtshim-prefix--no-proxy.log"
fi
export KMT_WINE_BUDGET=wine
run_config wine
unset KMT_WINE_BUDGET
# wined3d's GL context: without it d3d9_check fails at CreateDevice (an
# "err:wgl" line says why, e.g. no GLX visual: Mesa's libgl1-mesa-dri and
# libglx-mesa0 missing)
log=$logs/wine/d3d9_check.err
check "wined3d got a GL context (D3D9 CreateDevice, no proxy)" \
    "tr -d '\\r' <'$logs/wine/d3d9_check.out' | grep -q '^CreateDevice windowed: ok'"
log=$logs/wine/dxgi_check.err
check "without the proxy kmtshim.dll is never loaded" \
    "! grep -q 'trace:kmtshim:init_unix_call' '$log'"

if prefix --proxy-all; then
    tap_ok "kmtshim-prefix --proxy-all: the proxy for every program, wined3d included"
else
    tap_not_ok "kmtshim-prefix --proxy-all failed"
    diag "$logs/kmtshim-prefix--proxy-all.log"
fi
run_config proxy

for prog in $programs; do
    tr -d '\r' <"$logs/wine/$prog.out" | grep -v '^#' >"$logs/wine/$prog.cmp"
    tr -d '\r' <"$logs/proxy/$prog.out" | grep -v '^#' >"$logs/proxy/$prog.cmp"
    if [ -s "$logs/wine/$prog.cmp" ] && diff -u "$logs/wine/$prog.cmp" "$logs/proxy/$prog.cmp" >"$logs/$prog.diff"; then
        tap_ok "$prog.exe: the same $(wc -l <"$logs/wine/$prog.cmp") lines with and without the proxy"
    else
        tap_not_ok "$prog.exe prints other lines through the proxy"
        diag "$logs/$prog.diff"
    fi
    # the values left out of the comparison, for the log
    for config in wine proxy; do
        tr -d '\r' <"$logs/$config/$prog.out" | sed -n "s/^# /# $config: $prog: /p"
    done
done

# Which side answered wined3d.  The proxy loads kmtshim.dll on the first
# D3DKMT call it routes; the thunks' trace lines name each call that
# reached kmtshim.  dxgi_check makes every call wined3d imports for the
# display: the open by GDI display name (adapter and output), the output's
# device, exclusive ownership of its VidPn source (TakeOwnership), the
# budget (QueryVideoMemoryInfo).  Each of the last three reaches kmtshim
# only when the open gave wined3d a kmtshim adapter.
log=$logs/proxy/dxgi_check.err
check "with the proxy wined3d's process loads kmtshim.dll" \
    "grep -q 'trace:kmtshim:init_unix_call' '$log'"
# The display open: wined3d gives its adapter the LUID the open returned,
# so the open was kmtshim's when the DXGI adapter has a LUID kmtinfo lists
# (a check that does not depend on how kmtshim traces the open).
luids=$("$builddir/tools/kmtinfo/kmtinfo" 2>/dev/null | sed -n 's/^ *LUID [. ]*\([0-9a-f]*:[0-9a-f]*\)$/\1/p')
luid=$(tr -d '\r' <"$logs/proxy/dxgi_check.out" | sed -n 's/^# adapter 0 LUID \([0-9a-f]*:[0-9a-f]*\) .*/\1/p')
if [ -n "$luid" ] && printf '%s\n' "$luids" | grep -qx "$luid"; then
    tap_ok "wined3d's OpenAdapterFromGdiDisplayName reached kmtshim (the DXGI adapter has kmtshim's LUID $luid)"
else
    tap_not_ok "wined3d's OpenAdapterFromGdiDisplayName did not reach kmtshim (DXGI adapter LUID '$luid', kmtshim's: $(echo $luids))"
fi
for call in CreateDevice SetVidPnSourceOwner QueryVideoMemoryInfo; do
    count=$(grep -c "trace:d3dkmt:D3DKMT$call -> STATUS_SUCCESS" "$log")
    if [ "$count" -gt 0 ]; then
        tap_ok "wined3d's $call reached kmtshim ($count successful calls)"
    else
        tap_not_ok "wined3d's $call did not reach kmtshim (the proxy gave it to Wine), see $log"
    fi
done

echo "1..$n"
[ "$failed" -eq 0 ]
