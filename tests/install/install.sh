#!/bin/sh
# The installed kmtshim, used the way a user uses it; speaks TAP.
#
# `make install DESTDIR=run/stage` of this build tree, with the configured
# prefix.  DESTDIR, not `make install prefix=...`: kmtshim.pc, kmtshim-prefix
# and libtool's .la carry the configured paths, fixed at configure and build
# time, and a prefix given only to `make install` would install files that
# point at a place they are not (GNU's rules allow it to rebuild, too).  The
# staged tree is exactly what a package would hold, so it is used through
# the knobs made for staged trees: PKG_CONFIG_SYSROOT_DIR for the compile,
# LD_LIBRARY_PATH to run, --dllpath and WINEDLLPATH for Wine.  Then the
# native client (tests/install/install_client.c) is built against the
# installed headers and libraries only, the installed kmtdemo.exe and an
# unmodified gdi32 program run under wine with WINEDLLPATH at the installed
# $(libdir)/kmtshim only, in a new prefix made by the installed
# kmtshim-prefix, every tool's --help is asked, and `make uninstall` must
# leave no file behind.
#
# Environment: KMTSHIM_TEST_BUILDDIR, KMTSHIM_TEST_SRCDIR (set by make check);
# KMTSHIM_KEEP_PREFIX=1 keeps tests/install/run for a look after.

builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
srcdir=${KMTSHIM_TEST_SRCDIR:-$(dirname "$0")/../..}
# (make check gives .../_build/sub/../.. under distcheck: compare real paths)
srcdir=$(cd "$srcdir" && pwd -P) builddir=$(cd "$builddir" && pwd -P)
. "$srcdir/tests/wine/wine-harness.sh"
for env in "$builddir/tests/install/install-tests.env" "$builddir/tests/wine/wine-tests.env"; do
    if [ ! -r "$env" ]; then
        echo "1..0 # SKIP $env missing (run through make check)"
        exit 0
    fi
    . "$env"
done

run=$builddir/tests/install/run
stage=$run/stage
logs=$run/logs
timeout_s=${KMTSHIM_WINE_TIMEOUT:-60}
wine_skip=
[ "$KMT_HAVE_WINE" = yes ] || wine_skip="configure found no Wine / mingw-w64: no Wine half to install"
[ -n "$wine_skip" ] || [ "$KMT_SANITIZERS" != yes ] ||
    wine_skip="sanitizer build: wine cannot load an ASan kmtshim.so"
tap_skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }

cleanup() {
    if [ -n "$WINEPREFIX" ] && [ -d "$WINEPREFIX" ]; then
        WINEPREFIX=$WINEPREFIX timeout 30 "$WINESERVER" -k >/dev/null 2>&1
        WINEPREFIX=$WINEPREFIX timeout 30 "$WINESERVER" -w >/dev/null 2>&1
    fi
    [ -n "$KMTSHIM_KEEP_PREFIX" ] || rm -rf "$run"
}
WINEPREFIX=
# a run that was killed may have left its persistent server behind
[ -d "$run/prefix" ] && WINEPREFIX=$run/prefix timeout 30 "$WINESERVER" -k >/dev/null 2>&1
rm -rf "$run"
mkdir -p "$logs" "$run/home" || { echo "1..0 # SKIP cannot create $run"; exit 0; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# The nested make must not join make check's job server or inherit its
# command-line variables (TESTS=...).
sub_make() { timeout 120 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $MAKE -C "$builddir" "$@"; }

# ---- 1. make install: the promised files, modes, no build paths ------------------------
bin=$stage$bindir lib=$stage$libdir inc=$stage$includedir pkglib=$stage$pkglibdir
if sub_make install DESTDIR="$stage" >"$logs/install.log" 2>&1; then
    tap_ok "make install DESTDIR=... (prefix $prefix)"
else
    tap_not_ok "make install DESTDIR=$stage failed"
    tail -n 20 "$logs/install.log" | sed 's/^/# /'
fi

# What README.md ("Building by hand") and docs/wine.md ("Build and install")
# promise; nothing else may be installed.
{
    echo "$bindir/kmtinfo"
    echo "$pkglibexecdir/kmtshim-broker"
    for h in "$srcdir"/include/kmtshim/*.h; do echo "$includedir/kmtshim/${h##*/}"; done
    for f in libkmtshim.so libkmtshim.so.0 libkmtshim.so.0.0.0 libkmtshim.a libkmtshim.la pkgconfig/kmtshim.pc; do
        echo "$libdir/$f"
    done
    if [ "$KMT_HAVE_WINE" = yes ]; then
        echo "$bindir/kmtshim-prefix"
        for f in x86_64-windows/kmtshim.dll x86_64-unix/kmtshim.so x86_64-unix/kmtshim-core.so \
                 proxy/gdi32.dll samples/kmtdemo.exe \
                 samples/kmticd.dll samples/kmticdload.exe bench/bench_wine.exe \
                 umd/reference_umd.dll umd/broken_umd.dll; do
            echo "$pkglibdir/$f"
        done
    fi
    if [ "$KMT_HAVE_WINE32" = yes ]; then
        for f in i386-windows/kmtshim.dll i386-unix/kmtshim.so i386-unix/kmtshim-core.so proxy/i386/gdi32.dll samples/i386/kmtdemo.exe \
                 bench/i386/bench_wine.exe; do
            echo "$pkglibdir/$f"
        done
    fi
} | sort >"$run/expected"
(cd "$stage" 2>/dev/null && find . ! -type d | sed 's|^\.||' | sort) >"$run/installed"
if cmp -s "$run/expected" "$run/installed"; then
    tap_ok "installed: the $(wc -l <"$run/expected") promised files, nothing else"
