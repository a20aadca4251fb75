#!/bin/sh
# stdcall-implib.sh DEF IMPLIB OBJECT...: rewrites IMPLIB (i386) so that it
# names each export of DEF the way an i386 caller references it, Name@N
# (WINAPI is stdcall there), while importing the undecorated name the DLL
# exports, as Windows' own i386 DLLs export theirs (dlltool -k).  N comes
# from the stdcall symbol _Name@N that the OBJECTs define; an alias
# "A = B" takes B's.  Needs MINGW_NM and MINGW_DLLTOOL.
set -e
def=$1 implib=$2
shift 2
"$MINGW_NM" "$@" >"$implib.nm"
${AWK:-awk} '
FNR == 1 { file++ }
file == 1 && $2 == "T" && $3 ~ /^_[A-Za-z0-9_]+@[0-9]+$/ {
    sym = substr($3, 2); at = index(sym, "@")
    size[substr(sym, 1, at - 1)] = substr(sym, at); next
}
file == 2 && ($1 == "LIBRARY" || $1 == "EXPORTS" || $1 ~ /^;/) { print; next }
file == 2 && NF {
    name = $1; target = ($2 == "=") ? $3 : $1
    print "    " name ((target in size) ? size[target] : "")
}' "$implib.nm" "$def" >"$implib.def"
"$MINGW_DLLTOOL" -k -d "$implib.def" -l "$implib"
rm -f "$implib.nm" "$implib.def"
