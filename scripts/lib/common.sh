# Shared by scripts/demo and scripts/check: Debian packages, bootstrap,
# configure and build.  Sourced, not run.

KMT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KMT_BUILD=${KMT_BUILD:-$KMT_TOP/_build}
KMT_JOBS=${KMT_JOBS:-$(nproc 2>/dev/null || echo 2)}

# What a fresh Debian 12 needs: the toolchain, Check, libdrm, mingw-w64 and
# Wine for the Windows side, QEMU for the real-kernel DRM lane (with Xvfb and
# Mesa for its virgl pass, where the "GPU" executes command buffers), Xvfb
# and Mesa's GLX for wined3d (tests/wine/wined3d-proxy.sh), xrandr for two
# monitors on one Xvfb screen (tests/wine/window-dc-xvfb.sh).
KMT_PACKAGES="build-essential autoconf automake libtool pkg-config check libdrm-dev
  mingw-w64 wine wine64 wine64-tools libwine-dev qemu-system-x86 qemu-system-gui xvfb xauth
  x11-xserver-utils libgl1-mesa-dri libglx-mesa0 zstd xz-utils ca-certificates"

kmt_log() { printf '%s: %s\n' "${KMT_SCRIPT:-kmtshim}" "$*" >&2; }
kmt_die() { kmt_log "error: $*"; exit 1; }

# The 32-bit lane's (gcc -m32): i386 libraries from Debian's multiarch.
# Wine's i386 half (wine32) is not among them: it is not installable beside
# wine64 from a mirror whose i386 security index lags.
KMT_PACKAGES_I386="gcc-multilib libdrm-dev:i386 check:i386"

# kmt_install_packages [PACKAGES]: the missing ones of PACKAGES (default
# KMT_PACKAGES), enabling the i386 architecture for ':i386' ones.
kmt_install_packages() {
    local missing=() pkg sudo=
    for pkg in ${1:-$KMT_PACKAGES}; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null || kmt_die "missing packages (${missing[*]}) and no apt-get: install them by hand"
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || kmt_die "missing packages (${missing[*]}): run as root or install sudo"
        sudo=sudo
    fi
    kmt_log "installing Debian packages: ${missing[*]}"
    case " ${missing[*]}" in
        *:i386*)
            dpkg --print-foreign-architectures | grep -qx i386 ||
                $sudo dpkg --add-architecture i386 || kmt_die "dpkg --add-architecture i386 failed" ;;
    esac
    # An index the mirror serves stale (seen: bookworm-security's i386) fails
    # the update but not the install of what the other indices hold: the
    # install says whether the packages came.
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 ||
        kmt_log "apt-get update reported errors; installing from the indices it got"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "${missing[@]}" >/dev/null || kmt_die "apt-get install ${missing[*]} failed"
}

# autoreconf when the generated files are missing or older than their inputs.
kmt_bootstrap() {
    local stale=
    [ -x "$KMT_TOP/configure" ] || stale=1
    if [ -z "$stale" ] && [ -n "$(find "$KMT_TOP" -path "$KMT_TOP/_build*" -prune -o \
            \( -name configure.ac -o -name Makefile.am -o -name '*.inc' -o -name '*.mk' \) \
            -newer "$KMT_TOP/configure" -print -quit)" ]; then
        stale=1
    fi
    if [ -n "$stale" ]; then
        kmt_log "autoreconf"
        (cd "$KMT_TOP" && autoreconf -fi >/dev/null 2>&1) || kmt_die "autoreconf failed"
    fi
}

# kmt_configure DIR [configure args...]: configure once, reconfigure when the
# arguments change.
kmt_configure() {
    local dir=$1; shift
    local args="$*"
    mkdir -p "$dir"
    if [ ! -f "$dir/config.status" ] || [ "$(cat "$dir/.kmt-configure-args" 2>/dev/null)" != "$args" ]; then
        kmt_log "configure $args (in ${dir#$KMT_TOP/})"
        (cd "$dir" && "$KMT_TOP/configure" -q "$@" >configure.out 2>&1) ||
            { cat "$dir/configure.out" >&2; kmt_die "configure failed"; }
        printf '%s' "$args" >"$dir/.kmt-configure-args"
    fi
}

kmt_build() {
    local dir=$1
    kmt_log "make -j$KMT_JOBS (in ${dir#$KMT_TOP/})"
    make -C "$dir" -j"$KMT_JOBS" >"$dir/make.out" 2>&1 ||
        { tail -40 "$dir/make.out" >&2; kmt_die "build failed (full log: $dir/make.out)"; }
}

# The main build always has its Windows half: the packages above bring Wine
# and mingw-w64, so a configure that does not find them is an error here, never
# a silently skipped lane (KMT_CONFIGURE_ARGS=--disable-wine opts out).
kmt_prepare() {
    kmt_install_packages
    kmt_bootstrap
    local args=${KMT_CONFIGURE_ARGS-"--enable-wine"}
    # shellcheck disable=SC2086 # several arguments
    kmt_configure "$KMT_BUILD" $args
    kmt_build "$KMT_BUILD"
}
