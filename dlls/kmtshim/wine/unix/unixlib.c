/*
 * kmtshim.so, the Linux half of kmtshim.dll: Wine's unix-call table.
 *
 * Wine loads this object next to the builtin kmtshim.dll and calls
 * __wine_unix_call_funcs[code](args) for the PE half.  Each D3DKMT entry
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
#include "base/kmt_debug.h"
#include "unixlib.h"
#include "entries.h"
#include "events.h"

KMT_DEFINE_DEBUG_CHANNEL(kmtshim);

typedef NTSTATUS (*kmt_unix_entry)(void *args);

/* The gdi32 proxy's routing question (KmtShimOwnsHandle); the answer is
 * KmtOwnsHandle's, which never starts the core. */
static NTSTATUS unix_owns_handle(void *args)
{
    struct kmt_owns_handle_params *params = args;

    if (!params)
        return STATUS_INVALID_PARAMETER;
    params->owned = KmtOwnsHandle(params->handle) ? 1 : 0;
    TRACE_(kmtshim, "handle %#x: %s\n", params->handle, params->owned ? "kmtshim's" : "not kmtshim's");
    return STATUS_SUCCESS;
}

extern const kmt_unix_entry __wine_unix_call_funcs[];

/* unix-call code order: the D3DKMT entries (functions.h order), then the
 * private calls */
__attribute__((visibility("default"))) const kmt_unix_entry __wine_unix_call_funcs[] = {
#define KMT_FUNC(name, type) unix_##name,
#include "functions.h"
    unix_owns_handle,
    unix_events_init,
    unix_events_wait,
    unix_events_take,
    unix_events_stop,
    unix_open_device_path,
};

KMT_STATIC_ASSERT(sizeof(__wine_unix_call_funcs) / sizeof(__wine_unix_call_funcs[0]) ==
                  KMT_UNIX_CALL_COUNT, "unix-call table and codes disagree");