else
    tap_not_ok "installed files differ from the promise (- missing, + unexpected)"
    diff "$run/expected" "$run/installed" | grep '^[<>]' | sed 's/^</# -/; s/^>/# +/'
fi

modes_bad=
broker=$stage$pkglibexecdir/kmtshim-broker
for f in "$bin/kmtinfo" "$bin/kmtshim-prefix" "$lib/libkmtshim.so.0.0.0" "$broker"; do
    [ "$KMT_HAVE_WINE" = yes ] || [ "$f" != "$bin/kmtshim-prefix" ] || continue
    [ -f "$f" ] && [ -x "$f" ] || modes_bad="$modes_bad $f(not executable)"
done
for f in "$lib/pkgconfig/kmtshim.pc" "$lib/libkmtshim.a" "$inc"/kmtshim/*.h "$pkglib"/*/*.dll "$pkglib"/*/*.exe; do
    [ -e "$f" ] || continue
    [ ! -x "$f" ] && [ -r "$f" ] || modes_bad="$modes_bad $f(executable or unreadable)"
done
if [ -z "$modes_bad" ]; then
    tap_ok "modes: programs and scripts executable, data and headers not"
else
    tap_not_ok "modes:$modes_bad"
fi

# Build and stage paths must not reach what is installed: not in the
# scripts, the .pc, the .la, nor an RPATH/RUNPATH.  The configured prefix
# is taken out first: it may lie inside the source tree (distcheck's does).
leaks=
no_prefix() { sed "s|$prefix||g" "$@"; }
for f in "$bin/kmtshim-prefix" "$lib/pkgconfig/kmtshim.pc" "$lib/libkmtshim.la"; do
    [ -f "$f" ] || continue
    for p in "$builddir" "$srcdir" "$stage"; do
        no_prefix "$f" | grep -q -F "$p" && leaks="$leaks ${f#$stage}:$p"
    done
done
for f in "$bin/kmtinfo" "$lib/libkmtshim.so.0.0.0" "$pkglib"/x86_64-unix/*.so "$broker"; do
    [ -f "$f" ] || continue
    rpath=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]/\1/p' | no_prefix)
    case ":$rpath:" in *"$builddir"*|*"$srcdir"*|*"$stage"*) leaks="$leaks ${f#$stage}:rpath=$rpath" ;; esac
done
if [ -z "$leaks" ]; then
    tap_ok "no build or stage path in installed scripts, kmtshim.pc, libkmtshim.la or RPATHs"
else
    tap_not_ok "build paths leaked:$leaks"
fi

# libtool leaves the .la describing the installed library.
la=$lib/libkmtshim.la
if [ -f "$la" ] && grep -qx "libdir='$libdir'" "$la" && grep -qx "installed=yes" "$la" &&
   grep -qx "dlname='libkmtshim.so.0'" "$la" && grep -qx "old_library='libkmtshim.a'" "$la" &&
   [ -z "$(find "$stage" -name '*.la' ! -path "$lib/libkmtshim.la")" ]; then
    tap_ok "libkmtshim.la: installed=yes, libdir='$libdir'; no other .la (kmtshim.so has none)"
else
    tap_not_ok "libkmtshim.la is not libtool's installed form, or another .la was installed"
    [ -f "$la" ] && grep -E '^(libdir|installed|dlname|old_library)=' "$la" | sed 's/^/# /'
fi

# ---- 2. a native program against the installed headers and library -------------------------
# kmtshim.pc first, the system's (libdrm, for --static) after it
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
pc_flags=$($PKG_CONFIG --cflags --libs kmtshim 2>"$logs/pkg-config.log")
case " $pc_flags " in
*" -I$inc "*"-L$lib -lkmtshim "*) tap_ok "pkg-config kmtshim: $pc_flags" ;;
*) tap_not_ok "pkg-config kmtshim gave '$pc_flags'"; diag "$logs/pkg-config.log" ;;
esac

# Each installed header compiles alone: none needs a header that was not installed.
: >"$logs/headers.log"
bad_headers=
for h in "$inc"/kmtshim/*.h; do
    printf '#include <kmtshim/%s>\n' "${h##*/}" |
        $CC $CFLAGS $($PKG_CONFIG --cflags kmtshim 2>/dev/null) -std=gnu11 -fsyntax-only -x c - >>"$logs/headers.log" 2>&1 ||
        bad_headers="$bad_headers ${h##*/}"
