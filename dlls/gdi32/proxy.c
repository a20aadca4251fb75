/*
 * The opt-in gdi32 proxy: Wine's gdi32 plus kmtshim's D3DKMT functions, for
 * programs that look D3DKMT functions up in gdi32.
 *
 * Every Wine export is an import thunk into gdi32_orig.dll (Wine's own
 * gdi32 under another name, see thunks.S).  The D3DKMT functions Wine lacks
 * go to kmtshim.dll; the ones both have are routed by routing.txt: a call
 * naming a handle in kmtshim's index range goes to kmtshim, anything else
 * to Wine, so Wine's own D3D stack (wined3d opens its adapters through
 * gdi32) keeps working.
 *
 * kmtshim.dll is loaded on the proxy's first D3DKMT call, not with the
 * proxy: a process that never calls D3DKMT functions never loads it, and a
 * process where it cannot load keeps Wine's behaviour.  Loading it does not
 * start kmtshim's core, and routing by handle index asks kmtshim nothing.
 */
#define KMTAPI
#include "kmtshim/d3dkmthk.h"
#include "desc_probe.h"

typedef NTSTATUS (APIENTRY *d3dkmt_fn)(void *desc);

#define SHIM_FAILED ((HMODULE)(ULONG_PTR)1)

static HMODULE shim_module;              /* NULL: not tried yet */

