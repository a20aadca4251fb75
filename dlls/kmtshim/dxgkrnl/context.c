/*
 * Contexts (CreateContext, CreateContextVirtual, DestroyContext) and the
 * context allocations miniports make through DxgkCbCreateContextAllocation.
 */
#include <stdlib.h>
#include <string.h>

#include "vidsch.h"
#include "sync.h"
#include "base/kmt_debug.h"
#include "ddi.h"
#include "base/user_memory.h"

#define LEGACY_COMMAND_BUFFER_SIZE (64u * 1024u)
#define LEGACY_ALLOCATION_LIST_SIZE 256u
#define LEGACY_PATCH_LIST_SIZE 1024u
#define MAX_CONTEXT_ALLOCATION ((SIZE_T)256 << 20)
/* The largest GPU page (2 MiB): a larger alignment serves no engine and
 * would reserve (and zero) up to 2 GiB for a one-page allocation. */
#define MAX_CONTEXT_ALLOCATION_ALIGNMENT ((UINT)2 << 20)

/* Flags a program may pass; HwQueueSupported asks for hardware queues,
 * which kmtshim does not re-create. */
#define KNOWN_CONTEXT_FLAGS 0x7fu

static void context_release(struct kmt_object *obj)
{
    struct dxgk_context *ctx = (struct dxgk_context *)obj;

    free(ctx->command_buffer);
    free(ctx->allocation_list);
    free(ctx->patch_list);
    dxgk_device_put(ctx->device);
    free(ctx);
    dxgk_count_object(-1);
}

void dxgk_context_put(struct dxgk_context *ctx)
{
    kmt_object_put(&ctx->obj);
}

struct dxgk_context *dxgk_context_lookup(D3DKMT_HANDLE h)
{
    return (struct dxgk_context *)hmgr_lookup(&dxgk_process.handles, h, HMGR_TYPE_CONTEXT);
}

/* Devices' locks in address order, whatever the order of the handles: two
 * broadcasts naming contexts of the same two devices in opposite orders
 * must not take their locks in opposite orders (a lock-order inversion). */