done
if [ -z "$bad_headers" ] && [ -e "$inc/kmtshim/kmtshim.h" ]; then
    tap_ok "every installed header compiles on its own"
else
    tap_not_ok "installed headers that do not compile alone:$bad_headers"
    head -n 20 "$logs/headers.log" | sed 's/^/# /'
fi

client=$srcdir/tests/install/install_client.c
# run_client NAME LDFLAGS...: builds the client, runs it on the software adapter
run_client() {
    name=$1; shift
    log=$logs/$name.log
    rc=1
    $CC $CFLAGS -std=gnu11 -o "$run/$name" "$client" $($PKG_CONFIG --cflags kmtshim 2>/dev/null) $LDFLAGS "$@" >"$log" 2>&1 &&
        { LD_LIBRARY_PATH=$lib KMTSHIM_MINIPORT=soft timeout 30 "$run/$name" >>"$log" 2>&1; rc=$?; }
}
run_client client_shared $($PKG_CONFIG --libs kmtshim 2>/dev/null)
# the staged copy, not one the build tree or the system has
check "client against the installed libkmtshim.so: device and allocation on the software adapter" \
    '[ "$rc" -eq 0 ] && grep -qx "install_client: OK" "$log" && grep -qx "library: $lib/libkmtshim.so.0" "$log" &&
     grep -qx "version: $PACKAGE_VERSION" "$log"'
run_client client_static $($PKG_CONFIG --static --libs kmtshim 2>/dev/null | sed 's/-lkmtshim/-Wl,-Bstatic -lkmtshim -Wl,-Bdynamic/')
check "client linked statically against the installed libkmtshim.a with pkg-config --static" \
    '[ "$rc" -eq 0 ] && grep -qx "install_client: OK" "$log" && grep -qx "library: $run/client_static" "$log"'

# the installed kmtinfo finds the software adapter
log=$logs/kmtinfo.log
LD_LIBRARY_PATH=$lib KMTSHIM_MINIPORT=soft timeout 30 "$bin/kmtinfo" >"$log" 2>&1
rc=$?
check "installed kmtinfo lists the software adapter" '[ "$rc" -eq 0 ] && grep -q "^    miniport \.* soft " "$log"'

# ---- 3. Windows programs under wine, from the installed tree only ---------------------------
if [ -n "$wine_skip" ]; then
    for t in "kmtshim-prefix made a prefix" "installed kmtdemo.exe" "without WINEDLLPATH kmtdemo.exe fails" \
             "gdi32 proxy for an unmodified program"; do
        tap_skip "$t: $wine_skip"
    done
