/*
 * The fake Wine 11's D3DKMT functions (wine11.h): adapters from a LUID,
 * devices, contexts, sync objects (shared by global or NT handle),
 * resources with allocations (shared the same ways), keyed mutexes.  Every
 * call it serves is counted (FakeWineCalls, FakeWineLastCall), so the test
 * sees which calls the proxy sent here; a handle it never issued, or
 * issued and freed, is STATUS_INVALID_PARAMETER, as in Wine.
 * FakeWineStubNtOpens(TRUE) turns its two opens from NT handles into
 * stubs answering STATUS_NOT_IMPLEMENTED, as Wine 10.0's are.
 */
#include "wine11.h"

static volatile LONG calls;
static const char *volatile last_call;
static volatile LONG stub_nt_opens;

LONG WINAPI FakeWineCalls(void);
const char *WINAPI FakeWineLastCall(void);
void WINAPI FakeWineStubNtOpens(BOOL on);

void WINAPI FakeWineStubNtOpens(BOOL on)
{
    InterlockedExchange(&stub_nt_opens, on != 0);
}

LONG WINAPI FakeWineCalls(void)
{
    return calls;
}

const char *WINAPI FakeWineLastCall(void)
{
    return last_call;
}

void fake_served(const char *name)
{
    last_call = name;
    InterlockedIncrement(&calls);
}

/* Defines fake_D3DKMT<name>: counts the call, then runs the body under the
 * lock with `desc` checked for NULL. */
