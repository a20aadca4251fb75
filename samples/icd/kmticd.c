/*
 * kmticd.dll: an ICD-shaped DLL whose context is a D3DKMT lifecycle (see
 * kmticd.h).  What an OpenGL ICD does in the kernel, this one does, and
 * nothing else:
 *
 *   DrvCreateContext   open the adapter by LUID, create a device, a
 *                      virtual-address context on the 3D engine, a
 *                      monitored fence and two allocations (data, commands)
 *   round trip         lock and write the data, write a fill and a fence
 *                      signal into the command allocation, submit it on the
 *                      software engine, wait on the monitored fence, lock
 *                      and check every word
 *   DrvDeleteContext   destroy all of it, close the adapter
 *
 * It prints one line per step.  One context current at a time (a sample).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmticd.h"
#include "kmtshim/kmtsoft.h"

#define ICD_EXPORT __declspec(dllexport)
#define ICD_MAGIC 0x44434955u                    /* "UICD" */
#define DATA_SIZE (64u * 1024u)
#define CMDS_SIZE 4096u
#define FILL_OFFSET 4096u
#define FILL_BYTES 8192u
#define FENCE_TIMEOUT_MS 10000u

struct icd_buffer {
    D3DKMT_HANDLE handle;
    D3DGPU_VIRTUAL_ADDRESS va;
};

struct icd_context {
    UINT magic;
    D3DKMT_HANDLE adapter, device, context, fence;
    const volatile UINT64 *fence_cpu;
    D3DGPU_VIRTUAL_ADDRESS fence_gpu;
    UINT64 fence_value;
    struct icd_buffer data, cmds;
};

static LUID adapter_luid;
static BOOL have_luid;
static struct icd_context *current;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("kmticd: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    fflush(stdout);
}

/* Prints a failed call; true when it succeeded. */
static BOOL step(const char *what, NTSTATUS status)
{
    if (status)
        say("%s failed: NTSTATUS 0x%08lx", what, (unsigned long)status);
    return !status;
}

static struct icd_context *context_of(KMTICD_DHGLRC h)
{
    struct icd_context *ctx = (struct icd_context *)h;

    return ctx && ctx->magic == ICD_MAGIC ? ctx : NULL;
}

/* ---- creation ----------------------------------------------------------------------------- */

static BOOL create_objects(struct icd_context *ctx)
{
    D3DKMT_OPENADAPTERFROMLUID oa = { 0 };
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_CREATECONTEXTVIRTUAL cc = { 0 };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };

    oa.AdapterLuid = adapter_luid;
    if (!step("D3DKMTOpenAdapterFromLuid", D3DKMTOpenAdapterFromLuid(&oa)))
        return FALSE;
    ctx->adapter = oa.hAdapter;
    cd.hAdapter = ctx->adapter;
    if (!step("D3DKMTCreateDevice", D3DKMTCreateDevice(&cd)))
        return FALSE;
    ctx->device = cd.hDevice;
    cc.hDevice = ctx->device;
    cc.ClientHint = D3DKMT_CLIENTHINT_OPENGL;
    if (!step("D3DKMTCreateContextVirtual", D3DKMTCreateContextVirtual(&cc)))
        return FALSE;
    ctx->context = cc.hContext;
    cs.hDevice = ctx->device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    if (!step("D3DKMTCreateSynchronizationObject2", D3DKMTCreateSynchronizationObject2(&cs)))
        return FALSE;
    ctx->fence = cs.hSyncObject;
    ctx->fence_cpu = cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
    ctx->fence_gpu = cs.Info.MonitoredFence.FenceValueGPUVirtualAddress;
    return ctx->fence_cpu && ctx->fence_gpu;
}

