/*
 * kmtshim-core.so's wow64 table: the unix calls of a 32-bit kmtshim.dll in
 * a new-WoW64 Wine, where the 64-bit Linux half serves 32-bit programs.
 * The argument structs of unixlib.h are fixed-width, the same for both; the
 * D3DKMT descriptors they point to are not: each D3DKMT entry converts the
 * program's i386 descriptor (wow64_convert.c, by its layout in
 * wow64_layouts.h), calls the normal entry with the x86_64 copy and writes
 * the outputs back, unless the descriptor is const in functions.h.  The
 * private calls need no conversion.  kmtshim.so copies this table into
 * __wine_unix_call_wow64_funcs.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "kmtshim/d3dkmthk.h"
#include "unixlib.h"
#include "entries.h"
#include "events.h"
#include "wow64.h"

/* The D3DKMT entries: params_size is the argument struct's (kmt_desc_params
 * or, for the event calls, kmt_event_params; both start with desc). */
static NTSTATUS wow64_desc_call(void *args, size_t params_size, const struct kmt_w64_layout *layout, int write,
                                kmt_w64_entry entry)
{
    struct kmt_event_params params;
    struct kmt_w64_copy *copy;
    uint64_t desc64;
    NTSTATUS status;

    if (!args)
        return entry(NULL);
    memcpy(&params, args, params_size);
    if ((status = kmt_w64_to64(layout, params.desc, &copy, &desc64)))
        return status;
    params.desc = desc64;
    status = kmt_w64_from64(copy, write, entry(&params));
    /* the outputs of the argument struct after desc (the event's `owned`) */
    memcpy((uint8_t *)args + sizeof(params.desc), (uint8_t *)&params + sizeof(params.desc),
           params_size - sizeof(params.desc));
    return status;
}

/* whether functions.h types the descriptor const (qualifiers below a
 * pointer count; top-level ones would be ignored) */
#define KMT_W64_WRITES(name) (!__builtin_types_compatible_p(kmt_w64_desc_##name *, const kmt_w64_desc_##name *))

#define KMT_W64_ENTRY(name, type, params_type)                                                        \
    typedef type kmt_w64_desc_##name;                                                                 \
    static NTSTATUS wow64_##name(void *args)                                                          \
    {                                                                                                 \
        return wow64_desc_call(args, sizeof(params_type), &kmt_w64_layout_##name, KMT_W64_WRITES(name), \
                               unix_##name);                                                          \
    }
#define KMT_FUNC(name, type) KMT_W64_ENTRY(name, type, struct kmt_desc_params)
#define KMT_FUNC_EVENT(name, type) KMT_W64_ENTRY(name, type, struct kmt_event_params)
#define KMT_FUNC_CUSTOM(name, type)
#include "functions.h"

/* ShareObjects: the object attributes are a descriptor of their own, and
 * the NT handle comes back through a 4-byte HANDLE. */
static NTSTATUS wow64_ShareObjects(void *args)
{
    struct kmt_share_objects_params params;
    struct kmt_w64_copy *copy;
    uint64_t attributes;
    HANDLE handle = NULL;
    NTSTATUS status;
    int64_t value;

    if (!args)
        return unix_ShareObjects(NULL);
    memcpy(&params, args, sizeof(params));
    if ((status = kmt_w64_to64(&kmt_w64_layout_OBJECT_ATTRIBUTES, params.attributes, &copy, &attributes)))
        return status;
    params.attributes = attributes;
    /* a bad out pointer reaches the core as it is */
    if (params.nt_handle >= 0x10000 && params.nt_handle <= 0xfffffffcull)
        params.nt_handle = (uintptr_t)&handle;
    status = kmt_w64_from64(copy, 0, unix_ShareObjects(&params));
    if (params.nt_handle != (uintptr_t)&handle)
        return status;
    value = (intptr_t)handle;
    if (!status && value != (int32_t)value)
        status = KMT_W64_STATUS_NO_FIT;
    if (!status) {
        uint32_t narrow = (uint32_t)value;

        memcpy((void *)(uintptr_t)((const struct kmt_share_objects_params *)args)->nt_handle, &narrow, 4);
    }
    return status;
}

/* The event pump's counter: the 32-bit PE half polls it, so its address
 * must fit 32 bits. */
static NTSTATUS wow64_events_init(void *args)
{
    struct kmt_events_init_params *params = args;
    NTSTATUS status = unix_events_init(args);

    if (!status && params->pending > 0xffffffffull)
        return KMT_W64_STATUS_NO_FIT;
    return status;
}

/* Fixed-width arguments and no descriptor: the normal entries. */
#define wow64_CheckExclusiveOwnership unix_CheckExclusiveOwnership
#define wow64_SetProcessSchedulingPriorityClass unix_SetProcessSchedulingPriorityClass
#define wow64_GetProcessSchedulingPriorityClass unix_GetProcessSchedulingPriorityClass

/* unix-call code order, as kmt_unix_core_funcs */
__attribute__((visibility("default"))) const kmt_w64_entry kmt_unix_core_wow64_funcs[] = {
#define KMT_FUNC(name, type) wow64_##name,
#include "functions.h"
    unix_owns_handle,
    wow64_events_init,
    unix_events_wait,
    unix_events_take,
    unix_events_stop,
    unix_open_device_path,
};

KMT_STATIC_ASSERT(sizeof(kmt_unix_core_wow64_funcs) / sizeof(kmt_unix_core_wow64_funcs[0]) == KMT_UNIX_LOAD_STATUS,
                  "wow64 table and codes disagree");
