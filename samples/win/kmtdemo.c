/*
 * kmtdemo.exe: a Windows program that talks to the graphics kernel through
 * D3DKMT, the way a user-mode driver does, and prints what happened.  Under
 * Wine it reaches kmtshim (kmtshim.dll, or gdi32 through the proxy).
 *
 *   enumerate adapters -> open the best one (a GPU, else the software
 *   adapter) -> create a device -> a resource with allocations -> lock one,
 *   write, read back -> GPU work: a context, a command buffer that fills
 *   memory and signals a monitored fence, an async wait on a Win32 event,
 *   the result read back -> destroy everything
 *
 * The GPU work runs on the software adapter: its engine's command format
 * (kmtsoft.h) is the one this program knows.
 *
 * Exit status 0 and a last line "kmtdemo: OK" when every step worked.
 */
#include <stdio.h>
#include <string.h>

#include "kmtshim/d3dkmthk.h"
#include "kmtshim/kmtsoft.h"

#define MAX_ADAPTERS 34
#define SOFT_SIZES { 0x10000, 0x1000 }   /* the software adapter's two allocations */

static int failures;

static const char *status_name(NTSTATUS s)
{
    switch ((ULONG)s) {
    case 0: return "STATUS_SUCCESS";
    case 0xc000000d: return "STATUS_INVALID_PARAMETER";
    case 0xc0000008: return "STATUS_INVALID_HANDLE";
    case 0xc00000bb: return "STATUS_NOT_SUPPORTED";
    case 0xc0000017: return "STATUS_NO_MEMORY";
    case 0xc0000023: return "STATUS_BUFFER_TOO_SMALL";
    case 0xc0000135: return "STATUS_DLL_NOT_FOUND";
    default: return "an error";
    }
}

/* Prints a failed step and counts it; returns whether it succeeded. */
static BOOL step(const char *what, NTSTATUS s)
{
    if (s) {
        printf("  %s failed: %#lx (%s)\n", what, (unsigned long)s, status_name(s));
        failures++;
    }
    return !s;
}

static void print_size(const char *label, UINT64 bytes)
{
    if (bytes >= (1ull << 30))
        printf("%s%.1f GiB", label, bytes / (double)(1ull << 30));
    else if (bytes >= (1ull << 20))
        printf("%s%.1f MiB", label, bytes / (double)(1ull << 20));
    else
        printf("%s%llu KiB", label, bytes >> 10);
}

static NTSTATUS query(D3DKMT_HANDLE adapter, KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { adapter, type, data, size };

    return D3DKMTQueryAdapterInfo(&q);
}

struct adapter {
    D3DKMT_ADAPTERINFO info;
    D3DKMT_ADAPTERTYPE type;
    D3DKMT_DEVICE_IDS ids;
    D3DKMT_DRIVERVERSION version;
};

static void describe(unsigned index, struct adapter *a)
{
    D3DKMT_QUERY_DEVICE_IDS ids = { 0 };

    a->type.Value = 0;
    a->version = 0;
    memset(&a->ids, 0, sizeof(a->ids));
    query(a->info.hAdapter, KMTQAITYPE_ADAPTERTYPE, &a->type, sizeof(a->type));
    query(a->info.hAdapter, KMTQAITYPE_DRIVERVERSION, &a->version, sizeof(a->version));
    if (!query(a->info.hAdapter, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids, sizeof(ids)))
        a->ids = ids.DeviceIds;
    printf("  [%u] handle %#x  LUID %08lx:%08lx  PCI %04x:%04x  %s%s  WDDM %d.%d\n", index,
           a->info.hAdapter, (unsigned long)a->info.AdapterLuid.HighPart,
           (unsigned long)a->info.AdapterLuid.LowPart, a->ids.VendorID, a->ids.DeviceID,
           a->type.SoftwareDevice ? "software" : "hardware", a->type.RenderSupported ? ", render" : "",
           a->version / 1000, a->version % 1000 / 100);
}

static BOOL is_soft(const struct adapter *a)
{
    return a->ids.VendorID == KMT_SOFT_VENDOR_ID && a->ids.DeviceID == KMT_SOFT_DEVICE_ID;
}