/* The data and the command allocation, with GPU virtual addresses. */
static BOOL create_buffers(struct icd_context *ctx)
{
    KMT_SOFT_ALLOCATION_DESC desc[2];
    D3DDDI_ALLOCATIONINFO2 info[2];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    static const UINT sizes[2] = { DATA_SIZE, CMDS_SIZE };

    memset(desc, 0, sizeof(desc));
    memset(info, 0, sizeof(info));
    for (int i = 0; i < 2; i++) {
        desc[i].Magic = KMT_SOFT_ALLOCATION_MAGIC;
        desc[i].Version = KMT_SOFT_ALLOCATION_VERSION;
        desc[i].Size = sizes[i];
        info[i].pPrivateDriverData = &desc[i];
        info[i].PrivateDriverDataSize = sizeof(desc[i]);
    }
    ca.hDevice = ctx->device;
    ca.NumAllocations = 2;
    ca.pAllocationInfo2 = info;
    if (!step("D3DKMTCreateAllocation2", D3DKMTCreateAllocation2(&ca)))
        return FALSE;
    ctx->data.handle = info[0].hAllocation;
    ctx->data.va = info[0].GpuVirtualAddress;
    ctx->cmds.handle = info[1].hAllocation;
    ctx->cmds.va = info[1].GpuVirtualAddress;
    return ctx->data.va && ctx->cmds.va;
}

static void destroy_objects(struct icd_context *ctx)
{
    if (ctx->data.handle) {
        D3DKMT_HANDLE list[2] = { ctx->data.handle, ctx->cmds.handle };
        D3DKMT_DESTROYALLOCATION2 da = { 0 };

        da.hDevice = ctx->device;
        da.phAllocationList = list;
        da.AllocationCount = 2;
        step("D3DKMTDestroyAllocation2", D3DKMTDestroyAllocation2(&da));
    }
    if (ctx->fence) {
        D3DKMT_DESTROYSYNCHRONIZATIONOBJECT ds = { ctx->fence };
        step("D3DKMTDestroySynchronizationObject", D3DKMTDestroySynchronizationObject(&ds));
    }
    if (ctx->context) {
        D3DKMT_DESTROYCONTEXT dc = { ctx->context };
        step("D3DKMTDestroyContext", D3DKMTDestroyContext(&dc));
    }
    if (ctx->device) {
        D3DKMT_DESTROYDEVICE dd = { ctx->device };
        step("D3DKMTDestroyDevice", D3DKMTDestroyDevice(&dd));
    }
    if (ctx->adapter) {
        D3DKMT_CLOSEADAPTER ca = { ctx->adapter };
        step("D3DKMTCloseAdapter", D3DKMTCloseAdapter(&ca));
    }
    memset(ctx, 0, sizeof(*ctx));
}

/* ---- the round trip ------------------------------------------------------------------------- */

static void *lock(struct icd_context *ctx, D3DKMT_HANDLE allocation)
{
    D3DKMT_LOCK2 l = { 0 };

    l.hDevice = ctx->device;
    l.hAllocation = allocation;
    return step("D3DKMTLock2", D3DKMTLock2(&l)) ? l.pData : NULL;
}

static void unlock(struct icd_context *ctx, D3DKMT_HANDLE allocation)
{
    D3DKMT_UNLOCK2 u = { ctx->device, allocation };

    step("D3DKMTUnlock2", D3DKMTUnlock2(&u));
}

static UINT pattern(UINT i)
{
    return i * 2654435761u ^ 0x0f0f0f0fu;
}

static BOOL write_data(struct icd_context *ctx)
{
    UINT *words = lock(ctx, ctx->data.handle);

    if (!words)
        return FALSE;
    for (UINT i = 0; i < DATA_SIZE / 4; i++)
        words[i] = pattern(i);
    unlock(ctx, ctx->data.handle);
    return TRUE;
}

