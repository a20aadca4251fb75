/*
 * The interface between kmtshim.dll (PE half, mingw-w64) and kmtshim.so
 * (Linux half, gcc): unix-call codes and their argument structs.
 *
 * Both halves live in one address space, so a descriptor pointer passes
 * straight through; it travels as a UINT64 because the halves disagree on
 * the size of `long` (LLP64 against LP64).  Every argument struct uses
 * fixed-width types only and has its size pinned below.
 */
#ifndef KMTSHIM_WINE_UNIXLIB_H
#define KMTSHIM_WINE_UNIXLIB_H

#include <stdint.h>

#include "kmtshim/kmt_wintypes.h"
#if !defined(_WIN32) && UINTPTR_MAX <= 0xffffffffu
# include "base/user_memory.h"
#endif

/* Whether [p, p + size) can be a caller's buffer, for the Linux half
 * reading a descriptor itself, and the bounds the Windows side's
 * desc_probe.h keeps on x86_64: Windows never maps the first 64 KiB and
 * user space ends at 2^47.  A 32-bit process has no such hole, so the i386
 * Linux half probes the range as the core's thunks do (thunks/thunk.h). */
static inline int kmt_wine_ptr_ok(const void *p, uint64_t size)
{
    uint64_t v = (uintptr_t)p;

#if !defined(_WIN32) && UINTPTR_MAX <= 0xffffffffu
    return v >= 0x10000 && size <= 0xffffffffu && kmt_user_range_readable(p, (size_t)size);
#else
    return v >= 0x10000 && v <= 0x7fffffffffffull && size <= 0x7fffffffffffull - v;
#endif
}

/* One code per implemented D3DKMT function (functions.h order), then the
 * private calls. */
enum kmt_unix_code {
#define KMT_FUNC(name, type) KMT_UNIX_##name,
#include "functions.h"
    KMT_UNIX_OWNS_HANDLE,       /* struct kmt_owns_handle_params */
    KMT_UNIX_EVENTS_INIT,       /* struct kmt_events_init_params */
    KMT_UNIX_EVENTS_WAIT,       /* struct kmt_events_wait_params */
    KMT_UNIX_EVENTS_TAKE,       /* struct kmt_events_take_params */
    KMT_UNIX_EVENTS_STOP,       /* struct kmt_events_wait_params */
    KMT_UNIX_OPEN_DEVICE_PATH,  /* struct kmt_device_path_params */
    KMT_UNIX_LOAD_STATUS,       /* struct kmt_load_status_params (kmtshim.so's own) */
    KMT_UNIX_CALL_COUNT
};

/* Every D3DKMT call: the caller's descriptor. */
struct kmt_desc_params {
    uint64_t desc;
};
KMT_STATIC_ASSERT(sizeof(struct kmt_desc_params) == 8, "kmt_desc_params layout");

/* KMT_UNIX_CheckExclusiveOwnership (no argument): the BOOLEAN answer. */
struct kmt_bool_params {
    uint32_t result;            /* out: 0 or 1 */
    uint32_t pad;
};
KMT_STATIC_ASSERT(sizeof(struct kmt_bool_params) == 8, "kmt_bool_params layout");

/* KMT_UNIX_Set/GetProcessSchedulingPriorityClass: the process handle (NULL
 * once the PE half resolved it) and the class (Set) or the address of the
 * caller's variable (Get). */
struct kmt_priority_params {
    uint64_t process;
    uint64_t priority;
};
KMT_STATIC_ASSERT(sizeof(struct kmt_priority_params) == 16, "kmt_priority_params layout");

/* D3DKMTShareObjects' five arguments. */
struct kmt_share_objects_params {
    uint64_t count;
    uint64_t handles;                    /* const D3DKMT_HANDLE * */
    uint64_t attributes;                 /* OBJECT_ATTRIBUTES * */
    uint64_t access;
    uint64_t nt_handle;                  /* HANDLE *, out */
};
KMT_STATIC_ASSERT(sizeof(struct kmt_share_objects_params) == 40, "kmt_share_objects_params layout");

/* The KMT_FUNC_EVENT calls: the descriptor, and the event inside it that
 * the PE half duplicated (0: none).  With `owned` 1 the Linux half kept the
 * duplicate: it comes back through KMT_UNIX_EVENTS_TAKE with
 * KMT_EVENT_CLOSE once the core is done with it (set, or its object
 * destroyed).  With `owned` 0 (the call failed, or never got here) the PE
 * half closes it at once. */