/* A GPU that renders beats the software adapter; the first of each kind wins. */
static int pick_best(const struct adapter *a, unsigned count)
{
    int best = -1;

    for (unsigned i = 0; i < count; i++) {
        if (!a[i].type.RenderSupported)
            continue;
        if (best < 0 || (a[best].type.SoftwareDevice && !a[i].type.SoftwareDevice))
            best = (int)i;
    }
    return best;
}

/* A resource and its allocations: driver-private ones on the software
 * adapter (its private format), a standard existing-heap one elsewhere. */
static NTSTATUS create_resource(D3DKMT_HANDLE device, BOOL soft, void *heap, D3DKMT_HANDLE *resource,
                                D3DKMT_HANDLE *allocs, UINT64 *sizes, UINT *count)
{
    static const UINT64 soft_sizes[] = SOFT_SIZES;
    KMT_SOFT_ALLOCATION_DESC desc[2];
    D3DDDI_ALLOCATIONINFO info[2];
    D3DKMT_CREATESTANDARDALLOCATION standard = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS s;

    memset(info, 0, sizeof(info));
    ca.hDevice = device;
    ca.Flags.CreateResource = 1;
    ca.pAllocationInfo = info;
    if (soft) {
        *count = 2;
        for (UINT i = 0; i < 2; i++) {
            KMT_SOFT_ALLOCATION_DESC d = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION,
                                           soft_sizes[i], 0, 0 };
            desc[i] = d;
            info[i].pPrivateDriverData = &desc[i];
            info[i].PrivateDriverDataSize = sizeof(desc[i]);
            sizes[i] = soft_sizes[i];
        }
    } else {
        *count = 1;
        standard.Type = D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP;
        standard.ExistingHeapData.Size = 0x10000;
        info[0].pSystemMem = heap;
        ca.Flags.ExistingSysMem = 1;
        ca.Flags.StandardAllocation = 1;
        ca.pStandardAllocation = &standard;
        sizes[0] = 0x10000;
    }
    ca.NumAllocations = *count;
    if ((s = D3DKMTCreateAllocation(&ca)))
        return s;
    *resource = ca.hResource;
    for (UINT i = 0; i < *count; i++)
        allocs[i] = info[i].hAllocation;
    return STATUS_SUCCESS;
}

/* Lock2, fill with a pattern, unlock, lock again and compare. */
static void write_read_back(D3DKMT_HANDLE device, D3DKMT_HANDLE alloc, UINT64 size)
{
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { device, alloc };
    BOOL same = TRUE;
    NTSTATUS s;

    lock.hDevice = device;
    lock.hAllocation = alloc;
    s = D3DKMTLock2(&lock);

    if (s == STATUS_NOT_SUPPORTED) {
        printf("lock:     not available on this adapter (STATUS_NOT_SUPPORTED)\n");
        return;
    }
    if (!step("Lock2", s))
        return;
    for (UINT64 i = 0; i < size; i++)
        ((BYTE *)lock.pData)[i] = (BYTE)(i * 31 + 7);
    step("Unlock2", D3DKMTUnlock2(&unlock));
    lock.pData = NULL;
    if (!step("Lock2 again", D3DKMTLock2(&lock)))
        return;
    for (UINT64 i = 0; i < size; i++)
        same &= ((BYTE *)lock.pData)[i] == (BYTE)(i * 31 + 7);
    step("Unlock2", D3DKMTUnlock2(&unlock));
    printf("lock:     allocation %#x mapped at %p, wrote %llu bytes, read back %s\n", alloc,
           lock.pData, size, same ? "identical" : "DIFFERENT");
    if (!same)
        failures++;
}

/* ---- GPU work ------------------------------------------------------------------ */

#define FILL_BYTES 4096
#define FILL_VALUE 0xc0ffee11u
#define WAIT_MS 5000

/* A driver-private allocation of the software adapter with its GPU VA. */
static NTSTATUS gpu_alloc(D3DKMT_HANDLE device, UINT size, D3DKMT_HANDLE *handle, D3DGPU_VIRTUAL_ADDRESS *va)
{
    KMT_SOFT_ALLOCATION_DESC desc = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, size, 0, 0 };
    D3DDDI_ALLOCATIONINFO2 info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS s;

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo2 = &info;
    s = D3DKMTCreateAllocation2(&ca);
    *handle = info.hAllocation;
    *va = info.GpuVirtualAddress;
    return s;
}

