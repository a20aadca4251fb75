#!/bin/sh
# The architecture's rules, read from the sources and the built objects
# (TAP):
#   - a miniport includes the DDI headers (include/kmtshim/), base/ and
#     its own folder's headers, nothing of the core;
#   - only the core's gateway (dxgkrnl/ddi*) names a member of a miniport's
#     DDI table;
#   - the Wine halves reach the library through its exports only;
#   - no file-level call cycle inside a miniport or the allocation
#     lifecycle: a file's calls go one way;
#   - the session broker's client (broker/) is a leaf the core calls, and
#     the daemon (broker/daemon/) a program of its own, without the core.
srcdir=${KMTSHIM_TEST_SRCDIR:?}
builddir=${KMTSHIM_TEST_BUILDDIR:?}
src=$srcdir/dlls/kmtshim
n=0 failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; printf '%s\n' "$2" | sed 's/^/# /'; }
check() { if [ -z "$2" ]; then ok "$1"; else not_ok "$1" "$2"; fi; }

echo "1..9"

# 1: quoted includes of the miniports
bad=$(cd "$src" && grep -rn '^#[[:space:]]*include[[:space:]]*"' miniports |
      grep -vE '"(kmtshim/[^"]+|base/[^"]+|miniports/builtin\.h|config\.h|[^/"]+)"')
check "miniports include only include/kmtshim/, base/ and their own headers" "$bad"

# 2: DDI table members outside the gateway
bad=$(cd "$src" && grep -rnE '(->|\.)(DxgkDdi|KmtDdi)[A-Za-z]+' --include='*.c' --include='*.h' . |
      grep -vE '^\./(dxgkrnl/ddi[^/]*|miniports/[^:]*):')
check "only dxgkrnl/ddi* calls into a miniport's DDI table" "$bad"

# 3: the Wine halves use the exports, not the core's internals
bad=$(cd "$src" && grep -rnE '#[[:space:]]*include[[:space:]]*"(dxgkrnl|hmgr|thunks)/|\b(dxgk|hmgr)_[a-z_]+\(' wine)
check "the Wine halves include nothing of the core and call none of it" "$bad"

# File-level call graph of a group of objects: an edge A -> B where A calls
# a function B defines.  tsort finds a cycle.
objects_of() {
    for f in "$@"; do
        find "$builddir/dlls/kmtshim" -path '*/.libs' -prune -o -name "*$f.o" -print
    done
}

cycle_check() {
    name=$1; shift
    objs=$(objects_of "$@")
    if [ -z "$objs" ]; then
        not_ok "$name: no call cycle between files" "no objects found for: $*"
        return
    fi
    # one nm over the group: who defines each symbol, then who uses it
    edges=$(nm -A -g $objs | awk '
        { file = $1; sub(/\.o:.*/, ".o", file); sub(/.*\//, "", file); sub(/\.o$/, "", file)
          sub(/^lib[a-z_]*la-/, "", file) }
        $(NF - 1) == "U" { use[++n] = file " " $NF; next }
        $(NF - 1) ~ /^[TDBR]$/ { def[$NF] = file }
        END { for (i = 1; i <= n; i++) { split(use[i], u, " ")
                  if ((u[2] in def) && def[u[2]] != u[1]) print u[1], def[u[2]] } }' | sort -u)
    loop=$(printf '%s\n' "$edges" | grep . | tsort 2>&1 >/dev/null)
    check "$name: no call cycle between files" "$loop"
}

drm=$(cd "$src/miniports/drm" 2>/dev/null && ls *.c | sed 's/\.c$//')
soft=$(cd "$src/miniports/soft" && ls *.c | sed 's/\.c$//')
if [ -n "$drm" ] && [ -n "$(objects_of drm_driver)" ]; then
    cycle_check "miniports/drm" $drm
else
    ok "miniports/drm: no call cycle between files # SKIP built without libdrm"
fi
cycle_check "miniports/soft" $soft
cycle_check "the allocation lifecycle (dxgkrnl/allocation_*)" allocation_create allocation_destroy allocation_reclaim

# 7: the gateway's files are what the core calls a miniport through: each
# named in ddi.h's list
bad=$(cd "$src/dxgkrnl" && for f in ddi_*.c; do grep -q "$f" ddi.h || echo "$f not described in ddi.h"; done)
check "every gateway file is named in ddi.h" "$bad"
# 8: the broker's client includes only the public headers, base/
# and broker/, and calls nothing of the core
bad=$(cd "$src/broker" && { grep -n '^#[[:space:]]*include[[:space:]]*"' *.c *.h |
          grep -vE '"(kmtshim/[^"]+|base/[^"]+|broker/[^"]+)"'
      grep -nE '\b(dxgk|hmgr)_[a-z_]+\(' *.c; })
check "broker/ is a leaf: base/ and its own headers, no call into the core" "$bad"

# 9: the daemon includes the wire format and its own header, and its
# binary holds nothing of the library
daemon=$builddir/dlls/kmtshim/broker/daemon/kmtshim-broker
bad=$(cd "$src/broker/daemon" && grep -n '^#[[:space:]]*include[[:space:]]*"' *.c *.h |
      grep -vE '"(broker/(broker|protocol|dir|wire)\.h|daemon\.h)"')
if [ -f "$daemon" ]; then
    bad="$bad$(nm "$daemon" | grep -E ' [TtDdBbRr] (dxgk_|hmgr_|D3DKMT|Kmt[A-Z]|kmt_fd_|kmt_debug)' | head -5)"
else
    bad="$bad no $daemon"
fi
check "kmtshim-broker links nothing of the library" "$bad"
exit $failed
