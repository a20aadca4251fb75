/*
 * A step that hands a call a descriptor pointer no caller could own: NULL,
 * a small integer, a non-canonical or kernel address.  The export layer
 * must refuse it with STATUS_INVALID_PARAMETER before reading it.
 */
#include "config.h"

#include "fuzz_steps.h"

typedef NTSTATUS (APIENTRY *one_desc_call)(void *desc);

#define CALL(f) { #f, (one_desc_call)(void (*)(void))f }

static const struct { const char *name; one_desc_call call; } calls[] = {
    CALL(D3DKMTEnumAdapters), CALL(D3DKMTEnumAdapters2), CALL(D3DKMTEnumAdapters3),
    CALL(D3DKMTOpenAdapterFromLuid), CALL(D3DKMTCloseAdapter), CALL(D3DKMTQueryAdapterInfo),
    CALL(D3DKMTQueryVideoMemoryInfo), CALL(D3DKMTCreateDevice), CALL(D3DKMTDestroyDevice),
    CALL(D3DKMTCreateAllocation), CALL(D3DKMTCreateAllocation2), CALL(D3DKMTDestroyAllocation),
    CALL(D3DKMTDestroyAllocation2), CALL(D3DKMTLock), CALL(D3DKMTLock2), CALL(D3DKMTUnlock),
    CALL(D3DKMTUnlock2), CALL(D3DKMTCreateContext), CALL(D3DKMTCreateContextVirtual),
    CALL(D3DKMTDestroyContext), CALL(D3DKMTGetDeviceState), CALL(D3DKMTSubmitCommand),
    CALL(D3DKMTRender), CALL(D3DKMTEscape), CALL(D3DKMTCreateSynchronizationObject),
    CALL(D3DKMTCreateSynchronizationObject2), CALL(D3DKMTDestroySynchronizationObject),
    CALL(D3DKMTSignalSynchronizationObject), CALL(D3DKMTSignalSynchronizationObject2),
    CALL(D3DKMTWaitForSynchronizationObject), CALL(D3DKMTWaitForSynchronizationObject2),
    CALL(D3DKMTSignalSynchronizationObjectFromGpu), CALL(D3DKMTSignalSynchronizationObjectFromGpu2),
    CALL(D3DKMTWaitForSynchronizationObjectFromGpu), CALL(D3DKMTSignalSynchronizationObjectFromCpu),
    CALL(D3DKMTWaitForSynchronizationObjectFromCpu), CALL(D3DKMTOpenAdapterFromGdiDisplayName),
    CALL(D3DKMTOpenAdapterFromHdc), CALL(D3DKMTOpenAdapterFromDeviceName),
    /* sharing */
    CALL(D3DKMTCreateKeyedMutex), CALL(D3DKMTCreateKeyedMutex2), CALL(D3DKMTOpenKeyedMutex),
    CALL(D3DKMTOpenKeyedMutex2), CALL(D3DKMTOpenKeyedMutexFromNtHandle), CALL(D3DKMTDestroyKeyedMutex),
    CALL(D3DKMTAcquireKeyedMutex), CALL(D3DKMTAcquireKeyedMutex2), CALL(D3DKMTReleaseKeyedMutex),
    CALL(D3DKMTReleaseKeyedMutex2), CALL(D3DKMTQueryResourceInfo), CALL(D3DKMTOpenResource),
    CALL(D3DKMTOpenResource2), CALL(D3DKMTQueryResourceInfoFromNtHandle), CALL(D3DKMTOpenResourceFromNtHandle),
    CALL(D3DKMTOpenNtHandleFromName), CALL(D3DKMTOpenSynchronizationObject),
    CALL(D3DKMTOpenSyncObjectFromNtHandle), CALL(D3DKMTOpenSyncObjectFromNtHandle2),
    CALL(D3DKMTOpenSyncObjectNtHandleFromName),
};

void step_bad_desc(struct fuzz_prog *p)
{
    static const uintptr_t bad[] = {
        0, 1, 0xfff0, 0xdeadbeefdeadbeefull, 0x800000000000ull, 0xffff800000000000ull,
        UINTPTR_MAX - 7,
    };
    unsigned which = fuzz_u8(&p->in) % (sizeof(calls) / sizeof(calls[0]));
    uintptr_t desc = bad[fuzz_u8(&p->in) % (sizeof(bad) / sizeof(bad[0]))];
    NTSTATUS s = calls[which].call((void *)desc);

    /* a process start that ran out of memory (out of memory armed after a
     * shutdown) fails every call first, as kmtshim.h says */
    if (s != STATUS_INVALID_PARAMETER && s != STATUS_NO_MEMORY && s != STATUS_INSUFFICIENT_RESOURCES)
        fuzz_finding("%s(%#llx) returned %#x, not STATUS_INVALID_PARAMETER", calls[which].name,
                     (unsigned long long)desc, (unsigned)s);
}
