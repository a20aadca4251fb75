/*
 * Shared helpers of the export layer: the D3DKMT* functions with Windows'
 * names.  A thunk checks the caller's pointers, captures the descriptor
 * (so another thread rewriting it mid-call changes nothing), calls the
 * dxgkrnl core with kernel-side copies, writes the outputs back and traces
 * the call on the d3dkmt channel.
 */
#ifndef KMTSHIM_THUNK_H
#define KMTSHIM_THUNK_H

#include <stdint.h>
#include <string.h>

#include "kmtshim/d3dkmthk.h"
#include "dxgkrnl/dxgkrnl.h"
#include "base/kmt_debug.h"
#include "base/user_memory.h"

/* Windows never maps the first 64 KiB and user space ends at 2^47: a
 * pointer outside that cannot be a caller's buffer.  (Catches NULL, small
 * integers and garbage like 0xdeadbeef'ffffffff without a syscall.)  A
 * 32-bit process has no such hole: its user space fills the 4 GiB, so
 * garbage like 0xdeadbeef is caught by probing the range
 * (kmt_user_range_readable: the fault-guarded copy where it is ready,
 * else one system call). */
static inline bool kmt_user_ptr_ok(const void *p, size_t size)
{
    uintptr_t v = (uintptr_t)p;

#if UINTPTR_MAX > 0xffffffffu
    /* v >= 64 KiB and v + size <= 2^47 - 1: one compare where size is a
     * constant (v below 64 KiB wraps past the bound) */
    if (size > 0x7fffffffffffull - 0x10000)
        return false;
    return v - 0x10000 <= 0x7fffffffffffull - 0x10000 - size;
#else
    return v >= 0x10000 && kmt_user_range_readable(p, size);
#endif
}

static inline NTSTATUS kmt_thunk_return(const char *name, NTSTATUS status)
{
    if (KMT_TRACE_ON(d3dkmt))
        kmt_debug_log(&kmt_dbch_d3dkmt, KMT_DBG_TRACE, name, "-> %s\n", kmt_debugstr_status(status));
    return status;
}

#define THUNK_RETURN(status) return kmt_thunk_return(__func__, (status))

/* The opening of every thunk: brings the process up.  A start that ran
 * out of memory fails the call (the next call starts afresh); a start that
 * found no adapter is no failure of the call. */
#define THUNK_ENTER()                                            \
    do {                                                         \
        NTSTATUS _init = dxgk_process_init();                    \
        if (dxgk_status_is_exhaustion(_init))                    \
            THUNK_RETURN(_init);                                 \
    } while (0)

/* The opening of every thunk that takes one descriptor: bring the process
 * up, trace the pointer, and refuse one that cannot be the caller's buffer
 * before anything reads it. */
#define THUNK_ENTER_DESC(desc)                                   \
    do {                                                         \
        THUNK_ENTER();                                           \
        TRACE_(d3dkmt, "desc %p\n", (const void *)(desc));        \
        if (!kmt_user_ptr_ok((desc), sizeof(*(desc))))           \
            THUNK_RETURN(STATUS_INVALID_PARAMETER);              \
    } while (0)

#endif
