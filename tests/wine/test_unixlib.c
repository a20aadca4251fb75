/*
 * The Linux half of kmtshim.dll, natively: dlopen the staged kmtshim.so the
 * way Wine does and drive __wine_unix_call_funcs directly.  Checks what
 * Wine itself cannot show: the exported symbols, argument-struct
 * validation (NULL args, NULL descriptors, NULL arrays give Windows'
 * NTSTATUS, never a crash), the ownership query, and a full lifecycle on a
 * 256 KiB thread stack (Wine gives the Linux half about 1 MiB).
 * Runs in sanitizer builds too.  Output: TAP.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmtshim/d3dkmthk.h"
#include "kmtshim/kmtsoft.h"
#include "unixlib.h"

typedef NTSTATUS (*entry_fn)(void *args);

static const entry_fn *funcs;
static unsigned tap_count, tap_failed;

static void tap(int pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(int pass, const char *fmt, ...)
{
    va_list ap;

    printf("%sok %u - ", pass ? "" : "not ", ++tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (!pass)
        tap_failed++;
}

static NTSTATUS call_desc(enum kmt_unix_code code, void *desc)
{
    struct kmt_desc_params params = { (uint64_t)(uintptr_t)desc };

    return funcs[code](&params);
}

static unsigned owned(D3DKMT_HANDLE handle)
{
    struct kmt_owns_handle_params params = { handle, 0xff };

    if (funcs[KMT_UNIX_OWNS_HANDLE](&params))
        return 0xdead;
    return params.owned;
}

static void test_exports(void *so)
{
    tap(dlsym(so, "D3DKMTCreateDevice") == NULL && dlsym(so, "dxgk_process") == NULL &&
        dlsym(so, "KmtGetVersion") == NULL, "kmtshim.so exports nothing of the core");
    for (unsigned i = 0; i < KMT_UNIX_CALL_COUNT; i++)
        if (!funcs[i]) {
            tap(0, "unix call %u is NULL", i);
            return;
        }
    tap(1, "all %u unix calls are set", (unsigned)KMT_UNIX_CALL_COUNT);
}

static void test_null_args(void)
{
    unsigned bad = 0;

    for (unsigned i = 0; i < KMT_UNIX_CALL_COUNT; i++)
        if (funcs[i](NULL) != STATUS_INVALID_PARAMETER)
            bad++;
    tap(!bad, "NULL argument struct: STATUS_INVALID_PARAMETER from every call (%u wrong)", bad);
    bad = 0;
    for (unsigned i = 0; i < KMT_UNIX_OWNS_HANDLE; i++)
        if (call_desc(i, NULL) != STATUS_INVALID_PARAMETER)
            bad++;
    tap(!bad, "NULL descriptor: STATUS_INVALID_PARAMETER from every D3DKMT call (%u wrong)", bad);
    tap(owned(0x40000000) == 0 && owned(0) == 0, "nothing is owned before a handle was opened");
}

/* The lifecycle a Windows program goes through, entirely through the table. */
static void *lifecycle(void *unused)
{
    D3DKMT_ADAPTERINFO info[34];
    D3DKMT_ENUMADAPTERS2 e = { 34, info };
    D3DKMT_CREATEDEVICE cd = { 0 };
    KMT_SOFT_ALLOCATION_DESC desc = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, 8192, 0, 0 };
    D3DDDI_ALLOCATIONINFO ai = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { 0 };
    D3DKMT_UNLOCK unlock1 = { 0 };
    D3DKMT_DESTROYALLOCATION da = { 0 };
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_CLOSEADAPTER close = { 0 };
    int same = 1;
    NTSTATUS status;

    status = call_desc(KMT_UNIX_EnumAdapters2, &e);
    tap(status == STATUS_SUCCESS && e.NumAdapters >= 1, "EnumAdapters2: %u adapters", (unsigned)e.NumAdapters);
    tap(owned(info[0].hAdapter) == 1, "adapter %#x is owned", info[0].hAdapter);
    cd.hAdapter = info[0].hAdapter;
    status = call_desc(KMT_UNIX_CreateDevice, &cd);
    tap(status == STATUS_SUCCESS && owned(cd.hDevice) == 1, "CreateDevice: %#x, owned", cd.hDevice);

    ai.pPrivateDriverData = &desc;
    ai.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = cd.hDevice;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &ai;
    status = call_desc(KMT_UNIX_CreateAllocation, &ca);
    tap(status == STATUS_SUCCESS && ai.hAllocation == cd.hDevice + 0x40, "CreateAllocation: %#x", ai.hAllocation);

    lock.hDevice = cd.hDevice;
    lock.hAllocation = ai.hAllocation;
    status = call_desc(KMT_UNIX_Lock2, &lock);
    tap(status == STATUS_SUCCESS && lock.pData, "Lock2: %p", lock.pData);
    if (lock.pData)
        memset(lock.pData, 0x5a, 8192);
    unlock.hDevice = cd.hDevice;
    unlock.hAllocation = ai.hAllocation;
    tap(call_desc(KMT_UNIX_Unlock2, &unlock) == STATUS_SUCCESS, "Unlock2");
    lock.pData = NULL;
    call_desc(KMT_UNIX_Lock2, &lock);
    for (unsigned i = 0; lock.pData && i < 8192; i++)
        same &= ((unsigned char *)lock.pData)[i] == 0x5a;
    tap(lock.pData && same, "the data reads back");
    call_desc(KMT_UNIX_Unlock2, &unlock);

    /* NULL arrays inside valid descriptors */
    unlock1.hDevice = cd.hDevice;
    unlock1.NumAllocations = 1;
    tap(call_desc(KMT_UNIX_Unlock, &unlock1) == STATUS_INVALID_PARAMETER, "Unlock with a NULL list");
    da.hDevice = cd.hDevice;
    da.AllocationCount = 1;
    tap(call_desc(KMT_UNIX_DestroyAllocation, &da) == STATUS_INVALID_PARAMETER,
        "DestroyAllocation with a NULL list");
    ca.pAllocationInfo = NULL;
    tap(call_desc(KMT_UNIX_CreateAllocation, &ca) == STATUS_INVALID_PARAMETER,
        "CreateAllocation with a NULL pAllocationInfo");

    da.phAllocationList = &ai.hAllocation;
    tap(call_desc(KMT_UNIX_DestroyAllocation, &da) == STATUS_SUCCESS && owned(ai.hAllocation) == 0,
        "DestroyAllocation; the handle is no longer owned");
    dd.hDevice = cd.hDevice;
    tap(call_desc(KMT_UNIX_DestroyDevice, &dd) == STATUS_SUCCESS && owned(cd.hDevice) == 0,
        "DestroyDevice; the handle is no longer owned");
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        close.hAdapter = info[i].hAdapter;
        call_desc(KMT_UNIX_CloseAdapter, &close);
    }
    tap(owned(info[0].hAdapter) == 0, "closed adapter no longer owned");
    return unused;
}

