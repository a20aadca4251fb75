/*
 * Keyed-mutex thunks: create, open (by global handle and by NT handle),
 * destroy, acquire and release, each with its 2 form (runtime data).
 */
#include <stdint.h>

#include "thunk.h"
#include "dxgkrnl/keyed_mutex.h"
#include "dxgkrnl/keyed_mutex_fast.h"

/* Runtime data: a size with a buffer that cannot be the caller's (NULL
 * included) is refused before the core sees it. */
static bool runtime_ok(const void *data, UINT size)
{
    return !size || (size <= DXGK_KEYED_MUTEX_MAX_RUNTIME && kmt_user_ptr_ok(data, size));
}

NTSTATUS APIENTRY D3DKMTCreateKeyedMutex(D3DKMT_CREATEKEYEDMUTEX *desc)
{
    D3DKMT_HANDLE h = 0, global = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "InitialValue %#llx\n", (unsigned long long)desc->InitialValue);
    status = dxgk_create_keyed_mutex(desc->InitialValue, NULL, 0, false, &h, &global);
    if (!status) {
        desc->hKeyedMutex = h;
        desc->hSharedHandle = global;
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTCreateKeyedMutex2(D3DKMT_CREATEKEYEDMUTEX2 *desc)
{
    D3DKMT_CREATEKEYEDMUTEX2 k;
    D3DKMT_HANDLE h = 0, global = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "InitialValue %#llx, pPrivateRuntimeData %p, PrivateRuntimeDataSize %u, Flags %#x\n",
           (unsigned long long)k.InitialValue, k.pPrivateRuntimeData, k.PrivateRuntimeDataSize,
           k.Flags.Value);
    if (k.Flags.Reserved || !runtime_ok(k.pPrivateRuntimeData, k.PrivateRuntimeDataSize))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = dxgk_create_keyed_mutex(k.InitialValue, k.pPrivateRuntimeData, k.PrivateRuntimeDataSize,
                                     k.Flags.NtSecuritySharing, &h, &global);
    if (!status) {
        desc->hKeyedMutex = h;
        desc->hSharedHandle = global;
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTOpenKeyedMutex(D3DKMT_OPENKEYEDMUTEX *desc)
{
    D3DKMT_HANDLE h = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "hSharedHandle %#x\n", desc->hSharedHandle);
    status = dxgk_open_keyed_mutex(desc->hSharedHandle, NULL, 0, &h);
    if (!status)
        desc->hKeyedMutex = h;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTOpenKeyedMutex2(D3DKMT_OPENKEYEDMUTEX2 *desc)
{
    D3DKMT_OPENKEYEDMUTEX2 k;
    D3DKMT_HANDLE h = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hSharedHandle %#x, pPrivateRuntimeData %p, PrivateRuntimeDataSize %u\n",
           k.hSharedHandle, k.pPrivateRuntimeData, k.PrivateRuntimeDataSize);
    if (!k.hSharedHandle || !runtime_ok(k.pPrivateRuntimeData, k.PrivateRuntimeDataSize))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = dxgk_open_keyed_mutex(k.hSharedHandle, k.pPrivateRuntimeData, k.PrivateRuntimeDataSize, &h);
    if (!status)
        desc->hKeyedMutex = h;           /* PrivateRuntimeDataSize is in only */
    THUNK_RETURN(status);
}

/* Natively an NT handle is a file descriptor in the HANDLE-sized field. */
NTSTATUS APIENTRY D3DKMTOpenKeyedMutexFromNtHandle(D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE *desc)
{
    D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE k;
    D3DKMT_HANDLE h = 0;
    intptr_t fd;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    fd = (intptr_t)k.hNtHandle;
    TRACE_(d3dkmt, "hNtHandle %p, pPrivateRuntimeData %p, PrivateRuntimeDataSize %u\n", k.hNtHandle,
           k.pPrivateRuntimeData, k.PrivateRuntimeDataSize);
    if (!runtime_ok(k.pPrivateRuntimeData, k.PrivateRuntimeDataSize))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if (fd < 0 || fd > INT32_MAX)
        THUNK_RETURN(STATUS_INVALID_HANDLE);
    status = dxgk_open_keyed_mutex_from_nt((int)fd, k.pPrivateRuntimeData, k.PrivateRuntimeDataSize, &h);
    if (!status)
        desc->hKeyedMutex = h;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTDestroyKeyedMutex(const D3DKMT_DESTROYKEYEDMUTEX *desc)
{
    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "hKeyedMutex %#x\n", desc->hKeyedMutex);
    THUNK_RETURN(dxgk_destroy_keyed_mutex(desc->hKeyedMutex));
}

/* The uncontended Acquire + Release pair is the hottest path of the API.
 * Its plain thunks first try the uncontended call inline, with no call
 * and no frame (dxgkrnl/keyed_mutex_fast.h): with no channel tracing,
 * one check stands for every step's trace checks.  THUNK_ENTER needs no
 * stand-in: a process that is not up (never started, torn down, a fork()
 * child) has an empty handle table, where the inline lookup finds
 * nothing.  Anything else is a tail call to the full thunk, which starts
 * over from the descriptor and costs what every thunk costs. */
static inline __attribute__((always_inline)) bool hot_untraced(void)
{
    return __builtin_expect(__atomic_load_n(&kmt_debug_quiet, __ATOMIC_RELAXED), 1);
}

/* The shared part of both full acquires; *fence is written back unless
 * the call was refused (Windows leaves it untouched then). */
static NTSTATUS acquire(D3DKMT_HANDLE h, UINT64 key, const LARGE_INTEGER *timeout, UINT64 *fence,
                        void *data, UINT size)
{
    LONGLONG t;

    TRACE_(d3dkmt, "hKeyedMutex %#x, Key %#llx, pTimeout %p, pPrivateRuntimeData %p, size %u\n", h,
           (unsigned long long)key, (const void *)timeout, data, size);
    if (timeout && !kmt_user_ptr_ok(timeout, sizeof(*timeout)))
        return STATUS_INVALID_PARAMETER;
    if (!runtime_ok(data, size))
        return STATUS_INVALID_PARAMETER;
    if (timeout) {
        t = timeout->QuadPart;
        TRACE_(d3dkmt, "timeout %lld\n", (long long)t);
    }
    return dxgk_acquire_keyed_mutex(h, key, timeout ? &t : NULL, fence, data, size);
}

static bool acquire_answered(NTSTATUS status)
{
    return status == STATUS_SUCCESS || status == STATUS_TIMEOUT || status == STATUS_ABANDONED;
}

static __attribute__((noinline)) NTSTATUS acquire_full(D3DKMT_ACQUIREKEYEDMUTEX *desc)
{
    D3DKMT_ACQUIREKEYEDMUTEX k;
    UINT64 fence = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    status = acquire(k.hKeyedMutex, k.Key, k.pTimeout, &fence, NULL, 0);
    if (acquire_answered(status))
        desc->FenceValue = fence;
    return kmt_thunk_return("D3DKMTAcquireKeyedMutex", status);
}

NTSTATUS APIENTRY D3DKMTAcquireKeyedMutex(D3DKMT_ACQUIREKEYEDMUTEX *desc)
{
    UINT64 fence;

    if (hot_untraced() && __builtin_expect(kmt_user_ptr_ok(desc, sizeof(*desc)), 1) &&
        __builtin_expect(!desc->pTimeout, 1) &&
        __builtin_expect(dxgk_keyed_mutex_take_idle(desc->hKeyedMutex, desc->Key, &fence), 1)) {
        desc->FenceValue = fence;
        return STATUS_SUCCESS;
    }
    return acquire_full(desc);
}

NTSTATUS APIENTRY D3DKMTAcquireKeyedMutex2(D3DKMT_ACQUIREKEYEDMUTEX2 *desc)
{
    D3DKMT_ACQUIREKEYEDMUTEX2 k;
    UINT64 fence = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    status = acquire(k.hKeyedMutex, k.Key, k.pTimeout, &fence, k.pPrivateRuntimeData,
                     k.PrivateRuntimeDataSize);
    if (acquire_answered(status))
        desc->FenceValue = fence;
    THUNK_RETURN(status);
}

static __attribute__((noinline)) NTSTATUS release_full(D3DKMT_RELEASEKEYEDMUTEX *desc)
{
    D3DKMT_RELEASEKEYEDMUTEX k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hKeyedMutex %#x, Key %#llx, FenceValue %#llx\n", k.hKeyedMutex,
           (unsigned long long)k.Key, (unsigned long long)k.FenceValue);
    return kmt_thunk_return("D3DKMTReleaseKeyedMutex",
                            dxgk_release_keyed_mutex(k.hKeyedMutex, k.Key, k.FenceValue, NULL, 0));
}

