/*
 * DxgkCbCreateContextAllocation / DxgkCbDestroyContextAllocation as a
 * miniport uses (and misuses) them.
 *
 * "ctxalloc" is a test miniport: the software miniport with its device and
 * context DDIs wrapped.  The wrappers remember the core's handles and the
 * callback table, make extra context allocations on request (some of them
 * deliberately never freed) and can fail a creation after allocating.  The
 * test bodies call the callbacks directly too: the DDK lets a driver free a
 * context allocation at any time after creating it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "exec_util.h"

#define MAX_TRACKED 16

static DRIVER_INITIALIZATION_DATA soft;   /* the wrapped miniport's DDIs */
static DXGKRNL_INTERFACE core;            /* the callbacks the core gave us */

/* Driver handle -> core handle, for the devices and contexts made. */
struct pair {
    HANDLE driver, core;
};

static struct {
    struct pair devices[MAX_TRACKED], contexts[MAX_TRACKED];
    unsigned ndevices, ncontexts;
    /* requests */
    unsigned forget_per_context;          /* context allocations never freed */
    unsigned forget_per_device;           /* device allocations never freed */
    bool fail_create_context, fail_create_device;
    bool create_in_destroy_context;
    /* results */
    HANDLE forgotten[MAX_TRACKED];
    unsigned nforgotten;
    NTSTATUS in_destroy_status;
} mp;

static HANDLE core_of(const struct pair *pairs, unsigned n, HANDLE driver)
{
    for (unsigned i = 0; i < n; i++)
        if (pairs[i].driver == driver)
            return pairs[i].core;
    return NULL;
}

static void track(struct pair *pairs, unsigned *n, HANDLE driver, HANDLE core_handle)
{
    if (*n < MAX_TRACKED) {
        pairs[*n].driver = driver;
        pairs[*n].core = core_handle;
        (*n)++;
    }
}

static DXGKARGCB_CREATECONTEXTALLOCATION ca_args(HANDLE core_device, HANDLE core_context)
{
    DXGKARGCB_CREATECONTEXTALLOCATION a = { 0 };

    a.hAdapter = core.DeviceHandle;
    a.hDevice = core_device;
    a.hContext = core_context;
    a.ContextAllocationFlags.SharedAcrossContexts = core_context == NULL;
    a.hDriverAllocation = (HANDLE)(uintptr_t)0xd00d;
    a.Size = 4096;
    a.Alignment = 4096;
    a.SupportedSegmentSet = 1;
    return a;
}

/* Makes a context allocation the miniport will never free. */
static NTSTATUS forget_one(HANDLE core_device, HANDLE core_context)
{
    DXGKARGCB_CREATECONTEXTALLOCATION a = ca_args(core_device, core_context);
    NTSTATUS status = core.DxgkCbCreateContextAllocation(&a);

    if (!status && mp.nforgotten < MAX_TRACKED)
        mp.forgotten[mp.nforgotten++] = a.hAllocation;
    return status;
}

static NTSTATUS APIENTRY ca_start_device(PVOID ctx, DXGK_START_INFO *start, DXGKRNL_INTERFACE *iface,
                                         ULONG *sources, ULONG *children)
{
    core = *iface;
    return soft.DxgkDdiStartDevice(ctx, start, iface, sources, children);
}