#define FAKE_FUNCTION(name, type)                                           \
    static NTSTATUS fake_##name(type *desc);                                \
    NTSTATUS APIENTRY fake_D3DKMT##name(type *desc);                        \
    NTSTATUS APIENTRY fake_D3DKMT##name(type *desc)                         \
    {                                                                       \
        NTSTATUS status;                                                    \
        fake_served("D3DKMT" #name);                                        \
        if (!desc)                                                          \
            return STATUS_INVALID_PARAMETER;                                \
        fake_lock();                                                        \
        status = fake_##name(desc);                                         \
        fake_unlock();                                                      \
        return status;                                                      \
    }                                                                       \
    static NTSTATUS fake_##name(type *desc)

FAKE_FUNCTION(OpenAdapterFromLuid, D3DKMT_OPENADAPTERFROMLUID)
{
    struct fake_object *adapter;

    if (desc->AdapterLuid.LowPart != FAKE_LUID_LOW || desc->AdapterLuid.HighPart != FAKE_LUID_HIGH)
        return STATUS_INVALID_PARAMETER;
    if (!(adapter = fake_new(FAKE_ADAPTER, 0)))
        return STATUS_NO_MEMORY;
    desc->hAdapter = adapter->handle;
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(CloseAdapter, const D3DKMT_CLOSEADAPTER)
{
    struct fake_object *adapter = fake_get(desc->hAdapter, FAKE_ADAPTER);

    if (!adapter)
        return STATUS_INVALID_PARAMETER;
    fake_free(adapter);                  /* its devices outlive it */
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(CreateDevice, D3DKMT_CREATEDEVICE)
{
    struct fake_object *device;

    if (!fake_get(desc->hAdapter, FAKE_ADAPTER))
        return STATUS_INVALID_PARAMETER;
    if (!(device = fake_new(FAKE_DEVICE, 0)))
        return STATUS_NO_MEMORY;
    desc->hDevice = device->handle;
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(DestroyDevice, const D3DKMT_DESTROYDEVICE)
{
    struct fake_object *device = fake_get(desc->hDevice, FAKE_DEVICE);

    if (!device)
        return STATUS_INVALID_PARAMETER;
    fake_free_children(device->handle);
    fake_free(device);
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(CreateContextVirtual, D3DKMT_CREATECONTEXTVIRTUAL)
{
    struct fake_object *context;

    if (!fake_get(desc->hDevice, FAKE_DEVICE))
        return STATUS_INVALID_PARAMETER;
    if (!(context = fake_new(FAKE_CONTEXT, desc->hDevice)))
        return STATUS_NO_MEMORY;
    desc->hContext = context->handle;
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(DestroyContext, const D3DKMT_DESTROYCONTEXT)
{
    struct fake_object *context = fake_get(desc->hContext, FAKE_CONTEXT);

    if (!context)
        return STATUS_INVALID_PARAMETER;
    fake_free(context);
    return STATUS_SUCCESS;
}

/* A local object of `type` on `device` for `global` (a new reference). */
static NTSTATUS open_local(enum fake_type type, D3DKMT_HANDLE device, struct fake_global *global,
                           D3DKMT_HANDLE *handle)
{
    struct fake_object *object = fake_new(type, device);

    if (!object)
        return STATUS_NO_MEMORY;
    fake_global_ref(global);
    object->global = global;
    *handle = object->handle;
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(CreateSynchronizationObject2, D3DKMT_CREATESYNCHRONIZATIONOBJECT2)
{
    struct fake_object *sync;

    if (!fake_get(desc->hDevice, FAKE_DEVICE))
        return STATUS_INVALID_PARAMETER;
    if (!(sync = fake_new(FAKE_SYNC, desc->hDevice)))
        return STATUS_NO_MEMORY;
    if (desc->Info.Flags.Shared && !(sync->global = fake_global_new(FAKE_SYNC))) {
        fake_free(sync);
        return STATUS_NO_MEMORY;
    }
    /* NT-shared objects have no global handle */
    desc->Info.SharedHandle = sync->global && !desc->Info.Flags.NtSecuritySharing ? sync->global->handle : 0;
    desc->hSyncObject = sync->handle;
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(DestroySynchronizationObject, const D3DKMT_DESTROYSYNCHRONIZATIONOBJECT)
{
    struct fake_object *sync = fake_get(desc->hSyncObject, FAKE_SYNC);

    if (!sync)
        return STATUS_INVALID_PARAMETER;
    fake_free(sync);
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(OpenSynchronizationObject, D3DKMT_OPENSYNCHRONIZATIONOBJECT)
{
    struct fake_global *global = fake_global_get(desc->hSharedHandle, FAKE_SYNC);

    if (!global)
        return STATUS_INVALID_PARAMETER;
    return open_local(FAKE_SYNC, 0, global, &desc->hSyncObject);
}

/* The global object of `type` an NT handle shares: itself, or a shared
 * resource's companion. */
static struct fake_global *nt_object(HANDLE handle, enum fake_type type)
{
    struct fake_global *global = fake_global_from_nt(handle);

    if (global && global->type == FAKE_RESOURCE && type != FAKE_RESOURCE)
        global = type == FAKE_SYNC ? global->sync : global->mutex;
    return global && global->type == type ? global : NULL;
}

FAKE_FUNCTION(OpenSyncObjectFromNtHandle, D3DKMT_OPENSYNCOBJECTFROMNTHANDLE)
{
    struct fake_global *global;

    if (stub_nt_opens)
        return STATUS_NOT_IMPLEMENTED;
    if (!(global = nt_object(desc->hNtHandle, FAKE_SYNC)))
        return STATUS_INVALID_PARAMETER;
    return open_local(FAKE_SYNC, 0, global, &desc->hSyncObject);
}

FAKE_FUNCTION(CreateAllocation, D3DKMT_CREATEALLOCATION)
{
    struct fake_object *resource = NULL, *allocation;
    D3DKMT_HANDLE parent = desc->hDevice;

    if (!fake_get(desc->hDevice, FAKE_DEVICE) || !desc->NumAllocations || desc->NumAllocations > 16 ||
        !desc->pAllocationInfo || (desc->Flags.CreateShared && !desc->Flags.CreateResource))
        return STATUS_INVALID_PARAMETER;
    if (desc->Flags.CreateResource) {
        if (!(resource = fake_new(FAKE_RESOURCE, desc->hDevice)))
            return STATUS_NO_MEMORY;
        if (desc->Flags.CreateShared && !(resource->global = fake_global_new(FAKE_RESOURCE))) {
            fake_free(resource);
            return STATUS_NO_MEMORY;
        }
        parent = resource->handle;
    }
    for (UINT i = 0; i < desc->NumAllocations; i++) {
        if (!(allocation = fake_new(FAKE_ALLOCATION, parent))) {
            fake_free_children(parent);
            if (resource)
                fake_free(resource);
            return STATUS_NO_MEMORY;
        }
        desc->pAllocationInfo[i].hAllocation = allocation->handle;
    }
    if (resource) {
        desc->hResource = resource->handle;
        desc->hGlobalShare = resource->global && !desc->Flags.NtSecuritySharing ? resource->global->handle : 0;
    }
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(DestroyAllocation, const D3DKMT_DESTROYALLOCATION)
{
    struct fake_object *resource = NULL, *allocation;

    if (!fake_get(desc->hDevice, FAKE_DEVICE))
        return STATUS_INVALID_PARAMETER;
    if (desc->hResource && !(resource = fake_get(desc->hResource, FAKE_RESOURCE)))
        return STATUS_INVALID_PARAMETER;
    if (resource) {
        fake_free_children(resource->handle);
        fake_free(resource);
        return STATUS_SUCCESS;
    }
    if (!desc->AllocationCount || !desc->phAllocationList)
        return STATUS_INVALID_PARAMETER;
    for (UINT i = 0; i < desc->AllocationCount; i++)
        if (!fake_get(desc->phAllocationList[i], FAKE_ALLOCATION))
            return STATUS_INVALID_PARAMETER;
    for (UINT i = 0; i < desc->AllocationCount; i++)
        if ((allocation = fake_get(desc->phAllocationList[i], FAKE_ALLOCATION)))
            fake_free(allocation);
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(OpenResource, D3DKMT_OPENRESOURCE)
{
    struct fake_global *global = fake_global_get(desc->hGlobalShare, FAKE_RESOURCE);
    struct fake_object *resource, *allocation;
    NTSTATUS status;

    if (!fake_get(desc->hDevice, FAKE_DEVICE) || !global || desc->NumAllocations != 1 ||
        !desc->pOpenAllocationInfo)
        return STATUS_INVALID_PARAMETER;
    if ((status = open_local(FAKE_RESOURCE, desc->hDevice, global, &desc->hResource)))
        return status;
    resource = fake_get(desc->hResource, FAKE_RESOURCE);
    if (!(allocation = fake_new(FAKE_ALLOCATION, resource->handle))) {
        fake_free(resource);
        return STATUS_NO_MEMORY;
    }
    desc->pOpenAllocationInfo[0].hAllocation = allocation->handle;
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(CreateKeyedMutex, D3DKMT_CREATEKEYEDMUTEX)
{
    struct fake_global *global = fake_global_new(FAKE_MUTEX);
    NTSTATUS status;

    if (!global)
        return STATUS_NO_MEMORY;
    global->key = desc->InitialValue;
    status = open_local(FAKE_MUTEX, 0, global, &desc->hKeyedMutex);
    fake_global_unref(global);           /* the local handle holds it */
    if (!status)
        desc->hSharedHandle = global->handle;
    return status;
}

FAKE_FUNCTION(OpenKeyedMutex, D3DKMT_OPENKEYEDMUTEX)
{
    struct fake_global *global = fake_global_get(desc->hSharedHandle, FAKE_MUTEX);

    if (!global)
        return STATUS_INVALID_PARAMETER;
    return open_local(FAKE_MUTEX, 0, global, &desc->hKeyedMutex);
}

FAKE_FUNCTION(OpenKeyedMutexFromNtHandle, D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE)
{
    struct fake_global *global;

    if (stub_nt_opens)
        return STATUS_NOT_IMPLEMENTED;
    if (!(global = nt_object(desc->hNtHandle, FAKE_MUTEX)))
        return STATUS_INVALID_PARAMETER;
    return open_local(FAKE_MUTEX, 0, global, &desc->hKeyedMutex);
}

FAKE_FUNCTION(DestroyKeyedMutex, const D3DKMT_DESTROYKEYEDMUTEX)
{
    struct fake_object *mutex = fake_get(desc->hKeyedMutex, FAKE_MUTEX);

    if (!mutex)
        return STATUS_INVALID_PARAMETER;
    if (mutex->owner)
        mutex->global->owned = FALSE;    /* abandoned */
    fake_free(mutex);
    return STATUS_SUCCESS;
}

/* No waiting: a key that is not the released one, or an owned mutex,
 * times out at once (the test never contends). */
FAKE_FUNCTION(AcquireKeyedMutex, D3DKMT_ACQUIREKEYEDMUTEX)
{
    struct fake_object *mutex = fake_get(desc->hKeyedMutex, FAKE_MUTEX);

    if (!mutex)
        return STATUS_INVALID_PARAMETER;
    if (mutex->global->owned || mutex->global->key != desc->Key)
        return STATUS_TIMEOUT;
    mutex->global->owned = TRUE;
    mutex->owner = TRUE;
    desc->FenceValue = 0;
    return STATUS_SUCCESS;
}

FAKE_FUNCTION(ReleaseKeyedMutex, D3DKMT_RELEASEKEYEDMUTEX)
{
    struct fake_object *mutex = fake_get(desc->hKeyedMutex, FAKE_MUTEX);

    if (!mutex || !mutex->owner)
        return STATUS_INVALID_PARAMETER;
    mutex->global->owned = FALSE;
    mutex->global->key = desc->Key;
    mutex->owner = FALSE;
    return STATUS_SUCCESS;
}

/* The global object of a shared local object, or NULL. */
static struct fake_global *shared_global(D3DKMT_HANDLE handle)
{
    static const enum fake_type types[] = { FAKE_RESOURCE, FAKE_SYNC, FAKE_MUTEX };

    for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        struct fake_object *object = fake_get(handle, types[i]);

        if (object)
            return object->global;
    }
    return NULL;
}

/* ShareObjects: one object, or a resource with its keyed mutex and sync
 * object.  The NT handle is an event's: the fake's own reference keeps the
 * share for the life of the process (it cannot see CloseHandle). */
static NTSTATUS share_objects(UINT count, const D3DKMT_HANDLE *objects, HANDLE *nt_handle)
{
    struct fake_global *first, *other;
    HANDLE process = GetCurrentProcess();

    if (!count || count > 3 || !objects || !nt_handle || !(first = shared_global(objects[0])))
        return STATUS_INVALID_PARAMETER;
    if (count > 1 && first->type != FAKE_RESOURCE)
        return STATUS_INVALID_PARAMETER;
    for (UINT i = 1; i < count; i++) {
        if (!(other = shared_global(objects[i])) || other->type == FAKE_RESOURCE)
            return STATUS_INVALID_PARAMETER;
    }
    if (!first->nt_event) {
        if (!(first->nt_event = CreateEventW(NULL, TRUE, FALSE, NULL)))
            return STATUS_NO_MEMORY;
        fake_global_ref(first);
        for (UINT i = 1; i < count; i++) {
            other = shared_global(objects[i]);
            fake_global_ref(other);
            if (other->type == FAKE_SYNC)
                first->sync = other;
            else
                first->mutex = other;
        }
    }
    if (!DuplicateHandle(process, first->nt_event, process, nt_handle, 0, FALSE, DUPLICATE_SAME_ACCESS))
        return STATUS_NO_MEMORY;
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY fake_D3DKMTShareObjects(UINT count, const D3DKMT_HANDLE *objects, void *attributes,
                                          DWORD access, HANDLE *nt_handle);
NTSTATUS APIENTRY fake_D3DKMTShareObjects(UINT count, const D3DKMT_HANDLE *objects, void *attributes,
                                          DWORD access, HANDLE *nt_handle)
{
    NTSTATUS status;

    fake_served("D3DKMTShareObjects");
    fake_lock();
    status = share_objects(count, objects, nt_handle);
    fake_unlock();
    return status;
}

BOOL WINAPI DllMain(HINSTANCE module, DWORD reason, void *reserved);

BOOL WINAPI DllMain(HINSTANCE module, DWORD reason, void *reserved)
{
    if (reason == DLL_PROCESS_ATTACH)
        DisableThreadLibraryCalls(module);
    return TRUE;
}