static void gpu_free(D3DKMT_HANDLE device, D3DKMT_HANDLE handle)
{
    D3DKMT_DESTROYALLOCATION2 da = { 0 };

    if (!handle)
        return;
    da.hDevice = device;
    da.phAllocationList = &handle;
    da.AllocationCount = 1;
    step("DestroyAllocation2", D3DKMTDestroyAllocation2(&da));
}

/* The command buffer: FILL the target, then SIGNAL_FENCE 1. */
static UINT write_commands(BYTE *at, D3DGPU_VIRTUAL_ADDRESS target, D3DGPU_VIRTUAL_ADDRESS fence)
{
    KMT_SOFT_CMD_FILL fill = { { KMT_SOFT_OP_FILL, sizeof(fill) }, target, FILL_BYTES, FILL_VALUE, 0 };
    KMT_SOFT_CMD_FENCE signal = { { KMT_SOFT_OP_SIGNAL_FENCE, sizeof(signal) }, fence, 1 };

    memcpy(at, &fill, sizeof(fill));
    memcpy(at + sizeof(fill), &signal, sizeof(signal));
    return sizeof(fill) + sizeof(signal);
}

/* Lock2 the target and count the words the GPU wrote. */
static UINT read_back(D3DKMT_HANDLE device, D3DKMT_HANDLE target)
{
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { device, target };
    UINT good = 0;

    lock.hDevice = device;
    lock.hAllocation = target;
    if (!step("Lock2 (read back)", D3DKMTLock2(&lock)))
        return 0;
    for (UINT i = 0; i < FILL_BYTES / 4; i++)
        good += ((const UINT *)lock.pData)[i] == FILL_VALUE;
    step("Unlock2", D3DKMTUnlock2(&unlock));
    return good;
}

struct gpu_objects {
    D3DKMT_HANDLE ctx, target, cmdbuf, fence;
    D3DGPU_VIRTUAL_ADDRESS target_va, cmdbuf_va, fence_va;
    const volatile UINT64 *fence_cpu;
    BYTE *commands;
    HANDLE event;
};

static BOOL gpu_setup(D3DKMT_HANDLE device, struct gpu_objects *g)
{
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    D3DKMT_LOCK2 lock = { 0 };

    cv.hDevice = device;
    if (!step("CreateContextVirtual", D3DKMTCreateContextVirtual(&cv)))
        return FALSE;
    g->ctx = cv.hContext;
    printf("context:  %#x (GPU virtual addressing, engine 0)\n", g->ctx);
    if (!step("CreateAllocation2 (target)", gpu_alloc(device, FILL_BYTES, &g->target, &g->target_va)) ||
        !step("CreateAllocation2 (commands)", gpu_alloc(device, 4096, &g->cmdbuf, &g->cmdbuf_va)))
        return FALSE;
    lock.hDevice = device;
    lock.hAllocation = g->cmdbuf;
    if (!step("Lock2 (commands)", D3DKMTLock2(&lock)))
        return FALSE;
    g->commands = lock.pData;
    cs.hDevice = device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    if (!step("CreateSynchronizationObject2", D3DKMTCreateSynchronizationObject2(&cs)))
        return FALSE;
    g->fence = cs.hSyncObject;
    g->fence_cpu = cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
    g->fence_va = cs.Info.MonitoredFence.FenceValueGPUVirtualAddress;
    printf("fence:    %#x, a monitored fence at value %llu (CPU VA %p, GPU VA %#llx)\n", g->fence,
           (unsigned long long)*g->fence_cpu, (const void *)g->fence_cpu, (unsigned long long)g->fence_va);
    g->event = CreateEventW(NULL, TRUE, FALSE, NULL);
    return g->event != NULL;
}

