#!/bin/sh
# The real-kernel DRM lane as one TAP test: boots the QEMU guest of
# scripts/qemu-drm-lane (virtio_gpu + vgem on Debian's 6.12 kernel), runs
# the DRM test programs there against the real drivers, and reports every
# case they report, one line per program's exit status, and one for the
# guest itself.  A dead or timed-out guest is a failure.  Where the lane
# cannot run (no qemu-system-x86_64, no cached kernel and no apt) the whole
# test is a SKIP with the reason.
#
# Where the host can also run a virgl GPU (Xvfb, QEMU's virtio-gpu-gl:
# Debian's qemu-system-gui libvirglrenderer1 libgl1-mesa-dri xvfb),
# the programs run a second time on that 3D host; otherwise that pass is
# one SKIP line.
#
#   tests/drm/lane.sh           the QEMU lane (make check runs this)
#   tests/drm/lane.sh --local   the same programs on this machine's own
#                               /dev/dri (a machine with a real GPU)
#
# KMTSHIM_LANE_TIMEOUT (seconds, default 110) bounds each guest.

builddir=${KMTSHIM_TEST_BUILDDIR:-$(pwd)}
srcdir=${KMTSHIM_TEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
lane="$srcdir/scripts/qemu-drm-lane"
programs="test_drm_enum test_drm_alloc test_drm_stress test_drm_fault test_drm_exec test_drm_display test_drm_hotplug_lane test_drm_share_lane"
mode=${1:-lane}

log=$(mktemp "${TMPDIR:-/tmp}/kmtshim-drm-lane.XXXXXX")
trap 'rm -f "$log" "$log.tap"' EXIT
: >"$log.tap"

# The command lines: each program between markers, never stopping the rest.
set --
for p in $programs; do
    set -- "$@" "echo '@@KMT-BEGIN $p'; ./tests/drm/$p; echo \"@@KMT-END $p \$?\""
done

# Turns a run's output into TAP lines (no plan) appended to $log.tap.
collect() {     # collect LABEL RC ELAPSED
    awk -v label="$1" -v rc="$2" -v elapsed="$3" -v programs="$programs" '
        function emit(ok, text) { printf "%s - %s%s\n", ok ? "ok" : "not ok", label, text }
        /^@@KMT-BEGIN / { prog = $2; next }
        /^@@KMT-END / { emit($3 == 0, prog " exited with status " $3); ended[prog] = 1; prog = ""; next }
        prog != "" && /^ok [0-9]+ - / { sub(/^ok [0-9]+ - /, ""); emit(1, $0); next }
        prog != "" && /^not ok [0-9]+ - / { sub(/^not ok [0-9]+ - /, ""); emit(0, $0); next }
        prog != "" && /^1\.\.[0-9]+/ { next }
        { print "# " $0 }
        END {
            k = split(programs, list, " ")
            for (i = 1; i <= k; i++)
                if (!ended[list[i]])
                    emit(0, list[i] " did not finish")
            if (rc != "")
                emit(rc == 0, "guest ran to the end and reported (qemu-drm-lane exit " rc ", " elapsed " s)")
        }' "$log" >>"$log.tap"
}

finish() {      # numbers the collected lines and prints the plan
    awk '/^(ok|not ok) - / { n++; sub(/ - /, " " n " - "); print; next } { print } END { print "1.." n }' "$log.tap"
    exit 0
}

if [ "$mode" = --local ]; then
    (cd "$builddir" && for c in "$@"; do sh -c "$c"; done) >"$log" 2>&1
    collect "" "" ""
    finish
fi

if reason=$("$lane" --check 2>&1); then
    :
elif [ $? -eq 77 ]; then
    echo "1..0 # SKIP ${reason#qemu-drm-lane: }"
    exit 0
else
    echo "not ok - qemu-drm-lane --check: $reason" >>"$log.tap"
    finish
fi

run_guest() {   # run_guest LABEL [lane options]
    label=$1; shift
    start=$(date +%s)
    "$lane" --timeout "${KMTSHIM_LANE_TIMEOUT:-110}" --cwd "$builddir" \
        --env KMTSHIM_DRM_EXPECT=virtio_gpu,vgem --env CK_DEFAULT_TIMEOUT=120 \
        --env KMTSHIM_BROKER="$builddir/dlls/kmtshim/broker/daemon/kmtshim-broker" \
        --env KMTSHIM_BROKER_DIR=/tmp/kmtshim-lane "$@" >"$log" 2>&1
    rc=$?
    if [ $rc -eq 77 ] && ! grep -q '^@@KMT-BEGIN' "$log"; then
        return 77
    fi
    collect "$label" "$rc" "$(( $(date +%s) - start ))"
}

run_guest "" "$@"
if [ $? -eq 77 ]; then
    echo "1..0 # SKIP $(grep 'cannot run' "$log" | head -1 | sed 's/^qemu-drm-lane: //')"
    exit 0
fi

if ! command -v Xvfb >/dev/null 2>&1; then
    echo "ok - [virgl] 3D host pass # SKIP no Xvfb (Debian: xvfb)" >>"$log.tap"
elif ! qemu-system-x86_64 -device help 2>/dev/null | grep -q virtio-gpu-gl-pci; then
    echo "ok - [virgl] 3D host pass # SKIP QEMU has no virtio-gpu-gl-pci (Debian: qemu-system-gui)" >>"$log.tap"
else
    run_guest "[virgl] " --virgl "$@"
fi
finish