else
    export WINEPREFIX="$run/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" KMTSHIM_MINIPORT=soft
    unset WINEDLLPATH
    mkdir -p "$WINEPREFIX"
    # a persistent server: ~40 ms a program instead of ~0.5 s (stopped in cleanup)
    timeout 30 "$WINESERVER" -p >"$logs/wineserver.log" 2>&1
    log=$logs/kmtshim-prefix.log
    timeout 120 "$bin/kmtshim-prefix" --prefix "$WINEPREFIX" --dllpath "$pkglib" >"$log" 2>&1
    rc=$?
    check "installed kmtshim-prefix made a new prefix with the trigger copy" \
        '[ "$rc" -eq 0 ] && grep -q "created the prefix" "$log" &&
         cmp -s "$WINEPREFIX/drive_c/windows/system32/kmtshim.dll" "$pkglib/x86_64-windows/kmtshim.dll" &&
         grep -qF "WINEDLLPATH='"'"'$pkglib'"'"'" "$log"'
    timeout "$timeout_s" "$WINE" cmd /c exit >"$logs/cmd.log" 2>&1

    WINEDLLPATH=$pkglib run_exe kmtdemo "$pkglib/samples/kmtdemo.exe"
    check "installed kmtdemo.exe with WINEDLLPATH=\$(libdir)/kmtshim only: fence signaled, result read back" \
        '[ "$rc" -eq 0 ] && grep -q "^kmtdemo: OK" "$log" && grep -q "^result:   1024 of 1024 words read back" "$log"'
    # the installed Linux half is what made it work: nothing else is found
    run_exe kmtdemo-nodllpath "$pkglib/samples/kmtdemo.exe"
    check "without WINEDLLPATH the same program does not succeed (no other kmtshim.so is found)" \
        '[ "$rc" -ne 0 ] && ! grep -q "^kmtdemo: OK" "$log"'

    # an unmodified program: D3DKMT functions imported from gdi32.dll
    log=$logs/kmtshim-prefix-proxy.log
    timeout 60 "$bin/kmtshim-prefix" --prefix "$WINEPREFIX" --dllpath "$pkglib" \
        --proxy-exe test_proxy_static.exe >"$log" 2>&1
    rc=$?
    mkdir -p "$run/app"
    cp "$builddir/tests/wine/test_proxy_static.exe" "$run/app/" 2>/dev/null
    if [ "$rc" -eq 0 ] && cmp -s "$WINEPREFIX/drive_c/windows/system32/gdi32.dll" "$pkglib/proxy/gdi32.dll"; then
        WINEDLLPATH=$pkglib run_exe proxy "$run/app/test_proxy_static.exe" imports_resolve_to_proxy \
            direct_kmtshim_handles enum_adapters2 devices create_allocation
        s=$(summary_of "$log" test_proxy_static)
        check "kmtshim-prefix --proxy-exe: test_proxy_static.exe (gdi32 imports) through the installed proxy ($s)" \
            '[ "$(classify "$log" test_proxy_static "$rc")" = pass ] && [ "${s%% *}" -gt 20 ]'
    else
        tap_not_ok "kmtshim-prefix --proxy-exe did not install the proxy (exit $rc)"
        diag "$log"
    fi
fi

# ---- 4. --help of every tool and script -------------------------------------------------------
# exit 0, a "Usage:" line on stdout, and no work done (an empty HOME stays empty)
help_bad= helped=
for tool in "$bin/kmtinfo" "$bin/kmtshim-prefix" "$broker" "$srcdir/scripts/check" "$srcdir/scripts/demo" \
            "$srcdir/scripts/demo-wine" "$srcdir/scripts/qemu-drm-lane"; do
    [ "$KMT_HAVE_WINE" = yes ] || [ "$tool" != "$bin/kmtshim-prefix" ] || continue
    name=${tool##*/}
    HOME=$run/home LD_LIBRARY_PATH=$lib WINEPREFIX=$run/home/.wine timeout 10 "$tool" --help \
        >"$logs/help-$name.out" 2>"$logs/help-$name.err"
    rc=$?
    helped="$helped $name"
    if [ "$rc" -ne 0 ] || ! grep -q "^Usage: .*$name" "$logs/help-$name.out"; then
        help_bad="$help_bad $name(exit $rc)"
    fi
done
if [ -z "$help_bad" ] && [ -z "$(ls -A "$run/home")" ]; then
    tap_ok "--help exits 0 with a Usage line and does nothing else:$helped"
else
    tap_not_ok "--help without a Usage line, failing or doing work:$help_bad $(ls -A "$run/home")"
fi

if [ "$KMT_HAVE_WINE" = yes ]; then
    log=$logs/help-kmtshim-prefix.out
    check "kmtshim-prefix defaults to the configured \$(libdir)/kmtshim ($pkglibdir)" \
        'grep -qF "(default: $pkglibdir)" "$log"'
fi

# Without $KMTSHIM_BROKER the library starts the broker at the path it was
# built with: the one make install put it at.
if grep -qaF "$pkglibexecdir/kmtshim-broker" "$lib/libkmtshim.so.0.0.0" && [ -x "$broker" ]; then
    tap_ok "libkmtshim.so starts the installed broker ($pkglibexecdir/kmtshim-broker) by default"
else
    tap_not_ok "libkmtshim.so does not name the installed broker $pkglibexecdir/kmtshim-broker"
fi

# ---- 5. make uninstall leaves no file -------------------------------------------------------
if sub_make uninstall DESTDIR="$stage" >"$logs/uninstall.log" 2>&1; then
    left=$(cd "$stage" && find . ! -type d | sed 's|^\.||')
    if [ -z "$left" ]; then
        tap_ok "make uninstall DESTDIR=... removed every file"
    else
        tap_not_ok "make uninstall left files behind"
        printf '%s\n' "$left" | sed 's/^/# /'
    fi
else
    tap_not_ok "make uninstall DESTDIR=$stage failed"
    tail -n 20 "$logs/uninstall.log" | sed 's/^/# /'
fi

echo "1..$n"
[ "$failed" -eq 0 ]
