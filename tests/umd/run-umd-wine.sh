#!/bin/sh
# The Windows half of the UMD tests, under Wine, in TAP:
#
#   test_umd.exe     the UMD scenarios (tests/umd/umd_scenarios.c): the host
#                    loads reference_umd.dll / broken_umd.dll by the names
#                    QueryAdapterInfo(UMDRIVERNAME) answers from the
#                    configuration file written here
#   kmticdload.exe   the ICD sample: finds kmticd.dll through
#                    QueryAdapterInfo(UMOPENGLINFO) -- from the file, then
#                    from KMTSHIM_OPENGL_ICD -- loads it and runs its D3DKMT
#                    lifecycle; a refused version and no ICD at all
#
# One private prefix (tests/umd/run/prefix) with a persistent wineserver,
# stopped and removed at the end (KMTSHIM_KEEP_PREFIX=1 keeps both).  A
# Wine test program passes when its exit status is 0 and its summary line
# reports 0 failures.  Environment: KMTSHIM_TEST_BUILDDIR (make check).

builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
. "$(dirname "$0")/../wine/wine-harness.sh"
harness_load "$builddir/tests/umd/umd-tests.env" "tests/umd/test_umd_host covers the scenarios"
harness_env "$builddir/tests/umd/run"
unset KMTSHIM_UMD_NAME KMTSHIM_OPENGL_ICD KMTSHIM_OPENGL_VERSION KMTSHIM_OPENGL_FLAGS

# ---- the prefix --------------------------------------------------------------------
if harness_boot &&
   "$builddir/scripts/kmtshim-prefix" --prefix "$WINEPREFIX" --dllpath "$tree" \
        --wine-dlldir "$WINE_DLLDIR" >"$logs/kmtshim-prefix.log" 2>&1; then
    tap_ok "a private prefix with kmtshim.dll (wineboot -i, kmtshim-prefix)"
else
    tap_not_ok "preparing the prefix failed, see $logs"
    echo "1..$n"
    exit 1
fi

# ---- the configuration: what QueryAdapterInfo answers --------------------------------
export KMTSHIM_CONFIG="$run/kmtshim.conf"
cat >"$KMTSHIM_CONFIG" <<EOF
# written by run-umd-wine.sh
[adapter miniport=soft]
umd_dx9 = $(winpath "$builddir/dlls/kmtumd/win/reference_umd.dll")
umd_dx10 = $(winpath "$builddir/dlls/kmtumd/win/broken_umd.dll")
umd_dx11 = $(winpath "$builddir/dlls/kmtumd/win/no_such_umd.dll")
umd_dx12 = C:\\windows\\system32\\kernel32.dll
opengl_icd = $(winpath "$builddir/samples/icd/kmticd.dll")
opengl_version = 0x00010001
opengl_flags = 0x2
EOF

# ---- test_umd.exe: one TAP line per scenario, one for the program ----------------------
run_suite test_umd "$builddir/tests/umd/test_umd.exe"

# ---- the ICD sample --------------------------------------------------------------------------
icdload=$builddir/samples/icd/kmticdload.exe
icd_win=$(winpath "$builddir/samples/icd/kmticd.dll")
if [ ! -f "$icdload" ]; then
    tap_not_ok "samples/icd/kmticdload.exe was not built"
    echo "1..$n"
    exit 1
fi

# named by the configuration file
run_exe icd-config "$icdload"
check "ICD from the configuration file: found by UMOPENGLINFO, loaded, version accepted" \
    '[ $rc -eq 0 ] && grep -qF "names the OpenGL ICD $icd_win (version 0x00010001, flags 0x00000002)" "$log" &&
     grep -qF "kmticdload: loaded $icd_win" "$log" && grep -q "^kmticd: DrvValidateVersion(0x00010001): accepted" "$log"'
check "ICD lifecycle through D3DKMT: device, context, fence, allocations, submit, fence reached, every word right" \
    'grep -q "^kmticd: DrvCreateContext: adapter 0x[4-7][0-9a-f]*, device 0x[4-7][0-9a-f]*, context 0x[4-7][0-9a-f]*, fence 0x[4-7][0-9a-f]*" "$log" &&
     grep -q "^kmticd: submitted a fill of 8192 bytes at +4096 with 0x5a5a5a5a, fence 1 reached; 0 of 16384 words wrong" "$log" &&
     grep -q "^kmticd: DrvDeleteContext: everything destroyed" "$log" && ! grep -q "failed: NTSTATUS" "$log" &&
     tail -n 1 "$log" | tr -d "\r" | grep -qx "kmticdload: OK"'

# KMTSHIM_OPENGL_ICD overrides the file: a copy under another name in system32
cp "$builddir/samples/icd/kmticd.dll" "$WINEPREFIX/drive_c/windows/system32/kmticd_env.dll"
KMTSHIM_OPENGL_ICD='C:\windows\system32\kmticd_env.dll' run_exe icd-env "$icdload"
check "KMTSHIM_OPENGL_ICD overrides the file" \
    '[ $rc -eq 0 ] && grep -qF "kmticdload: loaded C:\\windows\\system32\\kmticd_env.dll" "$log" &&
     tail -n 1 "$log" | tr -d "\r" | grep -qx "kmticdload: OK"'

# a version the ICD does not support
KMTSHIM_OPENGL_VERSION=7 run_exe icd-version "$icdload"
check "an ICD refuses a version it does not support (exit 5)" \
    '[ $rc -eq 5 ] && grep -q "^kmticd: DrvValidateVersion(0x00000007): refused" "$log" &&
     grep -q "the ICD refuses version 0x00000007" "$log" && ! grep -q "DrvCreateContext" "$log"'

# nothing configured: the software adapter names no ICD
KMTSHIM_CONFIG= run_exe icd-none "$icdload"
check "without configuration no adapter names an ICD (exit 2, STATUS_OBJECT_NAME_NOT_FOUND)" \
    '[ $rc -eq 2 ] && grep -q "no adapter names an OpenGL ICD (QueryAdapterInfo(UMOPENGLINFO): NTSTATUS 0xc0000034)" "$log"'

echo "1..$n"
[ "$failed" -eq 0 ]
