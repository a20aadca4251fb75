#!/bin/sh
# kmtshim.dll's generated files and the numbers the docs give, against the
# lists they come from (functions.h, gdi32-d3dkmt.txt); needs no Wine, so a
# build without it still notices a stale file.  Output: TAP.
#
# Environment: KMTSHIM_TEST_BUILDDIR, KMTSHIM_TEST_SRCDIR (set by make check).

builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
srcdir=${KMTSHIM_TEST_SRCDIR:-$(dirname "$0")/../..}
wine=$srcdir/dlls/kmtshim/wine
out=$builddir/tests/wine/generated

echo "1..3"
rm -rf "$out"
mkdir -p "$out"
if sh "$wine/gen-files.sh" check "$wine" "$out" 2>"$out/errors"; then
    echo "ok 1 - the checked-in generated files are what the lists make"
    rm -rf "$out"
else
    echo "not ok 1 - the checked-in generated files are what the lists make"
    sed 's/^/# /' "$out/errors"
fi

counts=$(sh "$wine/gen-exports.sh" count "$wine/functions.h" "$wine/gdi32-d3dkmt.txt") || counts=
stub=$(echo "$counts" | sed -n 's/^stub //p')
names=$(echo "$counts" | sed -n 's/^names //p')

# says FILE TEXT N: whether FILE states TEXT
says() {
    if grep -qF "$2" "$srcdir/$1"; then
        echo "ok $3 - $1 says \"$2\""
    else
        echo "not ok $3 - $1 says \"$2\" (gen-exports.sh count: $(echo $counts))"
    fi
}
says docs/wine.md "lists $names names with their sources; $stub are stubs" 2
says README.md "the other $stub gdi32 D3DKMT names" 3
