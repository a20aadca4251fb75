#!/bin/sh
# OpenAdapterFromHdc with window DCs, in TAP: the conformance suite's
# display-open subtests under Xvfb, where Wine's X11 driver creates
# windows (headless Wine 8 does not, so run-wine-tests.sh skips the window
# rows), with two monitors for the monitor rule (monitor_rule: the one a
# window overlaps most, the nearest one for a window on none).  Each
# subtest runs through kmtshim.dll and through the gdi32 proxy, and the
# window rows must have run, not skipped.
#
# Two monitors: Xvfb lays out several screens all at (0,0) (it has no
# option for a screen's origin), and Wine 8's XRandR handler lists one
# monitor per CRTC, of which Xvfb has one.  So one wide screen, split by
# two RandR 1.5 monitors (xrandr --setmonitor), which the server's
# Xinerama emulation reports as two heads; Wine's X11 driver lists
# Xinerama's heads when told not to use XRandR (UseXRandR=N), each head
# an adapter of its one GPU: \\.\DISPLAY1 (1024x768 at 0,0, primary) and
# \\.\DISPLAY2 (800x600 at 1024,0).  Both map to the software adapter,
# given two VidPn sources.  -noreset: the monitors outlast the restart of
# Wine's server (an X server resets when its last client leaves).
#
# Xvfb and xrandr are required: a machine without them fails here.
# Environment: KMTSHIM_TEST_BUILDDIR (set by make check),
# KMTSHIM_KEEP_PREFIX=1 keeps the prefix and the server for a look after.

builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
. "$(dirname "$0")/wine-harness.sh"
harness_load "$builddir/tests/wine/wine-tests.env" "window DCs need Wine"
harness_xvfb KMT_WINDC_XVFB "-screen 0 1824x768x24 -noreset" "$0" "$@"

tests=$builddir/tests/wine
harness_env "$tests/run-windc"
# DISPLAY2 is the soft adapter's source 1
export KMTSHIM_SOFT_SOURCES=2

harness_prefix "prepared the prefix (trigger copy, proxy, overrides)" true

# the screen as two monitors, side by side
two_monitors() {
    xrandr --setmonitor KMT1 1024/260x768/195+0+0 screen &&
        xrandr --setmonitor KMT2 800/203x600/152+1024+0 none &&
        monitors=$(xrandr --listmonitors) && echo "$monitors" && echo "$monitors" | grep -q '^Monitors: 2$'
}
# UseXRandR is read when the X11 driver starts: a new server, and with it a
# new explorer.exe, lists the Xinerama heads
use_xinerama() {
    timeout "$timeout_s" "$WINE" reg add 'HKCU\Software\Wine\X11 Driver' /v UseXRandR /t REG_SZ /d N /f ||
        return 1
    "$WINESERVER" -k
    "$WINESERVER" -w
    "$WINESERVER" -p
}
log=$logs/xrandr.log
check "xrandr: two monitors (Debian: x11-xserver-utils)" "two_monitors >'$log' 2>&1"
log=$logs/x11-driver.log
check "Wine's X11 driver told to list Xinerama's heads (UseXRandR=N)" "use_xinerama >'$log' 2>&1"

# the window rows ran: no skip in SUBTEST of PROG's last log
check_no_skip() {
    log=$logs/$1.log
    check "$1: $2 ran every row (no skip)" \
        "tr -d '\\r' <'$log' | grep -q '^kmtw-subtest: $1:$2 [1-9][0-9]* 0 [0-9]* 0\$'"
}

# one source: DISPLAY2 has none of its own (through kmtshim.dll; through
# the proxy Wine answers its opens)
KMTSHIM_SOFT_SOURCES=1
run_suite test_kmtshim "$tests/test_kmtshim.exe" window_dcs monitor_rule
KMTSHIM_SOFT_SOURCES=2
check_no_skip test_kmtshim monitor_rule
check "one source: DISPLAY2 refused, and a window's DC on it" \
    "tr -d '\\r' <'$log' | grep -q 'the second display has no source of its own'"
mv "$logs/test_kmtshim.log" "$logs/test_kmtshim-one-source.log"

subtests="display_names display_dcs window_dcs monitor_rule non_display_dcs"
# shellcheck disable=SC2086 # one argument per subtest
run_suite test_kmtshim "$tests/test_kmtshim.exe" $subtests
# shellcheck disable=SC2086
run_suite test_proxy "$tests/test_proxy.exe" setup owner_query $subtests display_open_reaches_kmtshim
for prog in test_kmtshim test_proxy; do
    check_no_skip $prog window_dcs
    check_no_skip $prog monitor_rule
done

echo "1..$n"
[ "$failed" -eq 0 ]
