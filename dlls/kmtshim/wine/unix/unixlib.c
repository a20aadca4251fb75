/*
 * kmtshim-core.so, the Linux half of kmtshim.dll: the unix-call table.
 *
 * Wine loads kmtshim.so next to the builtin kmtshim.dll; that small loader
 * (loader.c) loads this object and copies kmt_unix_core_funcs into the
 * __wine_unix_call_funcs Wine calls, so a call reaches these entries
 * directly.  Each D3DKMT entry
 * (entries.h) checks its argument struct, then calls the native thunk,
 * which validates the caller's descriptor, traces the call (+d3dkmt, part
 * of +kmtshim) and returns Windows' NTSTATUS.  No Win32 call and no
 * callback into PE code happens here, and the entries keep big buffers off
 * the stack: this runs on Wine's ~1 MiB kernel stack.  Win32 events the core sets are queued
 * for the PE half to set (events.c).
 */
#include "config.h"

#include <stdint.h>

#include "kmtshim/kmtshim.h"
#include "base/fault_guard.h"
#include "base/kmt_debug.h"
#include "unixlib.h"
#include "entries.h"
#include "events.h"

KMT_DEFINE_DEBUG_CHANNEL(kmtshim);

typedef NTSTATUS (*kmt_unix_entry)(void *args);

/* Wine's handlers turn faults into Windows exceptions and must see every
 * one first, so here caller memory is never copied behind a SIGSEGV
 * handler of ours: it goes through the kernel (base/user_memory.h). */
__attribute__((constructor)) static void leave_faults_to_wine(void)
{
    kmt_fault_guard_forbid();
}

/* The gdi32 proxy's routing question (KmtShimOwnsHandle); the answer is
 * KmtOwnsHandle's, which never starts the core. */
NTSTATUS unix_owns_handle(void *args)
{
    struct kmt_owns_handle_params *params = args;

    if (!params)
        return STATUS_INVALID_PARAMETER;
    params->owned = KmtOwnsHandle(params->handle) ? 1 : 0;
    TRACE_(kmtshim, "handle %#x: %s\n", params->handle, params->owned ? "kmtshim's" : "not kmtshim's");
    return STATUS_SUCCESS;
}

extern const kmt_unix_entry kmt_unix_core_funcs[];
extern const uint32_t kmt_unix_core_count;

/* unix-call code order: the D3DKMT entries (functions.h order), then the
 * private calls up to the loader's own */
__attribute__((visibility("default"))) const kmt_unix_entry kmt_unix_core_funcs[] = {
#define KMT_FUNC(name, type) unix_##name,
#include "functions.h"
    unix_owns_handle,
    unix_events_init,
    unix_events_wait,
    unix_events_take,
    unix_events_stop,
    unix_open_device_path,
};

KMT_STATIC_ASSERT(sizeof(kmt_unix_core_funcs) / sizeof(kmt_unix_core_funcs[0]) ==
                  KMT_UNIX_LOAD_STATUS, "unix-call table and codes disagree");

/* the loader refuses a core built with another table */
__attribute__((visibility("default"))) const uint32_t kmt_unix_core_count = KMT_UNIX_LOAD_STATUS;
