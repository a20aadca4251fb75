/*
 * Helpers of the DDI-contract suites.
 */
#include <errno.h>
#include <time.h>

#include "contract_util.h"

void rec_use(const char *selection)
{
    ck_assert_status(KmtRegisterMiniport("record", RecordMiniportDriverEntry), STATUS_SUCCESS);
    kmt_test_use_miniport(selection);
}

void rec_use_config(const char *selection, const struct record_config *cfg)
{
    record_configure(cfg);
    rec_use(selection);
}

D3DKMT_HANDLE rec_device(D3DKMT_HANDLE *adapter, HANDLE *driver_device)
{
    D3DKMT_HANDLE device = kmt_test_create_device(adapter);
    unsigned i = record_log_find_last(RECORD_CREATE_DEVICE);

    ck_assert_uint_ne(i, RECORD_NONE);
    ck_assert_ptr_nonnull(rec_entry(i)->device);
    if (driver_device)
        *driver_device = rec_entry(i)->device;
    return device;
}

const struct record_call *rec_entry(unsigned index)
{
    const struct record_call *call = record_log_get(index);

    ck_assert_msg(call != NULL, "no log entry %u (log has %u)", index, record_log_count());
    return call;
}

NTSTATUS rec_create(D3DKMT_HANDLE device, UINT count, bool resource, struct rec_objects *out)
{
    D3DDDI_ALLOCATIONINFO info[REC_MAX];
    unsigned char data[REC_MAX][8];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    unsigned from = record_log_count(), c, o;
    NTSTATUS status;

    ck_assert_uint_le(count, REC_MAX);
    memset(info, 0, sizeof(info));
    memset(out, 0, sizeof(*out));
    for (UINT i = 0; i < count; i++) {
        memset(data[i], (int)(0x30 + i), sizeof(data[i]));
        info[i].pPrivateDriverData = data[i];
        info[i].PrivateDriverDataSize = sizeof(data[i]);
    }
    ca.hDevice = device;
    ca.NumAllocations = count;
    ca.pAllocationInfo = info;
    ca.Flags.CreateResource = resource;
    if ((status = D3DKMTCreateAllocation(&ca)))
        return status;

    out->count = count;
    out->resource = ca.hResource;
    for (UINT i = 0; i < count; i++)
        out->handles[i] = info[i].hAllocation;
    c = record_log_find(RECORD_CREATE_ALLOCATION, from);
    o = record_log_find(RECORD_OPEN_ALLOCATION, from);
    ck_assert_uint_ne(c, RECORD_NONE);
    ck_assert_uint_ne(o, RECORD_NONE);
    ck_assert_uint_eq(rec_entry(c)->num, count);
    ck_assert_uint_eq(rec_entry(o)->num, count);
    out->driver_resource = rec_entry(c)->resource_out;
    for (UINT i = 0; i < count; i++) {
        out->driver[i] = rec_entry(c)->allocs[i].handle;
        out->binding[i] = rec_entry(o)->allocs[i].handle;
    }
    return STATUS_SUCCESS;
}

void rec_create_ok(D3DKMT_HANDLE device, UINT count, bool resource, struct rec_objects *out)
{
    ck_assert_status(rec_create(device, count, resource, out), STATUS_SUCCESS);
    for (UINT i = 0; i < count; i++) {
        ck_assert_local_handle(out->handles[i]);
        ck_assert_ptr_nonnull(out->driver[i]);
        ck_assert_ptr_nonnull(out->binding[i]);
    }
    if (resource) {
        ck_assert_local_handle(out->resource);
        ck_assert_ptr_nonnull(out->driver_resource);
    }
}

void rec_create_shared(D3DKMT_HANDLE device, UINT count, struct rec_objects *out)
{
    D3DDDI_ALLOCATIONINFO info[REC_MAX];
    unsigned char data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    D3DKMT_CREATEALLOCATION ca = { 0 };

    ck_assert_uint_le(count, REC_MAX);
    memset(info, 0, sizeof(info));
    memset(out, 0, sizeof(*out));
    for (UINT i = 0; i < count; i++) {
        info[i].pPrivateDriverData = data;
        info[i].PrivateDriverDataSize = sizeof(data);
    }
    ca.hDevice = device;
    ca.NumAllocations = count;
    ca.pAllocationInfo = info;
    ca.Flags.CreateResource = 1;
    ca.Flags.CreateShared = 1;
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    ck_assert_uint_eq(ca.hGlobalShare & 0x3f, 2);
    out->count = count;
    out->resource = ca.hResource;
    for (UINT i = 0; i < count; i++)
        out->handles[i] = info[i].hAllocation;
}

NTSTATUS rec_destroy_list(D3DKMT_HANDLE device, const D3DKMT_HANDLE *list, UINT count)
{
    D3DKMT_DESTROYALLOCATION da = { 0 };

    da.hDevice = device;
    da.phAllocationList = list;
    da.AllocationCount = count;
    return D3DKMTDestroyAllocation(&da);
}

NTSTATUS rec_destroy_resource(D3DKMT_HANDLE device, D3DKMT_HANDLE resource)
{
    D3DKMT_DESTROYALLOCATION da = { 0 };

    da.hDevice = device;
    da.hResource = resource;
    return D3DKMTDestroyAllocation(&da);
}

NTSTATUS rec_destroy2(D3DKMT_HANDLE device, D3DKMT_HANDLE resource, const D3DKMT_HANDLE *list,
                      UINT count, UINT flags)
{
    D3DKMT_DESTROYALLOCATION2 da = { 0 };

    da.hDevice = device;
    da.hResource = resource;
    da.phAllocationList = list;
    da.AllocationCount = count;
    da.Flags.Value = flags;
    return D3DKMTDestroyAllocation2(&da);
}