/* A fill of the middle of the data, then the fence signal; returns the length. */
static UINT write_commands(struct icd_context *ctx, UINT value)
{
    BYTE *cmds = lock(ctx, ctx->cmds.handle);
    KMT_SOFT_CMD_FILL fill = { 0 };
    KMT_SOFT_CMD_FENCE signal = { 0 };

    if (!cmds)
        return 0;
    fill.Header.Opcode = KMT_SOFT_OP_FILL;
    fill.Header.Size = sizeof(fill);
    fill.DstVa = ctx->data.va + FILL_OFFSET;
    fill.Bytes = FILL_BYTES;
    fill.Value = value;
    signal.Header.Opcode = KMT_SOFT_OP_SIGNAL_FENCE;
    signal.Header.Size = sizeof(signal);
    signal.Va = ctx->fence_gpu;
    signal.Value = ++ctx->fence_value;
    memcpy(cmds, &fill, sizeof(fill));
    memcpy(cmds + sizeof(fill), &signal, sizeof(signal));
    unlock(ctx, ctx->cmds.handle);
    return sizeof(fill) + sizeof(signal);
}

/* The fence's CPU mapping first, with a time limit (a sample must not hang),
 * then the D3DKMT wait, which returns at once. */
static BOOL wait_fence(struct icd_context *ctx)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };
    ULONGLONG start = GetTickCount64();

    while (*ctx->fence_cpu < ctx->fence_value) {
        if (GetTickCount64() - start > FENCE_TIMEOUT_MS) {
            say("the fence stayed at %llu, waiting for %llu", (unsigned long long)*ctx->fence_cpu,
                (unsigned long long)ctx->fence_value);
            return FALSE;
        }
        Sleep(1);
    }
    w.hDevice = ctx->device;
    w.ObjectCount = 1;
    w.ObjectHandleArray = &ctx->fence;
    w.FenceValueArray = &ctx->fence_value;
    return step("D3DKMTWaitForSynchronizationObjectFromCpu", D3DKMTWaitForSynchronizationObjectFromCpu(&w));
}

static UINT check_data(struct icd_context *ctx, UINT value)
{
    const UINT *words = lock(ctx, ctx->data.handle);
    UINT wrong = 0;

    if (!words)
        return DATA_SIZE / 4;
    for (UINT i = 0; i < DATA_SIZE / 4; i++) {
        BOOL filled = i >= FILL_OFFSET / 4 && i < (FILL_OFFSET + FILL_BYTES) / 4;

        wrong += words[i] != (filled ? value : pattern(i));
    }
    unlock(ctx, ctx->data.handle);
    return wrong;
}

static BOOL APIENTRY icd_roundtrip(UINT value)
{
    struct icd_context *ctx = current;
    D3DKMT_SUBMITCOMMAND sc = { 0 };
    UINT wrong;

    if (!ctx) {
        say("round trip without a current context");
        return FALSE;
    }
    if (!write_data(ctx) || !(sc.CommandLength = write_commands(ctx, value)))
        return FALSE;
    sc.Commands = ctx->cmds.va;
    sc.BroadcastContextCount = 1;
    sc.BroadcastContext[0] = ctx->context;
    if (!step("D3DKMTSubmitCommand", D3DKMTSubmitCommand(&sc)) || !wait_fence(ctx))
        return FALSE;
    wrong = check_data(ctx, value);
    say("submitted a fill of %u bytes at +%u with 0x%08x, fence %llu reached; %u of %u words wrong",
        FILL_BYTES, FILL_OFFSET, value, (unsigned long long)ctx->fence_value, wrong, DATA_SIZE / 4);
    return !wrong;
}

static const KMTICD_PROCTABLE proc_table = { 1, { icd_roundtrip } };

/* ---- the ICD entry points ------------------------------------------------------------------------ */

ICD_EXPORT BOOL APIENTRY KmtIcdSetAdapterLuid(const LUID *luid);
ICD_EXPORT BOOL APIENTRY DrvValidateVersion(ULONG version);
ICD_EXPORT KMTICD_DHGLRC APIENTRY DrvCreateContext(HDC hdc);
ICD_EXPORT const KMTICD_PROCTABLE *APIENTRY DrvSetContext(HDC hdc, KMTICD_DHGLRC context, void *set_proc_table);
ICD_EXPORT BOOL APIENTRY DrvReleaseContext(KMTICD_DHGLRC context);
ICD_EXPORT BOOL APIENTRY DrvDeleteContext(KMTICD_DHGLRC context);
ICD_EXPORT PROC APIENTRY DrvGetProcAddress(LPCSTR name);
ICD_EXPORT BOOL APIENTRY DrvSwapBuffers(HDC hdc);
ICD_EXPORT LONG APIENTRY DrvDescribePixelFormat(HDC hdc, INT format, ULONG size, void *descriptor);
ICD_EXPORT BOOL APIENTRY DrvSetPixelFormat(HDC hdc, LONG format);