static NTSTATUS APIENTRY ca_create_device(HANDLE hAdapter, DXGKARG_CREATEDEVICE *args)
{
    HANDLE core_device = args->hDevice;
    NTSTATUS status = soft.DxgkDdiCreateDevice(hAdapter, args);

    if (status)
        return status;
    for (unsigned i = 0; i < mp.forget_per_device; i++)
        ck_assert_status(forget_one(core_device, NULL), STATUS_SUCCESS);
    if (mp.fail_create_device) {
        ck_assert_status(forget_one(core_device, NULL), STATUS_SUCCESS);
        soft.DxgkDdiDestroyDevice(args->hDevice);
        return STATUS_NO_MEMORY;
    }
    track(mp.devices, &mp.ndevices, args->hDevice, core_device);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY ca_create_context(HANDLE hDevice, DXGKARG_CREATECONTEXT *args)
{
    HANDLE core_device = core_of(mp.devices, mp.ndevices, hDevice);
    HANDLE core_context = args->hContext;
    NTSTATUS status;

    ck_assert_ptr_nonnull(core_device);
    if (mp.fail_create_context) {
        ck_assert_status(forget_one(core_device, core_context), STATUS_SUCCESS);
        return STATUS_NO_MEMORY;
    }
    if ((status = soft.DxgkDdiCreateContext(hDevice, args)))
        return status;
    for (unsigned i = 0; i < mp.forget_per_context; i++)
        ck_assert_status(forget_one(core_device, core_context), STATUS_SUCCESS);
    track(mp.contexts, &mp.ncontexts, args->hContext, core_context);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY ca_destroy_context(HANDLE hContext)
{
    HANDLE core_context = core_of(mp.contexts, mp.ncontexts, hContext);

    if (mp.create_in_destroy_context) {
        /* too late: the context (or its device) is going away */
        DXGKARGCB_CREATECONTEXTALLOCATION a = ca_args(mp.devices[0].core, core_context);
        mp.in_destroy_status = core.DxgkCbCreateContextAllocation(&a);
    }
    return soft.DxgkDdiDestroyContext(hContext);
}

static void ctxalloc_patch(DRIVER_INITIALIZATION_DATA *ddi)
{
    ddi->DxgkDdiStartDevice = ca_start_device;
    ddi->DxgkDdiCreateDevice = ca_create_device;
    ddi->DxgkDdiCreateContext = ca_create_context;
    ddi->DxgkDdiDestroyContext = ca_destroy_context;
}

/* ---- the test side ------------------------------------------------------------------ */

static D3DKMT_HANDLE adapter;

static void use_ctxalloc(void)
{
    memset(&mp, 0, sizeof(mp));
    kmt_test_register_soft_variant("ctxalloc", ctxalloc_patch, &soft);
    kmt_test_use_miniport("ctxalloc");
    setenv("WINEDEBUG", "warn+dxgk", 1);
    adapter = kmt_test_open_adapter();
    ck_assert_ptr_nonnull(core.DxgkCbCreateContextAllocation);
    ck_assert_ptr_nonnull(core.DxgkCbDestroyContextAllocation);
}

static D3DKMT_HANDLE new_device(HANDLE *core_device)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    cd.hAdapter = adapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    if (core_device)
        *core_device = mp.devices[mp.ndevices - 1].core;
    return cd.hDevice;
}

static D3DKMT_HANDLE new_context(D3DKMT_HANDLE device, HANDLE *core_context)
{
    D3DKMT_HANDLE h = kmt_exec_virtual_context(device);

    if (core_context)
        *core_context = mp.contexts[mp.ncontexts - 1].core;
    return h;
}

static NTSTATUS destroy_device(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYDEVICE dd = { h };

    return D3DKMTDestroyDevice(&dd);
}

/* How many trace lines written since kmt_test_capture_begin() contain both
 * `what` and `where`. */
static unsigned capture_end(const char *what, const char *where)
{
    return kmt_test_count_lines(kmt_test_capture_end(), what, where);
}

/* ---- the soft miniport's own per-context state ------------------------------------------ */

START_TEST(soft_save_area_is_a_context_allocation)
{
    D3DKMT_HANDLE device, ctx;
    unsigned base;

    use_ctxalloc();
    device = new_device(NULL);
    base = KmtLiveObjectCount();
    kmt_test_capture_begin();
    ctx = new_context(device, NULL);
    /* the context and the save area the miniport made for it */
    ck_assert_uint_eq(KmtLiveObjectCount(), base + 2);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    /* freed by the miniport itself: the core had nothing to clean up */
    ck_assert_uint_eq(capture_end("left context allocation", ""), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- DxgkCbCreateContextAllocation argument rules ------------------------------------------ */

START_TEST(create_rejects_bad_adapter)
{
    DXGKARGCB_CREATECONTEXTALLOCATION a;
    HANDLE core_device, core_context;
    D3DKMT_HANDLE device;
    unsigned base;

    use_ctxalloc();
    device = new_device(&core_device);
    new_context(device, &core_context);
    base = KmtLiveObjectCount();
    ck_assert_status(core.DxgkCbCreateContextAllocation(NULL), STATUS_INVALID_PARAMETER);
    a = ca_args(core_device, core_context);
    a.hAdapter = NULL;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a.hAdapter = (HANDLE)(uintptr_t)0x1234;       /* never dereferenced */
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a.hAdapter = core_device;                     /* a core object of another kind */
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    ck_assert_ptr_null(a.hAllocation);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_rejects_bad_device)
{
    DXGKARGCB_CREATECONTEXTALLOCATION a;
    HANDLE core_device, dead_device, core_context;
    D3DKMT_HANDLE device, dead;
    unsigned base;

    use_ctxalloc();
    device = new_device(&core_device);
    new_context(device, &core_context);
    dead = new_device(&dead_device);
    ck_assert_status(destroy_device(dead), STATUS_SUCCESS);
    base = KmtLiveObjectCount();
    /* the system device (NULL) is not re-created */
    a = ca_args(NULL, NULL);
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a = ca_args((HANDLE)(uintptr_t)0x5678, NULL);
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a = ca_args(core_context, NULL);
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a = ca_args(dead_device, NULL);
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_rejects_bad_context)
{
    DXGKARGCB_CREATECONTEXTALLOCATION a;
    HANDLE core_device, other_device, core_context, other_context, dead_context;
    D3DKMT_HANDLE device, other, dead;
    unsigned base;

    use_ctxalloc();
    device = new_device(&core_device);
    other = new_device(&other_device);
    new_context(device, &core_context);
    new_context(other, &other_context);
    dead = new_context(device, &dead_context);
    ck_assert_status(kmt_exec_destroy_context(dead), STATUS_SUCCESS);
    base = KmtLiveObjectCount();
    /* per-context allocations need a live context of that device */
    a = ca_args(core_device, NULL);
    a.ContextAllocationFlags.SharedAcrossContexts = 0;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a = ca_args(core_device, (HANDLE)(uintptr_t)0x9abc);
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a = ca_args(core_device, other_context);
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a = ca_args(core_device, dead_context);
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    /* SharedAcrossContexts names no context */
    a = ca_args(core_device, core_context);
    a.ContextAllocationFlags.SharedAcrossContexts = 1;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_rejects_bad_sizes_and_flags)
{
    DXGKARGCB_CREATECONTEXTALLOCATION a;
    HANDLE core_device, core_context;
    D3DKMT_HANDLE device;
    unsigned base;

    use_ctxalloc();
    device = new_device(&core_device);
    new_context(device, &core_context);
    base = KmtLiveObjectCount();
    a = ca_args(core_device, core_context);
    a.Size = 0;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a.Size = ((SIZE_T)256 << 20) + 1;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a = ca_args(core_device, core_context);
    a.Alignment = 3;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    /* alignments past the largest GPU page (2 MiB) */
    a.Alignment = 4u << 20;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a.Alignment = 1u << 31;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    a = ca_args(core_device, core_context);
    a.ContextAllocationFlags.Value |= 1u << 2;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_gives_zeroed_memory)
{
    DXGKARGCB_CREATECONTEXTALLOCATION a, big, huge;
    HANDLE core_device, core_context;
    D3DKMT_HANDLE device;
    unsigned base;

    use_ctxalloc();
    device = new_device(&core_device);
    new_context(device, &core_context);
    base = KmtLiveObjectCount();
    a = ca_args(core_device, core_context);
    a.Size = 100;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_SUCCESS);
    ck_assert_ptr_nonnull(a.hAllocation);
    ck_assert_ptr_nonnull(a.pKmtCpuAddress);
    ck_assert_uint_eq((uintptr_t)a.pKmtCpuAddress % 4096, 0);
    ck_assert_uint_eq(a.KmtGpuVirtualAddress, 0);    /* not asked for */
    for (unsigned i = 0; i < 4096; i++)
        ck_assert_uint_eq(((const unsigned char *)a.pKmtCpuAddress)[i], 0);
    memset(a.pKmtCpuAddress, 0x3c, 4096);            /* a whole page is the driver's */
    big = ca_args(core_device, NULL);
    big.Size = 3 * 65536;
    big.Alignment = 65536;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&big), STATUS_SUCCESS);
    ck_assert_uint_eq((uintptr_t)big.pKmtCpuAddress % 65536, 0);
    ck_assert_ptr_ne(big.hAllocation, a.hAllocation);
    /* the largest alignment taken, on a one-page allocation */
    huge = ca_args(core_device, NULL);
    huge.Size = 4096;
    huge.Alignment = 2u << 20;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&huge), STATUS_SUCCESS);
    ck_assert_uint_eq((uintptr_t)huge.pKmtCpuAddress % (2u << 20), 0);
    ck_assert_uint_eq(((const unsigned char *)huge.pKmtCpuAddress)[4095], 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), base + 3);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, huge.hAllocation), STATUS_SUCCESS);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, a.hAllocation), STATUS_SUCCESS);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, big.hAllocation), STATUS_SUCCESS);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(map_gpu_virtual_address)
{
    DXGKARGCB_CREATECONTEXTALLOCATION a;
    HANDLE core_device, core_context;
    D3DKMT_GETDEVICESTATE gs = { 0 };
    D3DKMT_HANDLE device, ctx;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence f;

    use_ctxalloc();
    device = new_device(&core_device);
    ctx = new_context(device, &core_context);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    a = ca_args(core_device, core_context);
    a.ContextAllocationFlags.MapGpuVirtualAddress = 1;
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_SUCCESS);
    ck_assert_uint_ne(a.KmtGpuVirtualAddress, 0);
    /* the engine reaches the memory through that address */
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_WRITE64, a.KmtGpuVirtualAddress + 8, 0xc0ffee);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, f.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(((const UINT64 *)a.pKmtCpuAddress)[1], 0xc0ffee);
    /* once destroyed the address is unmapped: using it is a GPU page fault */
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, a.hAllocation), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_WRITE64, a.KmtGpuVirtualAddress, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 2, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    gs.hDevice = device;
    gs.StateType = D3DKMT_DEVICESTATE_PAGE_FAULT;
    ck_assert_status(D3DKMTGetDeviceState(&gs), STATUS_SUCCESS);
    ck_assert_uint_eq(gs.PageFaultState.FaultedVirtualAddress, a.KmtGpuVirtualAddress);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- DxgkCbDestroyContextAllocation ------------------------------------------------------ */