NTSTATUS rec_lock2(D3DKMT_HANDLE device, D3DKMT_HANDLE allocation, void **data)
{
    D3DKMT_LOCK2 lock = { 0 };
    NTSTATUS status;

    lock.hDevice = device;
    lock.hAllocation = allocation;
    status = D3DKMTLock2(&lock);
    if (data)
        *data = lock.pData;
    return status;
}

NTSTATUS rec_unlock2(D3DKMT_HANDLE device, D3DKMT_HANDLE allocation)
{
    D3DKMT_UNLOCK2 unlock = { device, allocation };

    return D3DKMTUnlock2(&unlock);
}

NTSTATUS rec_destroy_device(D3DKMT_HANDLE device)
{
    D3DKMT_DESTROYDEVICE dd = { device };

    return D3DKMTDestroyDevice(&dd);
}

void rec_finish(void)
{
    struct record_live live;

    kmt_test_shutdown_no_leaks();
    live = record_live_objects();
    ck_assert_uint_eq(live.adapters, 0);
    ck_assert_uint_eq(live.devices, 0);
    ck_assert_uint_eq(live.allocations, 0);
    ck_assert_uint_eq(live.resources, 0);
    ck_assert_uint_eq(live.bindings, 0);
    rec_assert_no_violations();
}

/* ---- the log ------------------------------------------------------------ */

bool rec_call_lists(const struct record_call *call, HANDLE handle)
{
    for (UINT i = 0; call->allocs && i < call->num; i++)
        if (call->allocs[i].handle == handle)
            return true;
    return false;
}

unsigned rec_find_with(enum record_ddi ddi, HANDLE handle, unsigned from)
{
    for (unsigned i = from; (i = record_log_find(ddi, i)) != RECORD_NONE; i++)
        if (rec_call_lists(rec_entry(i), handle))
            return i;
    return RECORD_NONE;
}

void rec_assert_no_violations(void)
{
    unsigned n = record_violation_count();

    if (n)
        record_log_dump();
    ck_assert_msg(n == 0, "the miniport saw %u contract violations, the first: %s", n,
                  n ? record_violation(0) : "");
}

/* The binding the Open(Create) gave driver allocation `driver`, found
 * through the handle the core resolved during that call. */
static HANDLE binding_of(HANDLE driver)
{
    for (unsigned i = 0; (i = record_log_find(RECORD_OPEN_ALLOCATION, i)) != RECORD_NONE; i++) {
        const struct record_call *open = rec_entry(i);

        for (UINT j = 0; j < open->num; j++)
            if (open->allocs[j].resolved == driver && open->status == STATUS_SUCCESS)
                return open->allocs[j].handle;
    }
    return NULL;
}

void rec_assert_close_before_destroy(void)
{
    for (unsigned d = 0; (d = record_log_find(RECORD_DESTROY_ALLOCATION, d)) != RECORD_NONE; d++) {
        const struct record_call *destroy = rec_entry(d);

        for (UINT j = 0; j < destroy->num; j++) {
            HANDLE binding = binding_of(destroy->allocs[j].handle);
            unsigned close;

            if (!binding)
                continue;       /* never bound (a failed create) */
            close = rec_find_with(RECORD_CLOSE_ALLOCATION, binding, 0);
            ck_assert_msg(close != RECORD_NONE && close < d,
                          "allocation %p destroyed (entry %u) before its binding %p was closed "
                          "(entry %d)", destroy->allocs[j].handle, d, binding,
                          close == RECORD_NONE ? -1 : (int)close);
        }
    }
}

NTSTATUS rec_escape(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, RECORD_ESCAPE_DATA *e)
{
    D3DKMT_ESCAPE esc = { 0 };

    e->Magic = RECORD_ESCAPE_MAGIC;
    esc.hAdapter = adapter;
    esc.hDevice = device;
    esc.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    esc.pPrivateDriverData = e;
    esc.PrivateDriverDataSize = sizeof(*e);
    return D3DKMTEscape(&esc);
}

UINT64 rec_resolve(D3DKMT_HANDLE adapter, D3DKMT_HANDLE handle, UINT arg)
{
    RECORD_ESCAPE_DATA e = { 0 };

    e.Code = RECORD_ESCAPE_RESOLVE;
    e.Index = handle;
    e.Arg = arg;
    ck_assert_status(rec_escape(adapter, 0, &e), STATUS_SUCCESS);
    return e.Result;
}

/* ---- threads ------------------------------------------------------------ */

static void *thread_main(void *arg)
{
    struct rec_thread *t = arg;

    t->fn(t->arg);
    pthread_mutex_lock(&t->lock);
    t->done = true;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

void rec_thread_start(struct rec_thread *t, void (*fn)(void *), void *arg)
{
    t->fn = fn;
    t->arg = arg;
    t->done = false;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    ck_assert_int_eq(pthread_create(&t->thread, NULL, thread_main, t), 0);
}

bool rec_thread_wait(struct rec_thread *t, unsigned timeout_ms)
{
    struct timespec deadline;
    bool done;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&t->lock);
    while (!t->done)
        if (pthread_cond_timedwait(&t->cond, &t->lock, &deadline) == ETIMEDOUT)
            break;
    done = t->done;
    pthread_mutex_unlock(&t->lock);
    return done;
}

bool rec_thread_done(struct rec_thread *t)
{
    bool done;

    pthread_mutex_lock(&t->lock);
    done = t->done;
    pthread_mutex_unlock(&t->lock);
    return done;
}

void rec_thread_join(struct rec_thread *t)
{
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
}

void rec_sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

bool rec_wide_equals(const WCHAR *w, const char *s)
{
    size_t i = 0;

    for (; s[i]; i++)
        if (w[i] != (unsigned char)s[i])
            return false;
    return w[i] == 0;
}
