/*
 * The miniport's DRM calls and their fault-injection hook.
 *
 * Every ioctl, open and mmap the miniport makes goes through here with a
 * name (the ioctl's name without DRM_IOCTL_, "open", "mmap", or a
 * libdrm_amdgpu function's name).  A test arms a failure with
 *     KMTSHIM_DRM_FAULT=<call>:<n>[:<errno>]     (read when the miniport loads)
 * or the KMT_DRM_ESCAPE_SET_FAULT escape: the n-th call named <call> from
 * then on ("any": the n-th call of any name) fails once, with errno
 * (ENOMEM when not given), without reaching the kernel.  Release calls
 * (GEM_CLOSE, munmap, amdgpu_bo_free) never fail: a test that made them
 * fail would only leak what nothing can free any more.  A negative errno
 * makes the n-th call stall -errno ms instead and then go on: a test widens
 * a race window with it.  Stall points (kdrm_fault_stall_point) are names
 * that only ever stall.
 *
 * When nothing is armed the cost is one relaxed atomic load per call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kmtshim/kmtdrm.h"
#include "base/fd_registry.h"
#include "drm_fault.h"
#include "base/kmt_time.h"

atomic_bool kdrm_fault_armed;

static struct {
    pthread_mutex_t lock;
    char call[32];
    unsigned nth;
    int err;
    atomic_ullong seen, fired;
} fault = { .lock = PTHREAD_MUTEX_INITIALIZER };

void kdrm_fault_arm(const char *call, unsigned nth, int err)
{
    pthread_mutex_lock(&fault.lock);
    atomic_store(&kdrm_fault_armed, false);
    memset(fault.call, 0, sizeof(fault.call));
    if (call && *call && nth) {
        strncpy(fault.call, call, sizeof(fault.call) - 1);
        fault.nth = nth;
        fault.err = err ? err : ENOMEM;
        if (fault.err < -KMT_DRM_FAULT_MAX_STALL_MS)
            fault.err = -KMT_DRM_FAULT_MAX_STALL_MS;
        atomic_store(&kdrm_fault_armed, true);
    }
    atomic_store(&fault.seen, 0);
    atomic_store(&fault.fired, 0);
    pthread_mutex_unlock(&fault.lock);
}

/* "<call>:<n>[:<errno>]"; anything else disarms. */
void kdrm_fault_arm_from_env(void)
{
    const char *spec = getenv("KMTSHIM_DRM_FAULT");
    char call[32];
    unsigned nth = 0;
    int err = 0;

    if (!spec || sscanf(spec, "%31[^:]:%u:%d", call, &nth, &err) < 2) {
        kdrm_fault_arm(NULL, 0, 0);
        return;
    }
    kdrm_fault_arm(call, nth, err);
}

/* In a fork() child: another thread may have held the lock at the fork;
 * what is armed stays armed. */
void kdrm_fault_forget(void)
{
    fault.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

void kdrm_fault_counts(UINT64 *fired, UINT64 *seen)
{
    *fired = atomic_load(&fault.fired);
    *seen = atomic_load(&fault.seen);
}

/* The armed case of kdrm_fault_check() and kdrm_fault_stall_point().  A
 * failure armed on a stall point is neither counted nor fired. */
int kdrm_fault_check_armed(const char *name, bool may_fail)
{
    int err = 0;

    pthread_mutex_lock(&fault.lock);
    if (atomic_load(&kdrm_fault_armed) && (may_fail || fault.err < 0) &&
        (!strcmp(fault.call, "any") || !strcmp(fault.call, name))) {
        if (atomic_fetch_add(&fault.seen, 1) + 1 == fault.nth) {
            err = fault.err;
            atomic_fetch_add(&fault.fired, 1);
            atomic_store(&kdrm_fault_armed, false);
        }
    }
    pthread_mutex_unlock(&fault.lock);
    if (err < 0) {
        kmt_sleep_ns((UINT64)-err * 1000000);
        return 0;
    }
    return -err;
}

int kdrm_open(const char *path, int flags)
{
    int err = kdrm_fault_check("open");
    int fd;

    if (err)
        return err;
    fd = open(path, flags | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    kmt_fd_track(fd);
    return fd;
}

void *kdrm_mmap(size_t size, int prot, int fd, UINT64 offset)
{
    int err = kdrm_fault_check("mmap");
    void *p;

    if (err) {
        errno = -err;
        return MAP_FAILED;
    }
    /* A 64-bit kernel's fake offsets start at 4 GiB: a 32-bit off_t would
     * cut them, so a 32-bit build maps through the 64-bit-offset call. */
    if (sizeof(off_t) < sizeof(offset))
        p = mmap64(NULL, size, prot, MAP_SHARED, fd, (off64_t)offset);
    else
        p = mmap(NULL, size, prot, MAP_SHARED, fd, (off_t)offset);
    return p;
}

