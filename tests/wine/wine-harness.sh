# Sourced by the Wine-side test runners (tests/wine/run-wine-tests.sh,
# run-wine-tests32.sh, tests/umd/run-umd-wine.sh): the checks that decide
# whether Wine tests can run at all, one private prefix with a persistent
# wineserver (and kmtshim set up in it: harness_prefix), running a
# program with its output in a file, reading Wine's test summary line, and
# TAP output.
#
# Why a file and not a pipe: with a persistent server, output captured
# through a pipe never ends, because Wine's background processes inherit
# the pipe.  Why the summary line: wine's exit status is modulo 256, and a
# crash may end with a small code.

# harness_load ENV_FILE SAN_REASON: sources the build's env file (WINE,
# WINESERVER, KMT_HAVE_WINE, KMT_SANITIZERS, ...) or exits with a TAP SKIP.
harness_load() {
    if [ ! -r "$1" ]; then
        echo "1..0 # SKIP $1 missing (run through make check)"
        exit 0
    fi
    . "$1"
    if [ "$KMT_HAVE_WINE" != yes ]; then
        echo "1..0 # SKIP configure found no Wine / mingw-w64: the Windows side is not built"
        exit 0
    fi
    if [ "$KMT_SANITIZERS" = yes ]; then
        echo "1..0 # SKIP sanitizer build: wine cannot load an ASan kmtshim.so ($2)"
        exit 0
    fi
    if [ ! -x "$WINE" ] || [ ! -x "$WINESERVER" ]; then
        echo "1..0 # SKIP wine ($WINE) or wineserver ($WINESERVER) not executable"
        exit 0
    fi
}

# harness_env RUN_DIR: the run's directories and a Wine environment that
# sees kmtshim's DLLs and only the software adapter (deterministic).
harness_env() {
    run=$1
    logs=$run/logs
    tree=$builddir/dlls/kmtshim/wine/tree
    timeout_s=${KMTSHIM_WINE_TIMEOUT:-120}
    export WINEPREFIX="$run/prefix"
    export WINEDLLPATH="$tree"
    export WINEDEBUG=-all
    export WINEDLLOVERRIDES="mscoree,mshtml="
    export KMTSHIM_MINIPORT=soft
    # one VidPn source, as a single-monitor system (VidPn ownership rows)
    export KMTSHIM_SOFT_SOURCES=1
    # sharing: a session broker of this run's own, never the user's (made
    # by harness_boot; the broker exits with its last client), started from
    # the build tree
    export KMTSHIM_BROKER_DIR="$run/broker"
    export KMTSHIM_BROKER="$builddir/dlls/kmtshim/broker/daemon/kmtshim-broker"
    unset KMTSHIM_DEBUG
}

# harness_xvfb GUARD SERVER_ARGS SCRIPT [ARGS...]: runs SCRIPT again under
# xvfb-run with SERVER_ARGS (the whole run, wineserver and explorer
# included, on one X server) unless the variable named GUARD is set; a
# machine without xvfb-run fails the run.
harness_xvfb() {
    guard=$1 server_args=$2
    shift 2
    eval "[ -n \"\${$guard}\" ]" && return 0
    if ! command -v xvfb-run >/dev/null 2>&1; then
        echo "not ok 1 - xvfb-run is missing (Debian: xvfb xauth)"
        echo "1..1"
        exit 1
    fi
    export "$guard=1"
    exec xvfb-run -a -s "$server_args" sh "$@"
}

n=0
failed=0
tap_ok() { n=$((n + 1)); echo "ok $n - $*"; }
tap_not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { sed 's/^/# /' "$@"; }
# check DESCRIPTION CONDITION: one TAP line; the last log as diagnostics on failure
check() { if eval "$2"; then tap_ok "$1"; else tap_not_ok "$1"; diag "$log"; fi; }

# a Linux path as Wine's Z: drive sees it
winpath() { printf 'Z:%s' "$1" | tr / '\\'; }

stop_server() {
    if [ -z "$KMTSHIM_KEEP_PREFIX" ]; then
        "$WINESERVER" -k >/dev/null 2>&1
        "$WINESERVER" -w >/dev/null 2>&1
        rm -rf "$WINEPREFIX"
    fi
}

# harness_boot: a new prefix served by a persistent wineserver (~40 ms a
# program instead of ~0.5 s), stopped at exit unless KMTSHIM_KEEP_PREFIX is
# set.  Returns wineboot's status; Wine's background processes are started
# once, here.
harness_boot() {
    # a run that was killed may have left its persistent server behind
    [ -d "$WINEPREFIX" ] && "$WINESERVER" -k >/dev/null 2>&1
    rm -rf "$run"
    mkdir -p "$logs" "$WINEPREFIX" || { echo "1..0 # SKIP cannot create $run"; exit 0; }
    mkdir -m 700 "$KMTSHIM_BROKER_DIR" || { echo "1..0 # SKIP cannot create $KMTSHIM_BROKER_DIR"; exit 0; }
    trap 'stop_server' EXIT
    trap 'exit 1' INT TERM HUP
    "$WINESERVER" -p >"$logs/wineserver.log" 2>&1
    timeout "$timeout_s" "$WINE" wineboot -i >"$logs/wineboot.log" 2>&1 || return 1
    timeout "$timeout_s" "$WINE" cmd /c exit >"$logs/cmd.log" 2>&1
    return 0
}