NTSTATUS APIENTRY D3DKMTReleaseKeyedMutex(D3DKMT_RELEASEKEYEDMUTEX *desc)
{
    D3DKMT_RELEASEKEYEDMUTEX k;

    if (hot_untraced() && __builtin_expect(kmt_user_ptr_ok(desc, sizeof(*desc)), 1)) {
        k = *desc;
        if (__builtin_expect(dxgk_keyed_mutex_give_idle(k.hKeyedMutex, k.Key, k.FenceValue), 1))
            return STATUS_SUCCESS;
    }
    return release_full(desc);
}

NTSTATUS APIENTRY D3DKMTReleaseKeyedMutex2(D3DKMT_RELEASEKEYEDMUTEX2 *desc)
{
    D3DKMT_RELEASEKEYEDMUTEX2 k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hKeyedMutex %#x, Key %#llx, FenceValue %#llx, pPrivateRuntimeData %p, size %u\n",
           k.hKeyedMutex, (unsigned long long)k.Key, (unsigned long long)k.FenceValue,
           k.pPrivateRuntimeData, k.PrivateRuntimeDataSize);
    if (!runtime_ok(k.pPrivateRuntimeData, k.PrivateRuntimeDataSize))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    THUNK_RETURN(dxgk_release_keyed_mutex(k.hKeyedMutex, k.Key, k.FenceValue, k.pPrivateRuntimeData,
                                          k.PrivateRuntimeDataSize));
}
