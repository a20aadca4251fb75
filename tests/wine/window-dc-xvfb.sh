#!/bin/sh
# OpenAdapterFromHdc with window DCs, in TAP: the conformance suite's
# display-open subtests under Xvfb, where Wine's X11 driver creates
# windows (headless Wine 8 does not, so run-wine-tests.sh skips the window
# rows).  Each subtest runs through kmtshim.dll and through the gdi32
# proxy, and the window rows must have run, not skipped.  Wine 8 lists one
# monitor on Xvfb, even with two Xinerama screens, so one screen it is.
#
# Xvfb is required: a machine without it fails here.
# Environment: KMTSHIM_TEST_BUILDDIR (set by make check),
# KMTSHIM_KEEP_PREFIX=1 keeps the prefix and the server for a look after.

builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
. "$(dirname "$0")/wine-harness.sh"
harness_load "$builddir/tests/wine/wine-tests.env" "window DCs need Wine"
harness_xvfb KMT_WINDC_XVFB "-screen 0 1024x768x24" "$0" "$@"

tests=$builddir/tests/wine
harness_env "$tests/run-windc"

harness_prefix "prepared the prefix (trigger copy, proxy, overrides)" true

subtests="display_names display_dcs window_dcs non_display_dcs"
# shellcheck disable=SC2086 # one argument per subtest
run_suite test_kmtshim "$tests/test_kmtshim.exe" $subtests
# shellcheck disable=SC2086
run_suite test_proxy "$tests/test_proxy.exe" setup owner_query $subtests display_open_reaches_kmtshim

# the window rows ran: no skip in window_dcs
for prog in test_kmtshim test_proxy; do
    log=$logs/$prog.log
    check "$prog: window_dcs ran every row (no skip)" \
        "tr -d '\\r' <'$log' | grep -q '^kmtw-subtest: $prog:window_dcs [1-9][0-9]* 0 [0-9]* 0\$'"
done

echo "1..$n"
[ "$failed" -eq 0 ]