struct kmt_event_params {
    uint64_t desc;
    uint64_t event;
    uint32_t owned;             /* out */
    uint32_t pad;
};
KMT_STATIC_ASSERT(sizeof(struct kmt_event_params) == 24, "kmt_event_params layout");

/* ---- events: the core sets Win32 events on its own threads, where no Win32
 * call is possible; the Linux half queues them and the PE half's pump
 * thread (or the calling thread, right after a call) delivers them. */

/* KMT_UNIX_EVENTS_INIT: the address of the count of queued operations (a
 * uint32_t the PE half polls after each call to deliver what the call set). */
struct kmt_events_init_params {
    uint64_t pending;           /* out */
};
KMT_STATIC_ASSERT(sizeof(struct kmt_events_init_params) == 8, "kmt_events_init_params layout");

/* KMT_UNIX_EVENTS_WAIT blocks until operations are queued (STATUS_SUCCESS)
 * or KMT_UNIX_EVENTS_STOP was called (KMT_STATUS_EVENTS_STOPPED). */
struct kmt_events_wait_params {
    uint32_t reserved;          /* 0 */
    uint32_t pad;
};
KMT_STATIC_ASSERT(sizeof(struct kmt_events_wait_params) == 8, "kmt_events_wait_params layout");
#define KMT_STATUS_EVENTS_STOPPED ((NTSTATUS)0xC0000120L)   /* STATUS_CANCELLED */

/* KMT_UNIX_EVENTS_TAKE: dequeues up to KMT_EVENTS_BATCH operations, in the
 * order they were queued; never blocks. */
#define KMT_EVENTS_BATCH 32
#define KMT_EVENT_SET   1u          /* SetEvent(event) */
#define KMT_EVENT_CLOSE 2u          /* then CloseHandle(event): the core is done with it */
struct kmt_event_op {
    uint64_t event;
    uint32_t ops;               /* KMT_EVENT_SET | KMT_EVENT_CLOSE */
    uint32_t pad;
};
struct kmt_events_take_params {
    uint32_t count;             /* out */
    uint32_t pad;
    struct kmt_event_op ops[KMT_EVENTS_BATCH];
};
KMT_STATIC_ASSERT(sizeof(struct kmt_events_take_params) == 8 + 16 * KMT_EVENTS_BATCH,
                  "kmt_events_take_params layout");

/* KMT_UNIX_OWNS_HANDLE: is `handle` a live kmtshim handle of this process?
 * (the gdi32 proxy routes a call by the owner of the handle it names) */
struct kmt_owns_handle_params {
    uint32_t handle;            /* in */
    uint32_t owned;             /* out: 1 or 0 */
};
KMT_STATIC_ASSERT(sizeof(struct kmt_owns_handle_params) == 8, "kmt_owns_handle_params layout");

/* KMT_UNIX_OPEN_DEVICE_PATH: KmtOpenAdapterFromDevicePath for the PE
 * half's display-based opens (pe/display.c), which name Wine's GPU by a
 * device interface path. */
struct kmt_device_path_params {
    uint64_t path;              /* in: const WCHAR *, NUL-terminated */
    uint32_t flags;             /* in: KMT_DEVICE_PATH_* */
    uint32_t source;            /* in: with KMT_DEVICE_PATH_NEED_SOURCE */
    uint32_t adapter;           /* out: the handle (none with KMT_DEVICE_PATH_NO_HANDLE) */
    uint32_t luid_low;          /* out */
    int32_t luid_high;          /* out */
    uint32_t pad;
};
KMT_STATIC_ASSERT(sizeof(struct kmt_device_path_params) == 32, "kmt_device_path_params layout");

/* KMT_UNIX_LOAD_STATUS: kmtshim.so is a small loader of the core
 * (kmtshim-core.so, which needs libdrm); whether the core loaded
 * (STATUS_SUCCESS) or not (STATUS_DLL_NOT_FOUND, with the dynamic loader's
 * message and what to install). */
#define KMT_LOAD_MESSAGE_SIZE 448
struct kmt_load_status_params {
    char message[KMT_LOAD_MESSAGE_SIZE];    /* out: NUL-terminated, empty when loaded */
};
KMT_STATIC_ASSERT(sizeof(struct kmt_load_status_params) == KMT_LOAD_MESSAGE_SIZE,
                  "kmt_load_status_params layout");

#endif /* KMTSHIM_WINE_UNIXLIB_H */