bool dxgk_contexts_acquire(struct dxgk_context *const *ctxs, UINT n)
{
    struct dxgk_context *sorted[D3DDDI_MAX_BROADCAST_CONTEXT];

    for (UINT i = 0; i < n; i++) {
        UINT j = i;

        for (; j && (uintptr_t)sorted[j - 1]->device > (uintptr_t)ctxs[i]->device; j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = ctxs[i];
    }
    for (UINT i = 0; i < n; i++)
        kmt_rwlock_rdlock(&sorted[i]->device->rwlock);      /* read locks nest: a device twice is fine */
    for (UINT i = 0; i < n; i++)
        if (ctxs[i]->device->destroyed || ctxs[i]->destroyed) {
            for (UINT j = 0; j < n; j++)
                kmt_rwlock_unlock(&sorted[j]->device->rwlock);
            return false;
        }
    return true;
}

struct dxgk_context *dxgk_context_acquire(D3DKMT_HANDLE h)
{
    struct dxgk_context *ctx = dxgk_context_lookup(h);

    if (ctx && !dxgk_contexts_acquire(&ctx, 1)) {
        dxgk_context_put(ctx);
        return NULL;
    }
    return ctx;
}

void dxgk_context_release(struct dxgk_context *ctx)
{
    kmt_rwlock_unlock(&ctx->device->rwlock);
    dxgk_context_put(ctx);
}

static NTSTATUS alloc_legacy_buffers(struct dxgk_context *ctx, const DXGK_CONTEXTINFO *info)
{
    ctx->command_buffer_size = info->DmaBufferSize ? info->DmaBufferSize : LEGACY_COMMAND_BUFFER_SIZE;
    ctx->allocation_list_size = info->AllocationListSize ? info->AllocationListSize
                                                         : LEGACY_ALLOCATION_LIST_SIZE;
    ctx->patch_list_size = info->PatchLocationListSize ? info->PatchLocationListSize
                                                       : LEGACY_PATCH_LIST_SIZE;
    ctx->command_buffer = calloc(1, ctx->command_buffer_size);
    ctx->allocation_list = calloc(ctx->allocation_list_size, sizeof(*ctx->allocation_list));
    ctx->patch_list = calloc(ctx->patch_list_size, sizeof(*ctx->patch_list));
    return ctx->command_buffer && ctx->allocation_list && ctx->patch_list ? STATUS_SUCCESS
                                                                          : STATUS_NO_MEMORY;
}

NTSTATUS dxgk_create_context(D3DKMT_HANDLE hDevice, UINT node, UINT affinity,
                             D3DDDI_CREATECONTEXTFLAGS flags, void *private_data,
                             UINT private_size, D3DKMT_CLIENTHINT hint, bool is_virtual,
                             D3DKMT_CREATECONTEXT *out)
{
    struct dxgk_device *device = dxgk_device_acquire(hDevice);
    DXGKARG_CREATECONTEXT args = { 0 };
    struct dxgk_context *ctx = NULL;
    void *priv_copy = NULL;
    NTSTATUS status;

    if (!device)
        return STATUS_INVALID_PARAMETER;
    if (node >= device->adapter->caps.NodeCount || node >= DXGK_MAX_NODES || affinity > 1 ||
        (flags.Value & ~KNOWN_CONTEXT_FLAGS) || private_size > DXGK_MAX_PRIVATE_DATA ||
        (private_size && !private_data) || (UINT)hint >= D3DKMT_CLIENTHINT_MAX) {
        status = STATUS_INVALID_PARAMETER;
        goto out;
    }
    if (flags.HwQueueSupported || !dxgk_ddi_has_contexts(device->adapter, is_virtual)) {
        status = STATUS_NOT_SUPPORTED;
        goto out;
    }
    if (atomic_load(&device->execution_state) != D3DKMT_DEVICEEXECUTION_ACTIVE) {
        status = STATUS_DEVICE_REMOVED;
        goto out;
    }
    if ((status = dxgk_sched_start(device->adapter)))
        goto out;
    if (!(ctx = calloc(1, sizeof(*ctx))) ||
        (private_size && !(priv_copy = malloc(private_size)))) {
        free(ctx);
        status = STATUS_NO_MEMORY;
        goto out;
    }
    kmt_object_init(&ctx->obj, HMGR_TYPE_CONTEXT, context_release);
    ctx->device = device;
    kmt_object_get(&device->obj);
    ctx->node = node;
    ctx->engine_affinity = affinity;
    ctx->is_virtual = is_virtual;
    list_init(&ctx->queue);
    list_init(&ctx->active_entry);
    dxgk_count_object(+1);
    if (!(ctx->handle = hmgr_alloc(&dxgk_process.handles))) {
        context_release(&ctx->obj);
        status = STATUS_NO_MEMORY;
        goto out;
    }
    if (private_size)
        memcpy(priv_copy, private_data, private_size);

    /* Linked before the DDI so DxgkCbCreateContextAllocation sees it. */
    kmt_mutex_lock(&device->list_lock);
    list_add_tail(&device->contexts, &ctx->entry);
    kmt_mutex_unlock(&device->list_lock);

    args.hContext = ctx;
    args.NodeOrdinal = node;
    args.EngineAffinity = affinity;
    args.Flags.VirtualAddressing = is_virtual;
    args.pPrivateDriverData = priv_copy;
    args.PrivateDriverDataSize = private_size;
    status = dxgk_ddi_create_context(device, &args);
    if (!status) {
        ctx->driver_context = args.hContext;
        ctx->dma_private_size = args.ContextInfo.DmaBufferPrivateDataSize;
        if (ctx->dma_private_size > DXGK_MAX_PRIVATE_DATA) {
            ERR_(dxgk, "%s: DxgkDdiCreateContext asked %u bytes of DMA buffer private data\n",
                 device->adapter->miniport->name, ctx->dma_private_size);
            status = STATUS_UNSUCCESSFUL;
        } else if (!is_virtual) {
            status = alloc_legacy_buffers(ctx, &args.ContextInfo);
        }
        /* in/out, as dxgkrnl does, but written only where the driver
         * changed it: unchanged private data may be read-only input */
        if (!status && private_size && !kmt_user_write_back(private_data, priv_copy, private_size))
            status = STATUS_ACCESS_VIOLATION;
        if (status)
            dxgk_ddi_destroy_context(device, ctx->driver_context);
    }
    if (status) {
        kmt_mutex_lock(&device->list_lock);
        list_remove(&ctx->entry);
        kmt_mutex_unlock(&device->list_lock);
        dxgk_free_context_allocations(device->adapter, device, ctx);
        hmgr_cancel(&dxgk_process.handles, ctx->handle);
        context_release(&ctx->obj);
        goto out;
    }
    /* outputs first: once published, another thread may destroy it at once */
    out->hContext = ctx->handle;
    out->pCommandBuffer = ctx->command_buffer;
    out->CommandBufferSize = ctx->command_buffer_size;
    out->pAllocationList = ctx->allocation_list;
    out->AllocationListSize = ctx->allocation_list_size;
    out->pPatchLocationList = ctx->patch_list;
    out->PatchLocationListSize = ctx->patch_list_size;
    out->CommandBuffer = 0;
    hmgr_publish(&dxgk_process.handles, ctx->handle, &ctx->obj);
out:
    free(priv_copy);
    dxgk_device_release(device);
    return status;
}

/* Everything after the handle is gone: drain, release owned mutexes, tell
 * the miniport, free what it forgot.  Device rwlock held (either mode). */
static void context_teardown(struct dxgk_context *ctx)
{
    struct dxgk_device *device = ctx->device;

    kmt_mutex_lock(&device->list_lock);
    if (ctx->destroyed) {
        kmt_mutex_unlock(&device->list_lock);
        return;
    }
    ctx->destroyed = true;
    kmt_mutex_unlock(&device->list_lock);

    /* pfnDestroyContextCb: returns after the context's queued work ran */
    dxgk_sched_close(ctx);
    dxgk_sched_drain(ctx);
    dxgk_syncobj_context_gone(ctx);
    dxgk_ddi_destroy_context(device, ctx->driver_context);
    dxgk_free_context_allocations(device->adapter, device, ctx);

    kmt_mutex_lock(&device->list_lock);
    list_remove(&ctx->entry);
    kmt_mutex_unlock(&device->list_lock);
}

NTSTATUS dxgk_destroy_context(D3DKMT_HANDLE h)
{
    struct dxgk_context *ctx =
        (struct dxgk_context *)hmgr_remove(&dxgk_process.handles, h, HMGR_TYPE_CONTEXT);

    if (!ctx)
        return STATUS_INVALID_PARAMETER;
    kmt_rwlock_rdlock(&ctx->device->rwlock);
    context_teardown(ctx);            /* no-op if DestroyDevice got there first */
    kmt_rwlock_unlock(&ctx->device->rwlock);
    dxgk_context_put(ctx);
    return STATUS_SUCCESS;
}

/* DestroyDevice, first step: cancel what the contexts queued and let what
 * the miniport already has finish (the device rwlock is held exclusively,
 * so nothing new arrives). */
void dxgk_device_terminate_execution(struct dxgk_device *device)
{
    struct dxgk_context *ctx;

    kmt_mutex_lock(&device->list_lock);
    LIST_FOR_EACH_ENTRY(ctx, &device->contexts, struct dxgk_context, entry) {
        kmt_object_get(&ctx->obj);
        kmt_mutex_unlock(&device->list_lock);
        dxgk_sched_cancel(ctx);
        dxgk_sched_drain(ctx);
        kmt_mutex_lock(&device->list_lock);
        dxgk_context_put(ctx);   /* still listed: only teardown unlinks, under our exclusive lock */
    }
    kmt_mutex_unlock(&device->list_lock);
}

/* DestroyDevice: contexts go after allocations and resources (dxgkrnl's
 * order); the device rwlock is held exclusively. */
void dxgk_device_destroy_contexts(struct dxgk_device *device)
{
    for (;;) {
        struct dxgk_context *ctx = NULL, *it;

        kmt_mutex_lock(&device->list_lock);
        LIST_FOR_EACH_ENTRY(it, &device->contexts, struct dxgk_context, entry) {
            if (!it->destroyed) {
                ctx = it;
                kmt_object_get(&ctx->obj);
                break;
            }
        }
        kmt_mutex_unlock(&device->list_lock);
        if (!ctx)
            break;
        if (hmgr_remove(&dxgk_process.handles, ctx->handle, HMGR_TYPE_CONTEXT))
            dxgk_context_put(ctx);          /* the table's reference */
        context_teardown(ctx);
        dxgk_context_put(ctx);
    }
}

/* ---- context allocations ----------------------------------------------------- */

struct dxgk_context_allocation {
    struct list entry;                  /* adapter->context_allocations */
    struct dxgk_adapter *adapter;
    HANDLE core_device;
    HANDLE core_context;                /* NULL: shared across the device's contexts */
    HANDLE driver_allocation;
    void *memory;
    SIZE_T size;
    D3DGPU_VIRTUAL_ADDRESS gpu_va;
};

/* Is `p` one of the process's adapters?  (Compares, never dereferences.) */
static struct dxgk_adapter *adapter_of(HANDLE p)
{
    struct dxgk_adapter *a, *found = NULL;

    pthread_mutex_lock(&dxgk_process.lock);
    LIST_FOR_EACH_ENTRY(a, &dxgk_process.adapters, struct dxgk_adapter, entry)
        if ((HANDLE)a == p)
            found = a;
    pthread_mutex_unlock(&dxgk_process.lock);
    return found;
}

static struct dxgk_device *device_of(struct dxgk_adapter *adapter, HANDLE p)
{
    struct dxgk_device *d, *found = NULL;

    kmt_mutex_lock(&dxgk_process.devices_lock);
    LIST_FOR_EACH_ENTRY(d, &dxgk_process.devices, struct dxgk_device, entry)
        if ((HANDLE)d == p && d->adapter == adapter)
            found = d;
    kmt_mutex_unlock(&dxgk_process.devices_lock);
    /* a device being destroyed is off the process list but may still
     * create context state from DdiDestroyContext: refuse that */
    return found;
}

static bool context_of(struct dxgk_device *device, HANDLE p)
{
    struct dxgk_context *c;
    bool found = false;

    kmt_mutex_lock(&device->list_lock);
    LIST_FOR_EACH_ENTRY(c, &device->contexts, struct dxgk_context, entry)
        if ((HANDLE)c == p && !c->destroyed)
            found = true;
    kmt_mutex_unlock(&device->list_lock);
    return found;
}

/* Context allocations alive in the process: with none, a DestroyDevice
 * has no list to sweep. */
static atomic_uint context_allocations_live;

static void context_allocation_free(struct dxgk_context_allocation *ca)
{
    atomic_fetch_sub_explicit(&context_allocations_live, 1, memory_order_relaxed);
    dxgk_ddi_unmap_system_memory(ca->adapter, ca->gpu_va);
    free(ca->memory);
    free(ca);
    dxgk_count_object(-1);
}

static NTSTATUS APIENTRY cb_create_context_allocation(DXGKARGCB_CREATECONTEXTALLOCATION *args)
{
    struct dxgk_context_allocation *ca;
    struct dxgk_adapter *adapter;
    struct dxgk_device *device;
    size_t align;

    if (!args || !(adapter = adapter_of(args->hAdapter)))
        return STATUS_INVALID_PARAMETER;
    /* only for a (non-system) device, and a context unless shared */
    if (!args->hDevice || !(device = device_of(adapter, args->hDevice)))
        return STATUS_INVALID_PARAMETER;
    if (args->ContextAllocationFlags.SharedAcrossContexts ? args->hContext != NULL
                                                          : !context_of(device, args->hContext))
        return STATUS_INVALID_PARAMETER;
    if (args->ContextAllocationFlags.Reserved || !args->Size || args->Size > MAX_CONTEXT_ALLOCATION ||
        (args->Alignment & (args->Alignment - 1)) || args->Alignment > MAX_CONTEXT_ALLOCATION_ALIGNMENT)
        return STATUS_INVALID_PARAMETER;
    if (!(ca = calloc(1, sizeof(*ca))))
        return STATUS_NO_MEMORY;
    align = args->Alignment > 4096 ? args->Alignment : 4096;
    ca->size = (args->Size + 4095) & ~(SIZE_T)4095;   /* whole pages; the start is aligned */
    if (posix_memalign(&ca->memory, align, ca->size)) {
        free(ca);
        return STATUS_NO_MEMORY;
    }
    memset(ca->memory, 0, ca->size);
    if (args->ContextAllocationFlags.MapGpuVirtualAddress) {
        NTSTATUS status = dxgk_ddi_map_system_memory(adapter, ca->memory, ca->size, &ca->gpu_va);
        if (status) {
            free(ca->memory);
            free(ca);
            return status;
        }
    }
    ca->adapter = adapter;
    ca->core_device = args->hDevice;
    ca->core_context = args->hContext;
    ca->driver_allocation = args->hDriverAllocation;
    dxgk_count_object(+1);
    atomic_fetch_add_explicit(&context_allocations_live, 1, memory_order_relaxed);
    pthread_mutex_lock(&adapter->ctx_alloc_lock);
    list_add_tail(&adapter->context_allocations, &ca->entry);
    pthread_mutex_unlock(&adapter->ctx_alloc_lock);
    args->hAllocation = ca;
    args->pKmtCpuAddress = ca->memory;
    args->KmtGpuVirtualAddress = ca->gpu_va;
    TRACE_(dxgk, "context allocation %p: %zu bytes for context %p\n", (void *)ca, (size_t)ca->size,
           args->hContext);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY cb_destroy_context_allocation(HANDLE hAdapter, HANDLE hAllocation)
{
    struct dxgk_adapter *adapter = adapter_of(hAdapter);
    struct dxgk_context_allocation *ca, *found = NULL;

    if (!adapter || !hAllocation)
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&adapter->ctx_alloc_lock);
    LIST_FOR_EACH_ENTRY(ca, &adapter->context_allocations, struct dxgk_context_allocation, entry)
        if ((HANDLE)ca == hAllocation) {
            found = ca;
            list_remove(&ca->entry);
            break;
        }
    pthread_mutex_unlock(&adapter->ctx_alloc_lock);
    if (!found) {
        WARN_(dxgk, "unknown or already destroyed context allocation %p\n", hAllocation);
        return STATUS_INVALID_PARAMETER;
    }
    TRACE_(dxgk, "context allocation %p\n", hAllocation);
    context_allocation_free(found);
    return STATUS_SUCCESS;
}

void dxgk_free_context_allocations(struct dxgk_adapter *adapter, HANDLE core_device, HANDLE core_context)
{
    struct dxgk_context_allocation *ca, *next;
    struct list gone = LIST_INIT(gone);

    /* one made by a call that ended before ours is counted by now */
    if (!atomic_load_explicit(&context_allocations_live, memory_order_relaxed))
        return;
    pthread_mutex_lock(&adapter->ctx_alloc_lock);
    LIST_FOR_EACH_ENTRY_SAFE(ca, next, &adapter->context_allocations, struct dxgk_context_allocation, entry) {
        if (ca->core_device != core_device || (core_context && ca->core_context != core_context))
            continue;
        list_remove(&ca->entry);
        list_add_tail(&gone, &ca->entry);
    }
    pthread_mutex_unlock(&adapter->ctx_alloc_lock);
    LIST_FOR_EACH_ENTRY_SAFE(ca, next, &gone, struct dxgk_context_allocation, entry) {
        WARN_(dxgk, "%s left context allocation %p (%zu bytes) of %s %p: freeing it\n",
              adapter->miniport->name, (void *)ca, (size_t)ca->size,
              core_context ? "context" : "device", core_context ? core_context : core_device);
        list_remove(&ca->entry);
        context_allocation_free(ca);
    }
}

void dxgk_context_callbacks(DXGKRNL_INTERFACE *iface)
{
    iface->DxgkCbCreateContextAllocation = cb_create_context_allocation;
    iface->DxgkCbDestroyContextAllocation = cb_destroy_context_allocation;
}
