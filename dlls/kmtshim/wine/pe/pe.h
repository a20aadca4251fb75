/*
 * kmtshim.dll, the PE half: shared declarations.
 *
 * The PE half is thin on purpose: it exports the D3DKMT names, hands each
 * call to the Linux half (kmtshim.so) through Wine's unix-call dispatcher,
 * and does only what needs Windows objects (a process handle inside a
 * descriptor) or must happen even without the Linux half (the stubs).
 */
#ifndef KMTSHIM_WINE_PE_H
#define KMTSHIM_WINE_PE_H

#define KMTAPI                      /* this DLL defines the functions */
#include "kmtshim/d3dkmthk.h"
#include "unixlib.h"
#include "desc_probe.h"

/* Calls the Linux half; STATUS_DLL_NOT_FOUND when it could not be loaded. */
NTSTATUS kmt_unix_call(enum kmt_unix_code code, void *args);

/* events.c: the Win32 events the core set, delivered by the pump thread or
 * right after the call that set them.  kmt_events_pending points at the
 * Linux half's count of queued operations once events are in use. */
extern volatile LONG *volatile kmt_events_pending;
extern volatile LONG kmt_events_delivering;
void kmt_events_deliver(void);
void kmt_events_detach(void);

/* A call may have set events (an async wait it satisfied, an object it
 * destroyed): set them before it returns, as Windows does.  One load when
 * nothing is queued. */
static inline void kmt_events_after_call(void)
{
    volatile LONG *pending = kmt_events_pending;

    if (pending && (*pending || kmt_events_delivering))
        kmt_events_deliver();
}

/* A D3DKMT call whose only argument is the caller's descriptor. */
static inline NTSTATUS kmt_call_desc(enum kmt_unix_code code, const void *desc)
{
    struct kmt_desc_params params = { (uint64_t)(uintptr_t)desc };
    NTSTATUS status = kmt_unix_call(code, &params);

    kmt_events_after_call();
    return status;
}

/* The wrappers the generated thunks (thunks_gen.c) call: KMT_FUNC_PE ones
 * in thunks.c and vblank.c, KMT_FUNC_EVENT ones in events.c. */
#define KMT_FUNC(name, type)
#define KMT_FUNC_PE(name, type) NTSTATUS pe_##name(type *desc);
#include "functions.h"

/* event_cache.c: the duplicates async CPU waits reuse, per (device, the
 * program's event handle).  take: a cached duplicate of `event`, checked
 * to name its object still, now busy; NULL if none.  adopt: a fresh
 * duplicate becomes a busy entry when there is room.  release: the core is
 * done with `dup`; TRUE when it is an entry (idle again, or closed if its
 * device is gone), FALSE when the caller closes it.  discard: closes `dup`
 * and forgets its entry.  drop_device: DestroyDevice of `device`. */
HANDLE kmt_event_cache_take(D3DKMT_HANDLE device, HANDLE event);
void kmt_event_cache_adopt(D3DKMT_HANDLE device, HANDLE event, HANDLE dup);
BOOL kmt_event_cache_release(HANDLE dup);
void kmt_event_cache_discard(HANDLE dup);
void kmt_event_cache_drop_device(D3DKMT_HANDLE device);

/* A process handle a program passed: NULL or a handle of the calling
 * process become NULL for the core (thunks.c). */
NTSTATUS kmt_pe_resolve_process(HANDLE *process);
/* Whether a handle is an event, asked without waiting on it (a wait would
 * reset an auto-reset event). */
BOOL kmt_pe_is_event(HANDLE handle);

/* Wine-style tracing on the "kmtshim" channel (WINEDEBUG=+kmtshim), through
 * Wine's own debug output in ntdll, so lines look and interleave like
 * Wine's.  Classes in Wine's numbering. */
enum kmt_pe_class {
    KMT_PE_FIXME = 0,
    KMT_PE_ERR = 1,
    KMT_PE_WARN = 2,
    KMT_PE_TRACE = 3,
};

void kmt_pe_debug_init(void);
BOOL kmt_pe_debug_on(enum kmt_pe_class cls);
void kmt_pe_log(enum kmt_pe_class cls, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *kmt_pe_debugstr_status(NTSTATUS status);

#define PE_LOG(cls, ...) \
    do { if (kmt_pe_debug_on(cls)) kmt_pe_log(cls, __func__, __VA_ARGS__); } while (0)
#define PE_TRACE(...) PE_LOG(KMT_PE_TRACE, __VA_ARGS__)
#define PE_WARN(...)  PE_LOG(KMT_PE_WARN, __VA_ARGS__)
#define PE_FIXME(...) PE_LOG(KMT_PE_FIXME, __VA_ARGS__)
#define PE_ERR(...)   PE_LOG(KMT_PE_ERR, __VA_ARGS__)

/* The private export the gdi32 proxy routes by (see dlls/gdi32). */
BOOL WINAPI KmtShimOwnsHandle(D3DKMT_HANDLE handle);

#endif /* KMTSHIM_WINE_PE_H */