BOOL APIENTRY KmtIcdSetAdapterLuid(const LUID *luid)
{
    if (!luid)
        return FALSE;
    adapter_luid = *luid;
    have_luid = TRUE;
    return TRUE;
}

BOOL APIENTRY DrvValidateVersion(ULONG version)
{
    say("DrvValidateVersion(0x%08lx): %s", (unsigned long)version,
        version == KMTICD_DRIVER_VERSION ? "accepted" : "refused");
    return version == KMTICD_DRIVER_VERSION;
}

KMTICD_DHGLRC APIENTRY DrvCreateContext(HDC hdc)
{
    struct icd_context *ctx;

    (void)hdc;                           /* no window system: the adapter comes by LUID */
    if (!have_luid) {
        say("DrvCreateContext: no adapter (KmtIcdSetAdapterLuid first)");
        return 0;
    }
    if (!(ctx = calloc(1, sizeof(*ctx))))
        return 0;
    if (!create_objects(ctx) || !create_buffers(ctx)) {
        destroy_objects(ctx);
        free(ctx);
        return 0;
    }
    ctx->magic = ICD_MAGIC;
    say("DrvCreateContext: adapter 0x%08x, device 0x%08x, context 0x%08x, fence 0x%08x, allocations "
        "0x%08x 0x%08x", ctx->adapter, ctx->device, ctx->context, ctx->fence, ctx->data.handle,
        ctx->cmds.handle);
    return (KMTICD_DHGLRC)ctx;
}

const KMTICD_PROCTABLE *APIENTRY DrvSetContext(HDC hdc, KMTICD_DHGLRC context, void *set_proc_table)
{
    struct icd_context *ctx = context_of(context);

    (void)hdc;
    (void)set_proc_table;
    if (!ctx)
        return NULL;
    current = ctx;
    return &proc_table;
}

BOOL APIENTRY DrvReleaseContext(KMTICD_DHGLRC context)
{
    struct icd_context *ctx = context_of(context);

    if (!ctx || current != ctx)
        return FALSE;
    current = NULL;
    return TRUE;
}

BOOL APIENTRY DrvDeleteContext(KMTICD_DHGLRC context)
{
    struct icd_context *ctx = context_of(context);

    if (!ctx)
        return FALSE;
    if (current == ctx)
        current = NULL;
    destroy_objects(ctx);
    free(ctx);
    say("DrvDeleteContext: everything destroyed");
    return TRUE;
}

PROC APIENTRY DrvGetProcAddress(LPCSTR name)
{
    PROC proc = NULL;

    if (name && !strcmp(name, KMTICD_ROUNDTRIP_NAME)) {
        PFN_KMTICD_ROUNDTRIP fn = icd_roundtrip;

        memcpy(&proc, &fn, sizeof(proc));
    }
    return proc;
}

/* Nothing is ever displayed. */
BOOL APIENTRY DrvSwapBuffers(HDC hdc)
{
    (void)hdc;
    SetLastError(ERROR_NOT_SUPPORTED);
    return FALSE;
}

LONG APIENTRY DrvDescribePixelFormat(HDC hdc, INT format, ULONG size, void *descriptor)
{
    (void)hdc;
    (void)format;
    (void)size;
    (void)descriptor;
    return 0;                            /* no pixel formats */
}

BOOL APIENTRY DrvSetPixelFormat(HDC hdc, LONG format)
{
    (void)hdc;
    (void)format;
    return FALSE;
}