/* Arm an async wait for fence value 1 on a Win32 event, submit, wait. */
static void gpu_run(struct gpu_objects *g, D3DKMT_HANDLE device)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };
    D3DKMT_SUBMITCOMMAND sc = { 0 };
    LARGE_INTEGER freq, t0, t1;
    UINT64 one = 1;
    UINT good;
    DWORD r;

    w.hDevice = device;
    w.ObjectCount = 1;
    w.ObjectHandleArray = &g->fence;
    w.FenceValueArray = &one;
    w.hAsyncEvent = g->event;
    if (!step("WaitForSynchronizationObjectFromCpu", D3DKMTWaitForSynchronizationObjectFromCpu(&w)))
        return;
    printf("wait:     fence >= 1 armed on a Win32 event; the event is %s\n",
           WaitForSingleObject(g->event, 0) == WAIT_TIMEOUT ? "not set yet" : "SET TOO EARLY");

    sc.Commands = g->cmdbuf_va;
    sc.CommandLength = write_commands(g->commands, g->target_va, g->fence_va);
    sc.BroadcastContextCount = 1;
    sc.BroadcastContext[0] = g->ctx;
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&t0);
    if (!step("SubmitCommand", D3DKMTSubmitCommand(&sc)))
        return;
    printf("submit:   %u bytes: FILL %u bytes with %#x at GPU VA %#llx, SIGNAL_FENCE 1\n",
           sc.CommandLength, FILL_BYTES, FILL_VALUE, (unsigned long long)g->target_va);
    r = WaitForSingleObject(g->event, WAIT_MS);
    QueryPerformanceCounter(&t1);
    if (r != WAIT_OBJECT_0) {
        printf("  the event was not set within %u ms\n", WAIT_MS);
        failures++;
        return;
    }
    printf("signaled: WaitForSingleObject -> WAIT_OBJECT_0, %.2f ms after the submission; fence value %llu\n",
           (t1.QuadPart - t0.QuadPart) * 1000.0 / freq.QuadPart, (unsigned long long)*g->fence_cpu);
    good = read_back(device, g->target);
    printf("result:   %u of %u words read back through Lock2 are %#x\n", good, FILL_BYTES / 4, FILL_VALUE);
    if (*g->fence_cpu != 1 || good != FILL_BYTES / 4)
        failures++;
}

static void gpu_teardown(struct gpu_objects *g, D3DKMT_HANDLE device)
{
    if (g->fence) {
        D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { g->fence };
        step("DestroySynchronizationObject", D3DKMTDestroySynchronizationObject(&d));
    }
    if (g->ctx) {
        D3DKMT_DESTROYCONTEXT dc = { g->ctx };
        step("DestroyContext", D3DKMTDestroyContext(&dc));
    }
    if (g->commands) {
        D3DKMT_UNLOCK2 unlock = { device, g->cmdbuf };
        step("Unlock2", D3DKMTUnlock2(&unlock));
    }
    gpu_free(device, g->cmdbuf);
    gpu_free(device, g->target);
    if (g->event)
        CloseHandle(g->event);
}

static void gpu_work(D3DKMT_HANDLE device)
{
    struct gpu_objects g;

    memset(&g, 0, sizeof(g));
    if (gpu_setup(device, &g))
        gpu_run(&g, device);
    gpu_teardown(&g, device);
}

/* The software adapter among the enumerated ones, opened by LUID; 0 if none. */
static D3DKMT_HANDLE open_soft_adapter(const struct adapter *a, unsigned count)
{
    D3DKMT_OPENADAPTERFROMLUID open = { { 0, 0 }, 0 };

    for (unsigned i = 0; i < count; i++) {
        if (a[i].ids.VendorID != KMT_SOFT_VENDOR_ID || a[i].ids.DeviceID != KMT_SOFT_DEVICE_ID)
            continue;
        open.AdapterLuid = a[i].info.AdapterLuid;
        return step("OpenAdapterFromLuid (software)", D3DKMTOpenAdapterFromLuid(&open)) ? open.hAdapter : 0;
    }
    return 0;
}

/* On the picked device when it is the software adapter's, else on a device
 * of the software adapter made for it. */
static void gpu_work_on_soft(D3DKMT_HANDLE device, BOOL picked_soft, const struct adapter *a, unsigned count)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    if (picked_soft) {
        gpu_work(device);
        return;
    }
    if (!(cd.hAdapter = open_soft_adapter(a, count))) {
        printf("gpu work: skipped, no software adapter (its engine's commands are the ones this demo knows)\n");
        return;
    }
    if (step("CreateDevice (software)", D3DKMTCreateDevice(&cd))) {
        D3DKMT_DESTROYDEVICE dd = { cd.hDevice };

        printf("gpu work: on the software adapter, device %#x\n", cd.hDevice);
        gpu_work(cd.hDevice);
        step("DestroyDevice", D3DKMTDestroyDevice(&dd));
    }
    {
        D3DKMT_CLOSEADAPTER c = { cd.hAdapter };
        step("CloseAdapter", D3DKMTCloseAdapter(&c));
    }
}

