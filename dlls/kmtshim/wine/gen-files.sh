#!/bin/sh
# Keeps kmtshim.dll's checked-in generated files in step with functions.h
# and gdi32-d3dkmt.txt.  They are checked in, as Wine keeps its generated
# files, so that grep finds every export, thunk and entry by name.
#
#   gen-files.sh check SRCDIR OUTDIR  makes them afresh under OUTDIR; fails,
#                                     naming each, where SRCDIR's copy differs
#   gen-files.sh refresh SRCDIR       rewrites SRCDIR's copies that differ
#
# SRCDIR is dlls/kmtshim/wine of the source tree.
set -e
action=$1 src=$2 out=$3
case $action in
check) test -n "$out" ;;
refresh) out=$src ;;
*) false ;;
esac || { echo "usage: $0 check SRCDIR OUTDIR | refresh SRCDIR" >&2; exit 2; }

# checked-in file : gen-exports.sh mode
files="kmtshim.def:def stubs.h:stubs pe/thunks_gen.c:pe-thunks unix/entries_gen.c:unix-entries"
stale=
for f in $files; do
    path=${f%%:*}
    new=$out/$path
    mkdir -p "$(dirname "$new")"
    sh "$src/gen-exports.sh" "${f#*:}" "$src/functions.h" "$src/gdi32-d3dkmt.txt" >"$new.tmp"
    if cmp -s "$new.tmp" "$src/$path"; then
        if [ "$action" = check ]; then mv "$new.tmp" "$new"; else rm -f "$new.tmp"; fi
        continue
    fi
    mv "$new.tmp" "$new"
    if [ "$action" = refresh ]; then
        echo "gen-files.sh: rewrote $src/$path"
    else
        echo "gen-files.sh: $src/$path is not what functions.h and gdi32-d3dkmt.txt make (see $new)" >&2
        stale=1
    fi
done
if [ -n "$stale" ]; then
    echo "gen-files.sh: run 'make refresh-wine-exports' and commit the files it rewrites" >&2
    exit 1
fi