static void run_on_small_stack(void)
{
    pthread_attr_t attr;
    pthread_t thread;

    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    if (pthread_create(&thread, &attr, lifecycle, NULL)) {
        tap(0, "pthread_create");
        return;
    }
    pthread_join(thread, NULL);
    pthread_attr_destroy(&attr);
}

int main(void)
{
    const char *builddir = getenv("KMTSHIM_TEST_BUILDDIR");
    char path[4096];
    void *so;

    setvbuf(stdout, NULL, _IONBF, 0);
    setenv("KMTSHIM_MINIPORT", "soft", 1);
    snprintf(path, sizeof(path), "%s/dlls/kmtshim/wine/tree/x86_64-unix/kmtshim.so", builddir ? builddir : ".");
    so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    tap(so != NULL, "dlopen %s%s%s", path, so ? "" : ": ", so ? "" : dlerror());
    if (!so) {
        printf("1..%u\n", tap_count);
        return 1;
    }
    funcs = dlsym(so, "__wine_unix_call_funcs");
    tap(funcs != NULL, "__wine_unix_call_funcs is exported");
    if (funcs) {
        test_exports(so);
        test_null_args();
        run_on_small_stack();
    }
    /* kmtshim.so stays loaded, as in Wine: its state is the process's */
    printf("1..%u\n", tap_count);
    return tap_failed ? 1 : 0;
}
