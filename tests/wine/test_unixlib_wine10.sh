#!/bin/sh
# tests/wine/test_unixlib with a stand-in for Wine 10.0's ntdll.so
# (tests/wine/fake10: the same fake, its server calls built System V and
# __wine_unix_call_dispatcher exported): kmtshim.so must make its NT
# handles through them the System V way, where Wine 8.0's take the
# Windows x64 convention.  TAP, as test_unixlib.
KMT_FAKE_NTDLL=fake10 exec "${KMTSHIM_TEST_BUILDDIR:-.}/tests/wine/test_unixlib"