/* Loads kmtshim.dll once; NULL when it cannot be loaded. */
static HMODULE load_shim(void)
{
    HMODULE module = __atomic_load_n(&shim_module, __ATOMIC_ACQUIRE), expected = NULL;

    if (module)
        return module == SHIM_FAILED ? NULL : module;
    module = LoadLibraryW(L"kmtshim.dll");
    if (module) {
        /* a kmtshim.dll of this interface has the ownership query */
        if (!GetProcAddress(module, "KmtShimOwnsHandle")) {
            FreeLibrary(module);
            module = SHIM_FAILED;
        }
    } else {
        module = SHIM_FAILED;
    }
    if (!__atomic_compare_exchange_n(&shim_module, &expected, module, FALSE, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        if (module != SHIM_FAILED)       /* another thread won; drop our reference */
            FreeLibrary(module);
        module = expected;
    }
    return module == SHIM_FAILED ? NULL : module;
}

/* Calls kmtshim's `name`, resolving it once into *slot.  Without kmtshim
 * the answer is what its stubs answer: STATUS_NOT_SUPPORTED. */
/* kmtshim's `name`, looked up once into *slot; NULL without kmtshim. */
static d3dkmt_fn resolve_shim(const char *name, d3dkmt_fn *slot)
{
    d3dkmt_fn fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    HMODULE module;

    if (!fn) {
        if (!(module = load_shim()) || !(fn = (d3dkmt_fn)(void *)GetProcAddress(module, name)))
            return NULL;
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

static NTSTATUS call_shim(const char *name, d3dkmt_fn *slot, void *desc)
{
    d3dkmt_fn fn = resolve_shim(name, slot);

    return fn ? fn(desc) : STATUS_NOT_SUPPORTED;
}

/* Whether the routing may read the descriptor (desc_probe.h: bounds on
 * x86_64, a probe on i386); kmtshim answers one it may not. */
static BOOL desc_ok(const void *desc, SIZE_T size)
{
    return kmt_win_desc_ok(desc, size);
}

/* Who serves a D3DKMT handle, local or global, is decided by its index
 * alone (bits 29..6, Windows' layout): kmtshim's indices start at 2^23
 * (hmgr.h, broker/daemon/globals.c), Wine's (10.15 on: local handles in
 * win32u, global ones in the wineserver) at 0, so bit 29 is set exactly in
 * kmtshim's.  A stale handle goes back to the side that issued it, which
 * answers what Windows answers; so does 0 (nobody's), which kmtshim
 * answers. */
#define KMT_SHIM_INDEX_BIT 0x20000000u

static BOOL shims_handle(D3DKMT_HANDLE handle)
{
    return !handle || (handle & KMT_SHIM_INDEX_BIT);
}

/* kmtshim answers calls on its own handles and bad descriptors (Windows'
 * NTSTATUS).  Without kmtshim everything is Wine's. */
static BOOL shim_owns(const void *desc, unsigned offset)
{
    D3DKMT_HANDLE handle;

    if (!load_shim())
        return FALSE;
    if (!desc_ok(desc, offset + sizeof(handle)))
        return TRUE;
    memcpy(&handle, (const char *)desc + offset, sizeof(handle));
    return shims_handle(handle);
}

/* The same for the first handle of an array the descriptor points to
 * (inline: no name of Wine 8 needs it, see routing.txt). */
static inline BOOL shim_owns_ptr(const void *desc, unsigned offset)
{
    const D3DKMT_HANDLE *array;
    D3DKMT_HANDLE handle;

    if (!load_shim())
        return FALSE;
    if (!desc_ok(desc, offset + sizeof(array)))
        return TRUE;
    memcpy(&array, (const char *)desc + offset, sizeof(array));
    if (!desc_ok(array, sizeof(handle)))
        return TRUE;
    memcpy(&handle, array, sizeof(handle));
    return shims_handle(handle);
}

/* The first handle of `array` (ShareObjects' objects) is kmtshim's, or
 * nobody's (a bad pointer, a zero handle: kmtshim answers). */
static inline BOOL shim_owns_array(const D3DKMT_HANDLE *array)
{
    D3DKMT_HANDLE handle;

    if (!load_shim())
        return FALSE;
    if (!desc_ok(array, sizeof(handle)))
        return TRUE;
    memcpy(&handle, array, sizeof(handle));
    return shims_handle(handle);
}

/* kmtshim's answer for an NT handle or name that is not its own: not an
 * open handle, not one of its NT handles, an unknown name. */
static inline BOOL not_shims_nt(NTSTATUS status)
{
    return status == (NTSTATUS)STATUS_INVALID_HANDLE || status == (NTSTATUS)STATUS_OBJECT_TYPE_MISMATCH ||
           status == (NTSTATUS)STATUS_OBJECT_NAME_NOT_FOUND;
}

/* Wine's answer after kmtshim said the handle or name is not its own, or
 * kmtshim's where Wine only has the name: Wine 10.0's gdi32 exports the
 * sharing calls, and its win32u answers some with STATUS_NOT_IMPLEMENTED,
 * where Windows (and kmtshim) say what is wrong with the handle. */
static inline NTSTATUS wine_answer(NTSTATUS wine, NTSTATUS shim)
{
    return wine == (NTSTATUS)STATUS_NOT_IMPLEMENTED ? shim : wine;
}

/* kmtshim has the adapter whose LUID is at `offset` (it opens it and
 * closes it again); a bad descriptor is kmtshim's to answer. */
static BOOL shim_knows_luid(const void *desc, unsigned offset)
{
    static d3dkmt_fn open_fn, close_fn;
    D3DKMT_OPENADAPTERFROMLUID open = { 0 };
    D3DKMT_CLOSEADAPTER close = { 0 };

    if (!load_shim())
        return FALSE;
    if (!desc_ok(desc, offset + sizeof(LUID)))
        return TRUE;
    memcpy(&open.AdapterLuid, (const char *)desc + offset, sizeof(LUID));
    if (call_shim("D3DKMTOpenAdapterFromLuid", &open_fn, &open))
        return FALSE;
    close.hAdapter = open.hAdapter;
    call_shim("D3DKMTCloseAdapter", &close_fn, &close);
    return TRUE;
}

/* NtQueryObject's ObjectTypeInformation answer starts with the type name. */
typedef struct {
    USHORT Length, MaximumLength;
    WCHAR *Buffer;
} proxy_unicode_string;
typedef NTSTATUS (WINAPI *query_object_fn)(HANDLE handle, int info_class, void *info, ULONG size, ULONG *ret);
#define PROXY_OBJECT_TYPE_INFORMATION 2

/* `len` bytes at `name` are `want` (the proxy links no C runtime). */
static BOOL same_name(const WCHAR *name, ULONG len, const WCHAR *want)
{
    ULONG i;

    for (i = 0; i < len / sizeof(WCHAR); i++)
        if (!want[i] || name[i] != want[i])
            return FALSE;
    return !want[i];
}

/* The NT handle at `offset` is a wineserver D3DKMT share: Wine 10.15 on
 * gives its shared resources and sync objects the object types Windows'
 * dxgkrnl does, and kmtshim's NT handles are never of these types.  Asked
 * on every call, not cached: a handle value names another object once it
 * is closed, and opens from NT handles are not on a per-frame path. */
static BOOL wine_nt_share(const void *desc, unsigned offset)
{
    static const WCHAR resource[] = L"DxgkSharedResource", sync[] = L"DxgkSharedSyncObject";
    static query_object_fn query;
    union {
        proxy_unicode_string name;
        char bytes[512];
    } info;
    query_object_fn fn = __atomic_load_n(&query, __ATOMIC_ACQUIRE);
    HANDLE handle;
    ULONG len;

    if (!desc_ok(desc, offset + sizeof(handle)))
        return FALSE;
    memcpy(&handle, (const char *)desc + offset, sizeof(handle));
    if (!fn) {
        if (!(fn = (query_object_fn)(void *)GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "NtQueryObject")))
            return FALSE;
        __atomic_store_n(&query, fn, __ATOMIC_RELEASE);
    }
    if (!handle || fn(handle, PROXY_OBJECT_TYPE_INFORMATION, &info, sizeof(info), NULL))
        return FALSE;
    len = info.name.Length;
    if ((char *)info.name.Buffer < info.bytes || len > sizeof(info) ||
        (char *)info.name.Buffer + len > info.bytes + sizeof(info))
        return FALSE;
    return same_name(info.name.Buffer, len, resource) || same_name(info.name.Buffer, len, sync);
}

/* kmtshim-only names, with the exact argument count: on i386 the callee
 * pops its arguments (stdcall), so a wrong count breaks the caller's
 * stack.  One descriptor, or two arguments (routing.txt "args2":
 * Get/SetProcessSchedulingPriorityClass). */
typedef NTSTATUS (APIENTRY *d3dkmt_fn2)(void *arg0, void *arg1);

#define KMT_PROXY_SHIM(name)                                                \
    NTSTATUS APIENTRY shim_D3DKMT##name(void *desc);                        \
    NTSTATUS APIENTRY shim_D3DKMT##name(void *desc)                         \
    {                                                                       \
        static d3dkmt_fn slot;                                              \
        d3dkmt_fn fn = resolve_shim("D3DKMT" #name, &slot);                 \
        if (!fn)                                                            \
            return STATUS_NOT_SUPPORTED;                                    \
        return fn(desc);                                                    \
    }

#define KMT_PROXY_SHIM2(name)                                               \
    NTSTATUS APIENTRY shim_D3DKMT##name(void *arg0, void *arg1);            \
    NTSTATUS APIENTRY shim_D3DKMT##name(void *arg0, void *arg1)             \
    {                                                                       \
        static d3dkmt_fn slot;                                              \
        d3dkmt_fn fn = resolve_shim("D3DKMT" #name, &slot);                 \
        if (!fn)                                                            \
            return STATUS_NOT_SUPPORTED;                                    \
        return ((d3dkmt_fn2)(void *)fn)(arg0, arg1);                        \
    }

/* A kmtshim-only name that returns a BOOLEAN and takes nothing
 * (routing.txt "bool"): FALSE when kmtshim cannot answer, where the
 * NTSTATUS of a missing function would read as TRUE. */
#define KMT_PROXY_SHIM_BOOL(name)                                           \
    BOOLEAN APIENTRY shim_D3DKMT##name(void);                               \
    BOOLEAN APIENTRY shim_D3DKMT##name(void)                                \
    {                                                                       \
        static d3dkmt_fn slot;                                              \
        d3dkmt_fn fn = resolve_shim("D3DKMT" #name, &slot);                 \
        if (!fn)                                                            \
            return FALSE;                                                   \
        return ((BOOLEAN (APIENTRY *)(void))(void *)fn)();                  \
    }

/* Both have it: kmtshim answers when `shims` holds, else Wine. */
#define KMT_ROUTE_BY(name, shims)                                           \
    NTSTATUS APIENTRY px_D3DKMT##name(void *desc);                          \
    NTSTATUS APIENTRY route_D3DKMT##name(void *desc);                       \
    NTSTATUS APIENTRY route_D3DKMT##name(void *desc)                        \
    {                                                                       \
        static d3dkmt_fn fn;                                                \
        if (shims)                                                          \
            return call_shim("D3DKMT" #name, &fn, desc);                    \
        return px_D3DKMT##name(desc);                                       \
    }

/* The owner of the handle at `offset` decides. */
#define KMT_ROUTE_HANDLE(name, offset) KMT_ROUTE_BY(name, shim_owns(desc, offset))
/* The owner of the first handle of the array at `offset`. */
#define KMT_ROUTE_HANDLE_PTR(name, offset) KMT_ROUTE_BY(name, shim_owns_ptr(desc, offset))
/* The owner of the adapter whose LUID is at `offset`. */
#define KMT_ROUTE_LUID_AT(name, offset) KMT_ROUTE_BY(name, shim_knows_luid(desc, offset))

/* Both have it: kmtshim first; Wine answers when `to_wine` holds for
 * kmtshim's `status` (the rules below say when). */
#define KMT_ROUTE_SHIM_FIRST(name, to_wine)                                 \
    NTSTATUS APIENTRY px_D3DKMT##name(void *desc);                          \
    NTSTATUS APIENTRY route_D3DKMT##name(void *desc);                       \
    NTSTATUS APIENTRY route_D3DKMT##name(void *desc)                        \
    {                                                                       \
        static d3dkmt_fn fn;                                                \
        NTSTATUS status = call_shim("D3DKMT" #name, &fn, desc);             \
        if (!(to_wine))                                                     \
            return status;                                                  \
        return wine_answer(px_D3DKMT##name(desc), status);                  \
    }

/* Wine when kmtshim does not succeed on a readable descriptor (a LUID,
 * display, DC or path kmtshim maps to none of its adapters).  A bad
 * descriptor keeps kmtshim's answer. */
#define KMT_ROUTE_FIRST(name) \
    KMT_ROUTE_SHIM_FIRST(name, status && desc_ok(desc, sizeof(LUID)))

/* Opens by a global handle (routing.txt "global@N"): the global handle's
 * index decides, as for local handles (both sides use Windows' layout with
 * low bits 2, Wine's from index 0, kmtshim's broker's from 2^23). */
#define KMT_ROUTE_GLOBAL(name, offset) KMT_ROUTE_HANDLE(name, offset)

/* An NT name (routing.txt "nt"): Wine when kmtshim says the name is not
 * one of its own. */
#define KMT_ROUTE_NT(name) \
    KMT_ROUTE_SHIM_FIRST(name, not_shims_nt(status) && desc_ok(desc, sizeof(HANDLE)))

/* An NT handle at `offset` (routing.txt "nthandle@N"): a wineserver D3DKMT
 * share (Wine 10.15 on) goes to Wine; any other handle to kmtshim first, and
 * to Wine when kmtshim says it is not one of its NT handles. */
#define KMT_ROUTE_NT_HANDLE(name, offset)                                   \
    NTSTATUS APIENTRY px_D3DKMT##name(void *desc);                          \
    NTSTATUS APIENTRY route_D3DKMT##name(void *desc);                       \
    NTSTATUS APIENTRY route_D3DKMT##name(void *desc)                        \
    {                                                                       \
        static d3dkmt_fn fn;                                                \
        NTSTATUS status;                                                    \
        if (!load_shim() || wine_nt_share(desc, offset))                    \
            return px_D3DKMT##name(desc);                                   \
        status = call_shim("D3DKMT" #name, &fn, desc);                      \
        if (!not_shims_nt(status) || !desc_ok(desc, (offset) + sizeof(HANDLE))) \
            return status;                                                  \
        return wine_answer(px_D3DKMT##name(desc), status);                  \
    }

/* ShareObjects (routing.txt "objects"): five arguments; the first object
 * handle decides, as for "handle@N". */
typedef NTSTATUS (APIENTRY *share_objects_fn)(UINT count, const D3DKMT_HANDLE *objects,
                                              void *attributes, DWORD access, HANDLE *nt_handle);

#define KMT_PROXY_SHIM_OBJECTS(name)                                        \
    NTSTATUS APIENTRY shim_D3DKMT##name(UINT count, const D3DKMT_HANDLE *objects, \
                                        void *attributes, DWORD access, HANDLE *nt_handle); \
    NTSTATUS APIENTRY shim_D3DKMT##name(UINT count, const D3DKMT_HANDLE *objects, \
                                        void *attributes, DWORD access, HANDLE *nt_handle) \
    {                                                                       \
        static d3dkmt_fn slot;                                              \
        d3dkmt_fn fn = resolve_shim("D3DKMT" #name, &slot);                 \
        if (!fn)                                                            \
            return STATUS_NOT_SUPPORTED;                                    \
        return ((share_objects_fn)(void *)fn)(count, objects, attributes, access, nt_handle); \
    }

#define KMT_ROUTE_OBJECTS(name)                                             \
    KMT_PROXY_SHIM_OBJECTS(name)                                            \
    NTSTATUS APIENTRY px_D3DKMT##name(UINT count, const D3DKMT_HANDLE *objects, \
                                      void *attributes, DWORD access, HANDLE *nt_handle); \
    NTSTATUS APIENTRY route_D3DKMT##name(UINT count, const D3DKMT_HANDLE *objects, \
                                         void *attributes, DWORD access, HANDLE *nt_handle); \
    NTSTATUS APIENTRY route_D3DKMT##name(UINT count, const D3DKMT_HANDLE *objects, \
                                         void *attributes, DWORD access, HANDLE *nt_handle) \
    {                                                                       \
        if (shim_owns_array(objects))                                       \
            return shim_D3DKMT##name(count, objects, attributes, access, nt_handle); \
        return px_D3DKMT##name(count, objects, attributes, access, nt_handle); \
    }

#include "routes.h"

BOOL WINAPI DllMain(HINSTANCE module, DWORD reason, void *reserved);

BOOL WINAPI DllMain(HINSTANCE module, DWORD reason, void *reserved)
{
    if (reason == DLL_PROCESS_ATTACH)
        DisableThreadLibraryCalls(module);
    return TRUE;
}
