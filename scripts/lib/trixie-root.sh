# A cached Debian 13 (trixie) root for the Wine 10 and Wine 32-bit lanes: made with
# debootstrap, reused while every package of its list is installed in it
# (upgraded in place when one is not), entered with chroot.  Sourced, not
# run; needs root (debootstrap, mount, chroot).
#
#   kmt_trixie_lock          one lane at a time per root (fd 9 holds the lock)
#   kmt_trixie_root          make or reuse the root at $KMT_TRIXIE_ROOT
#   kmt_trixie_copy_tree DIR the source tree over DIR inside the root
#   kmt_tree_files           the files of the source tree it copies, NUL-ended
#   kmt_trixie_enter         mount what programs inside need; the caller's
#                            EXIT trap must call kmt_trixie_leave
#   kmt_trixie_run CMD...    run CMD inside (after kmt_trixie_enter)
#   kmt_trixie_leave         unmount everything kmt_trixie_enter mounted
#
#   KMT_TRIXIE_ROOT     where the root lives (default /var/cache/kmtshim/trixie-root)
#   KMT_TRIXIE_MIRROR   Debian mirror (default http://deb.debian.org/debian)

KMT_TRIXIE_ROOT=${KMT_TRIXIE_ROOT:-/var/cache/kmtshim/trixie-root}
KMT_TRIXIE_MIRROR=${KMT_TRIXIE_MIRROR:-http://deb.debian.org/debian}

# What building kmtshim and running its Windows side needs, for 64-bit and
# 32-bit programs alike: the toolchain with its -m32 half, Check, libdrm
# (libdrm2 and libdrm-amdgpu1 come with libdrm-dev), mingw-w64, Wine 10.0
# with both loaders, its headers and tools (winebuild, winedump), and Xvfb
# with Mesa's GLX for wined3d.
KMT_TRIXIE_PACKAGES="build-essential autoconf automake libtool pkg-config check libdrm-dev
  mingw-w64 wine wine64 wine32:i386 wine64-tools libwine-dev gcc-multilib libdrm-dev:i386
  check:i386 xvfb xauth libgl1-mesa-dri libglx-mesa0 ca-certificates"

# The stamp holds the package list the root was made with.
kmt_trixie_stamp() { printf '%s\n' $KMT_TRIXIE_PACKAGES; }

# The packages of the list that are not installed in the root $1, by
# dpkg's own database (a package removed by hand counts too); a name
# without an architecture is the root's own or "all".
kmt_trixie_missing() {
    local arch
    arch=$(chroot "$1" dpkg --print-architecture 2>/dev/null)
    chroot "$1" dpkg-query -W -f '${Package}:${Architecture} ${db:Status-Status}\n' 2>/dev/null |
        awk -v list="$KMT_TRIXIE_PACKAGES" -v arch="$arch" '
            $2 == "installed" { have[$1] = 1 }
            END {
                n = split(list, want, /[ \n]+/)
                for (i = 1; i <= n; i++) {
                    p = want[i]
                    if (p == "" || have[p] || have[p ":" arch] || have[p ":all"]) continue
                    printf "%s ", p
                }
            }'
}

# Installs the packages $* in the root $KMT_TRIXIE_ROOT (mounted for the
# call only; i386 added, which is idempotent).
kmt_trixie_install() {
    (
        trap kmt_trixie_leave EXIT
        trap 'exit 1' INT TERM HUP
        kmt_trixie_enter
        kmt_trixie_run dpkg --add-architecture i386 &&
        kmt_trixie_run apt-get update -q &&
        kmt_trixie_run apt-get install -y -q --no-install-recommends "$@" &&
        kmt_trixie_run apt-get clean
    )
}

# Another lane's exit would unmount under us.  The two lanes sharing a
# root run about 10 min each, more when one makes the root; an hour
# without the lock means a run that hangs, not a queue.
kmt_trixie_lock() {
    mkdir -p "$(dirname "$KMT_TRIXIE_ROOT")"
    exec 9>"$KMT_TRIXIE_ROOT.lock"
    flock -w 3600 9 ||
        kmt_die "another run held $KMT_TRIXIE_ROOT.lock for 3600 s (a hung lane? see: fuser -v $KMT_TRIXIE_ROOT.lock)"
}

# The files git tracks or would track (never a build output), that exist.
kmt_tree_files() {
    git -C "$KMT_TOP" ls-files -z -co --exclude-standard |
        (cd "$KMT_TOP" && xargs -0 sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' sh)
}

kmt_trixie_copy_tree() {
    mkdir -p "$KMT_TRIXIE_ROOT$1"
    kmt_tree_files | tar -C "$KMT_TOP" --null -T - -cf - | tar -C "$KMT_TRIXIE_ROOT$1" -xf - ||
        kmt_die "copying the source tree into the root failed"
}

# Fails when anything is mounted at or below $1: removing such a tree would
# reach into the host's /dev or /proc.
kmt_trixie_unmounted() {
    ! awk -v d="$1" '$2 == d || index($2, d "/") == 1 {found = 1} END {exit !found}' /proc/self/mounts
}

kmt_trixie_root() {
    local root=$KMT_TRIXIE_ROOT new missing
    # A finished root (it has a stamp) is reused once every package of the
    # list is installed in it, and upgraded in place when some are not.
    if [ -f "$root/.kmt-packages" ]; then
        missing=$(kmt_trixie_missing "$root")
        [ -z "$missing" ] || kmt_log "upgrading the Debian 13 root: installing $missing"
        # shellcheck disable=SC2086 # a list
        if [ -z "$missing" ] ||
           { kmt_trixie_install $missing >>"$root.log" 2>&1 && [ -z "$(kmt_trixie_missing "$root")" ]; }; then
            kmt_trixie_stamp >"$root/.kmt-packages"
            return 0
        fi
        kmt_log "upgrading the root failed (log: $root.log): making it again"
    fi
    [ "$(id -u)" = 0 ] || kmt_die "making the Debian 13 root needs root (debootstrap, chroot)"
    command -v debootstrap >/dev/null || kmt_die "debootstrap is missing (apt-get install debootstrap)"
    # A half-made root from an interrupted run is never used: the new root is
    # made beside it and moved into place, stamp last.
    new=$root.new
    for dir in "$root" "$new"; do
        [ -e "$dir" ] || continue
        kmt_trixie_unmounted "$dir" || kmt_die "$dir has mounts below it; unmount them first"
        rm -rf --one-file-system "$dir"
    done
    mkdir -p "$(dirname "$root")"
    kmt_log "making a Debian 13 root in $root (debootstrap, a few minutes)"
    # Main suite only: the mirror's trixie-security i386 index is stale, and
    # i386 packages from it cannot match their amd64 versions.
    debootstrap --variant=minbase trixie "$new" "$KMT_TRIXIE_MIRROR" >"$root.log" 2>&1 ||
        { tail -20 "$root.log" >&2; kmt_die "debootstrap failed (log: $root.log)"; }
    # shellcheck disable=SC2086 # a list
    KMT_TRIXIE_ROOT=$new kmt_trixie_install $KMT_TRIXIE_PACKAGES >>"$root.log" 2>&1 ||
        { tail -20 "$root.log" >&2; kmt_die "installing packages in the root failed (log: $root.log)"; }
    kmt_trixie_stamp >"$new/.kmt-packages"
    mv "$new" "$root"
}

# Mount points, in mount order; each entry is "target type source options".
kmt_trixie_mounts() {
    printf '%s\n' "proc proc proc nosuid,nodev,noexec" \
        "sys sysfs sysfs ro,nosuid,nodev,noexec" \
        "dev none /dev bind" \
        "dev/pts none /dev/pts bind" \
        "dev/shm tmpfs tmpfs nosuid,nodev,mode=1777"
}

kmt_trixie_enter() {
    local target type source opts
    while read -r target type source opts; do
        # Never mounted twice: a mount left by a killed run is reused.
        mountpoint -q "$KMT_TRIXIE_ROOT/$target" && continue
        if [ "$opts" = bind ]; then
            # private: nothing mounted below it reaches the host's tree
            mount --bind "$source" "$KMT_TRIXIE_ROOT/$target" &&
                mount --make-private "$KMT_TRIXIE_ROOT/$target"
        else
            mount -t "$type" -o "$opts" "$source" "$KMT_TRIXIE_ROOT/$target"
        fi || kmt_die "cannot mount $KMT_TRIXIE_ROOT/$target"
    done < <(kmt_trixie_mounts)
}

kmt_trixie_leave() {
    local target
    # Reverse order: /dev/pts and /dev/shm before /dev.
    for target in $(kmt_trixie_mounts | awk '{print $1}' | tac); do
        while mountpoint -q "$KMT_TRIXIE_ROOT/$target"; do
            umount "$KMT_TRIXIE_ROOT/$target" 2>/dev/null ||
                umount -l "$KMT_TRIXIE_ROOT/$target" || break
        done
    done
    kmt_trixie_unmounted "$KMT_TRIXIE_ROOT" || kmt_log "warning: mounts are left below $KMT_TRIXIE_ROOT"
}

kmt_trixie_run() {
    chroot "$KMT_TRIXIE_ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive "$@"
}