# harness_boot_tap WHERE: harness_boot as a TAP line; the run ends when it fails.
harness_boot_tap() {
    if harness_boot; then
        tap_ok "a new prefix $1 (wineboot -i, persistent wineserver)"
    else
        tap_not_ok "wineboot -i failed, see $logs/wineboot.log"
        echo "1..$n"
        exit 1
    fi
}

# harness_prefix WHAT CHECK [KMTSHIM-PREFIX ARGS...]: the prefix both
# runners start from.  harness_boot (a failed boot ends the run), then
# scripts/kmtshim-prefix with the build's tree, the proxy and the proxy test
# programs' overrides plus ARGS, passing if CHECK (evaluated) holds after it;
# one TAP line each, WHAT naming the kmtshim-prefix step.  Last,
# KMTSHIM_CONFIG: QueryAdapterInfo(KMTQAITYPE_QUERYREGISTRY)'s values for
# the conformance row query_registry, and nothing else, so the other rows
# see the miniport's own answers (and no user configuration).
harness_prefix() {
    what=$1 prefix_check=$2
    shift 2
    harness_boot_tap "under the build dir"
    if "$builddir/scripts/kmtshim-prefix" --prefix "$WINEPREFIX" --dllpath "$tree" \
            --proxy-dir "$builddir/dlls/gdi32/proxy" --wine-dlldir "$WINE_DLLDIR" \
            --proxy-exe test_proxy.exe --proxy-exe test_proxy_static.exe \
            --proxy-exe test_proxy_user32.exe "$@" >"$logs/kmtshim-prefix.log" 2>&1 &&
       eval "$prefix_check"; then
        tap_ok "kmtshim-prefix $what"
    else
        tap_not_ok "kmtshim-prefix: $what failed"
        diag "$logs/kmtshim-prefix.log"
    fi
    export KMTSHIM_CONFIG="$run/kmtshim.conf"
    cat >"$KMTSHIM_CONFIG" <<'EOF'
[adapter miniport=soft]
registry.KmtshimConformanceLayers:multi_sz = Z:\kmtshim\one.json | Z:\kmtshim\two.json
registry.KmtshimConformanceDriver = Z:\kmtshim\icd.json
registry.KmtshimConformanceDword:dword = 0x1234
EOF
}

# run_exe NAME EXE [ARGS...]: runs EXE from its own directory, output in
# $logs/NAME.log; sets log and rc.
run_exe() {
    name=$1 exe=$2
    shift 2
    log=$logs/$name.log
    (cd "$(dirname "$exe")" && exec timeout "$timeout_s" "$WINE" "$(basename "$exe")" "$@") >"$log" 2>&1
    rc=$?
}

# summary_of LOG PROG: "executed todo failures skipped" from the program's
# summary line, nothing if it is missing.
summary_of() {
    tr -d '\r' <"$1" | sed -n "s/^$2: \([0-9]*\) tests executed (\([0-9]*\) marked as todo, \([0-9]*\) failures), \([0-9]*\) skipped\.\$/\1 \2 \3 \4/p" | tail -n 1
}

# classify LOG PROG RC: "pass", "fail", or "crash" (no summary line)
classify() {
    s=$(summary_of "$1" "$2")
    if [ -z "$s" ]; then
        echo crash
    elif [ "$3" -eq 0 ] && [ "$(echo "$s" | cut -d' ' -f3)" = 0 ]; then
        echo pass
    else
        echo fail
    fi
}

# run_suite NAME EXE [SUBTEST...]: one TAP line per subtest (all of them
# without a SUBTEST), one for the whole program.
run_suite() {
    name=$1 exe=$2
    shift 2
    if [ ! -f "$exe" ]; then
        tap_not_ok "$name: $exe was not built"
        return
    fi
    run_exe "$name" "$exe" "$@"
    while read -r tag id executed fails todos skips; do
        [ "$tag" = "kmtw-subtest:" ] || continue
        skips=$(printf '%s' "$skips" | tr -d '\r')
        detail="$executed checks, $todos todo, $skips skipped"
        if [ "$fails" = 0 ]; then
            tap_ok "$id ($detail)"
        else
            tap_not_ok "$id: $fails failures ($detail)"
            # the failure lines of this subtest: between the previous subtest line and this one
            awk -v id="$id" '/^kmtw-subtest: / { if ($2 == id) { printf "%s", buf; exit } buf = ""; next }
                             /Test failed|succeeded inside todo|exception/ { buf = buf "# " $0 "\n" }' "$log"
        fi
    done <"$log"
    case $(classify "$log" "$name" "$rc") in
    pass) tap_ok "$name: exit status 0, summary: $(summary_of "$log" "$name" | awk '{ printf "%s checks, %s todo, %s failures, %s skipped", $1, $2, $3, $4 }')" ;;
    fail) tap_not_ok "$name: exit status $rc, summary: $(summary_of "$log" "$name")"; grep -E "Test failed|inside todo" "$log" | head -n 20 | sed 's/^/# /' ;;
    crash) tap_not_ok "$name: no summary line (exit status $rc: crash or hang), see $log"; tail -n 15 "$log" | sed 's/^/# /' ;;
    esac
}
