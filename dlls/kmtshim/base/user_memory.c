/*
 * Probing caller memory: memcpy on the live stack, the guarded copy
 * where the fault guard is ready, the kernel otherwise (see user_memory.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fault_copy.h"
#include "fault_guard.h"
#include "live_stack.h"
#include "user_memory.h"

#define PROBE_BATCH 512              /* pages per process_vm_readv: well under IOV_MAX */

static size_t page_size(void)
{
    static size_t cached;
    long v;

    if (!__atomic_load_n(&cached, __ATOMIC_RELAXED)) {
        v = sysconf(_SC_PAGESIZE);
        __atomic_store_n(&cached, v > 0 ? (size_t)v : 4096, __ATOMIC_RELAXED);
    }
    return __atomic_load_n(&cached, __ATOMIC_RELAXED);
}

/* The call is filtered or missing: all we can still learn is whether the
 * pages are mapped. */
static bool vm_read_unavailable(int err)
{
    return err == ENOSYS || err == EPERM;
}

static bool range_mapped(uintptr_t start, uintptr_t end)
{
    return !msync((void *)start, end - start, MS_ASYNC);
}

bool kmt_user_range_readable(const void *p, size_t len)
{
    const size_t ps = page_size();
    uintptr_t start = (uintptr_t)p & ~(uintptr_t)(ps - 1), end;
    struct iovec local, remote[PROBE_BATCH];
    unsigned char scratch[PROBE_BATCH];

    if (!len || kmt_live_stack_holds(p, len))
        return true;
    if ((uintptr_t)p + len < (uintptr_t)p)
        return false;
    end = ((uintptr_t)p + len + ps - 1) & ~(uintptr_t)(ps - 1);
    if (end < start)
        return false;                    /* the range ends past the top of memory */
    if (kmt_fault_guard_ready()) {
        /* one byte of every page, as below */
        for (uintptr_t a = start; a < end; a += ps)
            if (kmt_fault_copy(scratch, (const void *)a, 1))
                return false;
        return true;
    }
    local.iov_base = scratch;
    /* one byte of every page; a page that cannot be read ends the transfer
     * short (partial transfers stop at an iovec's edge) */
    while (start < end) {
        unsigned n = 0;
        ssize_t got;

        for (uintptr_t a = start; a < end && n < PROBE_BATCH; a += ps, n++) {
            remote[n].iov_base = (void *)a;
            remote[n].iov_len = 1;
        }
        local.iov_len = n;
        got = process_vm_readv(getpid(), &local, 1, remote, n, 0);
        if (got < 0 && vm_read_unavailable(errno))
            return range_mapped(start, end);
        if (got != (ssize_t)n)
            return false;
        start += (uintptr_t)n * ps;
    }
    return true;
}

bool kmt_user_copy_in(void *dst, const void *src, size_t len)
{
    size_t done = 0;

    if (kmt_live_stack_holds(src, len)) {
        memcpy(dst, src, len);
        return true;
    }
    if (kmt_fault_guard_ready())
        return !kmt_fault_copy(dst, src, len);

    while (done < len) {
        struct iovec local = { (char *)dst + done, len - done };
        struct iovec remote = { (char *)src + done, len - done };
        ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

        if (got < 0 && vm_read_unavailable(errno)) {
            if (!kmt_user_range_readable((const char *)src + done, len - done))
                return false;
            memcpy((char *)dst + done, (const char *)src + done, len - done);
            return true;
        }
        if (got <= 0)
            return false;
        done += (size_t)got;
    }
    return true;
}

/* The fallback of a filtered process_vm_writev: the kernel's copy into a
 * pipe reads src and its copy out of it writes dst, each failing with
 * EFAULT where the page does not allow it. */
static bool pipe_copy(void *dst, const void *src, size_t len)
{
    size_t done = 0;
    int fds[2];
    bool ok = true;

    if (pipe2(fds, O_CLOEXEC))
        return false;
    while (ok && done < len) {
        size_t n = len - done < 4096 ? len - done : 4096;   /* within any pipe's capacity */
        ssize_t w = write(fds[1], (const char *)src + done, n);

        ok = w == (ssize_t)n && read(fds[0], (char *)dst + done, n) == (ssize_t)n;
        done += n;
    }
    close(fds[0]);
    close(fds[1]);
    return ok;
}

bool kmt_user_copy_out(void *dst, const void *src, size_t len)
{
    size_t done = 0;

    if (kmt_live_stack_holds(dst, len)) {
        memcpy(dst, src, len);
        return true;
    }
    if (kmt_fault_guard_ready())
        return !kmt_fault_copy(dst, src, len);

    while (done < len) {
        struct iovec local = { (void *)((const char *)src + done), len - done };
        struct iovec remote = { (char *)dst + done, len - done };
        ssize_t put = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);

        if (put < 0 && vm_read_unavailable(errno))
            return pipe_copy((char *)dst + done, (const char *)src + done, len - done);
        if (put <= 0)
            return false;
        done += (size_t)put;
    }
    return true;
}

bool kmt_user_range_writable(void *p, size_t len)
{
    if (kmt_live_stack_holds(p, len))
        return true;
    return kmt_user_copy_out(p, p, len);
}

bool kmt_user_write_back(void *dst, const void *src, size_t len)
{
    return !memcmp(dst, src, len) || kmt_user_copy_out(dst, src, len);
}