static UINT64 usage(D3DKMT_HANDLE adapter)
{
    D3DKMT_QUERYVIDEOMEMORYINFO q = { 0 };

    q.hProcess = GetCurrentProcess();
    q.hAdapter = adapter;
    return D3DKMTQueryVideoMemoryInfo(&q) ? 0 : q.CurrentUsage;
}

int main(void)
{
    struct adapter adapters[MAX_ADAPTERS];
    D3DKMT_ADAPTERINFO info[MAX_ADAPTERS];
    D3DKMT_ENUMADAPTERS2 e = { MAX_ADAPTERS, info };
    D3DKMT_OPENADAPTERFROMLUID open = { { 0, 0 }, 0 };
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_QUERYVIDEOMEMORYINFO budget = { 0 };
    D3DKMT_HANDLE resource = 0, allocs[2] = { 0 };
    UINT64 sizes[2] = { 0 };
    UINT count = 0;
    void *heap;
    int best;

    setvbuf(stdout, NULL, _IONBF, 0);
    printf("kmtdemo: D3DKMT from a Windows program\n");
    if (!step("EnumAdapters2", D3DKMTEnumAdapters2(&e)))
        return 1;
    printf("adapters: %lu\n", (unsigned long)e.NumAdapters);
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        adapters[i].info = info[i];
        describe(i, &adapters[i]);
    }
    if ((best = pick_best(adapters, e.NumAdapters)) < 0) {
        printf("no adapter renders\n");
        return 1;
    }
    /* open it again by LUID, the way a runtime does, and close the enumeration's handles */
    open.AdapterLuid = adapters[best].info.AdapterLuid;
    step("OpenAdapterFromLuid", D3DKMTOpenAdapterFromLuid(&open));
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        D3DKMT_CLOSEADAPTER c = { info[i].hAdapter };
        step("CloseAdapter", D3DKMTCloseAdapter(&c));
    }
    printf("opened:   adapter %d (%s) as %#x\n", best,
           adapters[best].type.SoftwareDevice ? "the software adapter: no GPU found" : "a GPU",
           open.hAdapter);

    budget.hAdapter = open.hAdapter;
    if (!D3DKMTQueryVideoMemoryInfo(&budget)) {
        print_size("budget:   ", budget.Budget);
        print_size(", in use ", budget.CurrentUsage);
        printf("\n");
    }

    cd.hAdapter = open.hAdapter;
    if (step("CreateDevice", D3DKMTCreateDevice(&cd)))
        printf("device:   %#x\n", cd.hDevice);

    heap = VirtualAlloc(NULL, 0x10000, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
    if (cd.hDevice && step("CreateAllocation", create_resource(cd.hDevice, adapters[best].type.SoftwareDevice,
                                                              heap, &resource, allocs, sizes, &count))) {
        printf("resource: %#x with %u allocation%s:", resource, count, count > 1 ? "s" : "");
        for (UINT i = 0; i < count; i++) {
            printf(" %#x", allocs[i]);
            print_size(" (", sizes[i]);
            printf(")%s", i + 1 < count ? "," : "\n");
        }
        print_size("usage:    ", usage(open.hAdapter));
        printf(" of video memory in use now\n");
        write_read_back(cd.hDevice, allocs[0], sizes[0]);

        {
            D3DKMT_DESTROYALLOCATION da = { cd.hDevice, resource, NULL, 0 };
            step("DestroyAllocation", D3DKMTDestroyAllocation(&da));
        }
    }
    if (cd.hDevice)
        gpu_work_on_soft(cd.hDevice, is_soft(&adapters[best]), adapters, e.NumAdapters);
    if (cd.hDevice) {
        D3DKMT_DESTROYDEVICE dd = { cd.hDevice };
        step("DestroyDevice", D3DKMTDestroyDevice(&dd));
    }
    print_size("usage:    ", usage(open.hAdapter));
    printf(" after destroying the resource and the device\n");
    {
        D3DKMT_CLOSEADAPTER c = { open.hAdapter };
        step("CloseAdapter", D3DKMTCloseAdapter(&c));
    }
    VirtualFree(heap, 0, MEM_RELEASE);
    printf("destroyed: context, fence, allocations, resource, device, adapter handle\n");
    printf("kmtdemo: %s\n", failures ? "FAILED" : "OK");
    return failures ? 1 : 0;
}