START_TEST(destroy_rejects_bad_handles)
{
    DXGKARGCB_CREATECONTEXTALLOCATION a;
    HANDLE core_device, core_context;
    D3DKMT_HANDLE device;
    unsigned base;

    use_ctxalloc();
    device = new_device(&core_device);
    new_context(device, &core_context);
    base = KmtLiveObjectCount();
    a = ca_args(core_device, core_context);
    ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_SUCCESS);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, (HANDLE)(uintptr_t)0x1234),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, core_context),
                     STATUS_INVALID_PARAMETER);
    /* the right allocation through the wrong adapter handle */
    ck_assert_status(core.DxgkCbDestroyContextAllocation(NULL, a.hAllocation), STATUS_INVALID_PARAMETER);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core_device, a.hAllocation),
                     STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(KmtLiveObjectCount(), base + 1);
    /* still there: the right call frees it, a second one is refused */
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, a.hAllocation), STATUS_SUCCESS);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, a.hAllocation),
                     STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroy_any_time_while_context_lives)
{
    DXGKARGCB_CREATECONTEXTALLOCATION a;
    HANDLE core_device, core_context;
    D3DKMT_HANDLE device, ctx;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence f;

    use_ctxalloc();
    device = new_device(&core_device);
    ctx = new_context(device, &core_context);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    kmt_test_capture_begin();
    for (unsigned i = 0; i < 8; i++) {
        a = ca_args(core_device, i % 2 ? core_context : NULL);
        ck_assert_status(core.DxgkCbCreateContextAllocation(&a), STATUS_SUCCESS);
        ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, a.hAllocation),
                         STATUS_SUCCESS);
    }
    /* the context keeps working */
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, f.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_uint_eq(capture_end("left context allocation", ""), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- what the miniport forgets, the core frees ------------------------------------------- */

START_TEST(forgotten_context_allocations_freed_at_destroy_context)
{
    D3DKMT_HANDLE device, ctx;
    unsigned base;

    use_ctxalloc();
    device = new_device(NULL);
    base = KmtLiveObjectCount();
    mp.forget_per_context = 2;
    ctx = new_context(device, NULL);
    ck_assert_uint_eq(mp.nforgotten, 2);
    ck_assert_uint_eq(KmtLiveObjectCount(), base + 4);   /* context, save area, two forgotten */
    kmt_test_capture_begin();
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_uint_eq(capture_end("ctxalloc left context allocation", "of context"), 2);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    /* their handles are stale now: refused, no crash */
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, mp.forgotten[0]),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, mp.forgotten[1]),
                     STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(forgotten_allocations_freed_per_context)
{
    D3DKMT_HANDLE device, a, b;
    unsigned base;

    use_ctxalloc();
    device = new_device(NULL);
    base = KmtLiveObjectCount();
    mp.forget_per_context = 1;
    a = new_context(device, NULL);
    b = new_context(device, NULL);
    ck_assert_uint_eq(KmtLiveObjectCount(), base + 6);
    kmt_test_capture_begin();
    ck_assert_status(kmt_exec_destroy_context(a), STATUS_SUCCESS);
    ck_assert_uint_eq(capture_end("left context allocation", "of context"), 1);
    /* only A's went */
    ck_assert_uint_eq(KmtLiveObjectCount(), base + 3);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, mp.forgotten[1]), STATUS_SUCCESS);
    ck_assert_uint_eq(KmtLiveObjectCount(), base + 2);
    kmt_test_capture_begin();
    ck_assert_status(kmt_exec_destroy_context(b), STATUS_SUCCESS);
    ck_assert_uint_eq(capture_end("left context allocation", ""), 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(forgotten_device_allocation_freed_at_destroy_device)
{
    D3DKMT_HANDLE device;
    unsigned base;

    use_ctxalloc();
    base = KmtLiveObjectCount();
    mp.forget_per_device = 1;
    device = new_device(NULL);
    ck_assert_uint_eq(KmtLiveObjectCount(), base + 2);   /* device, its shared allocation */
    new_context(device, NULL);
    kmt_test_capture_begin();
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_uint_eq(capture_end("ctxalloc left context allocation", "of device"), 1);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    ck_assert_status(core.DxgkCbDestroyContextAllocation(core.DeviceHandle, mp.forgotten[0]),
                     STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(forgotten_context_allocations_freed_with_device)
{
    D3DKMT_HANDLE device;
    unsigned base;

    use_ctxalloc();
    device = new_device(NULL);
    base = KmtLiveObjectCount();
    mp.forget_per_context = 1;
    new_context(device, NULL);
    new_context(device, NULL);
    new_context(device, NULL);
    ck_assert_uint_eq(KmtLiveObjectCount(), base + 9);
    kmt_test_capture_begin();
    /* the contexts die in DestroyDevice's cascade, with what they left */
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_uint_eq(capture_end("left context allocation", "of context"), 3);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Contexts, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), base - 1);   /* the device went too */
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(failed_create_context_frees_its_allocations)
{
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
    D3DKMT_HANDLE device;
    unsigned base;

    use_ctxalloc();
    device = new_device(NULL);
    base = KmtLiveObjectCount();
    mp.fail_create_context = true;
    cv.hDevice = device;
    kmt_test_capture_begin();
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_NO_MEMORY);
    ck_assert_uint_eq(capture_end("left context allocation", "of context"), 1);
    ck_assert_uint_eq(cv.hContext, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(failed_create_device_frees_its_allocations)
{
    D3DKMT_CREATEDEVICE cd = { 0 };
    unsigned base;

    use_ctxalloc();
    base = KmtLiveObjectCount();
    mp.fail_create_device = true;
    cd.hAdapter = adapter;
    kmt_test_capture_begin();
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_NO_MEMORY);
    ck_assert_uint_eq(capture_end("left context allocation", "of device"), 1);
    ck_assert_uint_eq(cd.hDevice, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Devices, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_refused_while_context_dies)
{
    D3DKMT_HANDLE device, ctx;
    unsigned base;

    use_ctxalloc();
    device = new_device(NULL);
    base = KmtLiveObjectCount();
    mp.create_in_destroy_context = true;
    ctx = new_context(device, NULL);
    mp.in_destroy_status = STATUS_SUCCESS;
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_status(mp.in_destroy_status, STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    /* and while the device dies */
    new_context(device, NULL);
    mp.in_destroy_status = STATUS_SUCCESS;
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_status(mp.in_destroy_status, STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct churn {
    HANDLE core_device, core_context;
    unsigned failures;
};

static void *churn_thread(void *arg)
{
    struct churn *c = arg;

    for (unsigned i = 0; i < 2000; i++) {
        DXGKARGCB_CREATECONTEXTALLOCATION a = ca_args(c->core_device, i % 3 ? c->core_context : NULL);

        if (core.DxgkCbCreateContextAllocation(&a) ||
            core.DxgkCbDestroyContextAllocation(core.DeviceHandle, a.hAllocation))
            c->failures++;
    }
    return NULL;
}

START_TEST(concurrent_create_destroy)
{
    struct churn c[4];
    pthread_t t[4];
    HANDLE core_device, core_context;
    D3DKMT_HANDLE device;
    unsigned base;

    use_ctxalloc();
    device = new_device(&core_device);
    new_context(device, &core_context);
    base = KmtLiveObjectCount();
    for (unsigned i = 0; i < 4; i++) {
        c[i].core_device = core_device;
        c[i].core_context = core_context;
        c[i].failures = 0;
        ck_assert_int_eq(pthread_create(&t[i], NULL, churn_thread, &c[i]), 0);
    }
    for (unsigned i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ck_assert_uint_eq(c[i].failures, 0);
    }
    ck_assert_uint_eq(KmtLiveObjectCount(), base);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("context_alloc");
    TCase *create = tcase_create("create");
    TCase *destroy = tcase_create("destroy");
    TCase *forgotten = tcase_create("forgotten");

    tcase_set_timeout(create, 30);
    tcase_add_test(create, soft_save_area_is_a_context_allocation);
    tcase_add_test(create, create_rejects_bad_adapter);
    tcase_add_test(create, create_rejects_bad_device);
    tcase_add_test(create, create_rejects_bad_context);
    tcase_add_test(create, create_rejects_bad_sizes_and_flags);
    tcase_add_test(create, create_gives_zeroed_memory);
    tcase_add_test(create, map_gpu_virtual_address);
    suite_add_tcase(s, create);

    tcase_set_timeout(destroy, 30);
    tcase_add_test(destroy, destroy_rejects_bad_handles);
    tcase_add_test(destroy, destroy_any_time_while_context_lives);
    tcase_add_test(destroy, concurrent_create_destroy);
    suite_add_tcase(s, destroy);

    tcase_set_timeout(forgotten, 30);
    tcase_add_test(forgotten, forgotten_context_allocations_freed_at_destroy_context);
    tcase_add_test(forgotten, forgotten_allocations_freed_per_context);
    tcase_add_test(forgotten, forgotten_device_allocation_freed_at_destroy_device);
    tcase_add_test(forgotten, forgotten_context_allocations_freed_with_device);
    tcase_add_test(forgotten, failed_create_context_frees_its_allocations);
    tcase_add_test(forgotten, failed_create_device_frees_its_allocations);
    tcase_add_test(forgotten, create_refused_while_context_dies);
    suite_add_tcase(s, forgotten);
    return kmt_test_run(s);
}
