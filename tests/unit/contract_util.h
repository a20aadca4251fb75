/*
 * Helpers of the DDI-contract suites (test_ddi_contract, test_destroy,
 * test_cascade, test_loader): selecting the recording miniport, creating
 * objects on it and finding what the miniport saw in its log.
 */
#ifndef KMTSHIM_CONTRACT_UTIL_H
#define KMTSHIM_CONTRACT_UTIL_H

#include <pthread.h>
#include <stdbool.h>

#include "test_util.h"
#include "record_miniport.h"

#define REC_MAX 16

/* Registers the built-in recording miniport and selects `selection`. */
void rec_use(const char *selection);
/* Same, with a configuration (record_default_config() + changes). */
void rec_use_config(const char *selection, const struct record_config *cfg);

/* A device on the first adapter; *driver_device (may be NULL) is what
 * DxgkDdiCreateDevice returned for it. */
D3DKMT_HANDLE rec_device(D3DKMT_HANDLE *adapter, HANDLE *driver_device);

/* What one CreateAllocation made, seen from both sides. */
struct rec_objects {
    UINT count;
    D3DKMT_HANDLE resource;              /* 0 when standalone */
    D3DKMT_HANDLE handles[REC_MAX];
    HANDLE driver_resource;              /* DXGKARG_CREATEALLOCATION.hResource out */
    HANDLE driver[REC_MAX];              /* DXGK_ALLOCATIONINFO.hAllocation */
    HANDLE binding[REC_MAX];             /* DXGK_OPENALLOCATIONINFO.hDeviceSpecificAllocation */
};

/* Creates `count` driver-private allocations (8 bytes of private data each),
 * with a resource if asked, and reads the miniport's handles from the log. */
NTSTATUS rec_create(D3DKMT_HANDLE device, UINT count, bool resource, struct rec_objects *out);
void rec_create_ok(D3DKMT_HANDLE device, UINT count, bool resource, struct rec_objects *out);
/* CreateAllocation with CreateResource + CreateShared. */
void rec_create_shared(D3DKMT_HANDLE device, UINT count, struct rec_objects *out);

NTSTATUS rec_destroy_list(D3DKMT_HANDLE device, const D3DKMT_HANDLE *list, UINT count);
NTSTATUS rec_destroy_resource(D3DKMT_HANDLE device, D3DKMT_HANDLE resource);
NTSTATUS rec_destroy2(D3DKMT_HANDLE device, D3DKMT_HANDLE resource, const D3DKMT_HANDLE *list,
                      UINT count, UINT flags);
NTSTATUS rec_lock2(D3DKMT_HANDLE device, D3DKMT_HANDLE allocation, void **data);
NTSTATUS rec_unlock2(D3DKMT_HANDLE device, D3DKMT_HANDLE allocation);
NTSTATUS rec_destroy_device(D3DKMT_HANDLE device);

/* Ends a case: process shutdown, then no core object, no miniport object
 * and no contract violation may be left. */
void rec_finish(void);

/* ---- the log ------------------------------------------------------------ */

bool rec_call_lists(const struct record_call *call, HANDLE handle);
/* First entry of `ddi` at or after `from` whose handle list names `handle`. */
unsigned rec_find_with(enum record_ddi ddi, HANDLE handle, unsigned from);
/* The entry, asserting it exists. */
const struct record_call *rec_entry(unsigned index);
/* Every violation the miniport saw, as a test failure. */
void rec_assert_no_violations(void);
/* Every DestroyAllocation in the log came after the CloseAllocation of the
 * same allocation's bindings (given by the Open entries). */
void rec_assert_close_before_destroy(void);

/* RECORD_ESCAPE through D3DKMTEscape. */
NTSTATUS rec_escape(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, RECORD_ESCAPE_DATA *e);
UINT64 rec_resolve(D3DKMT_HANDLE adapter, D3DKMT_HANDLE handle, UINT arg);

/* ---- threads ------------------------------------------------------------ */

struct rec_thread {
    pthread_t thread;
    void (*fn)(void *arg);
    void *arg;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
};

void rec_thread_start(struct rec_thread *t, void (*fn)(void *), void *arg);
/* true once the thread's function returned; false after `timeout_ms`. */
bool rec_thread_wait(struct rec_thread *t, unsigned timeout_ms);
bool rec_thread_done(struct rec_thread *t);
void rec_thread_join(struct rec_thread *t);
void rec_sleep_ms(unsigned ms);

/* ---- UTF-16 ------------------------------------------------------------- */

bool rec_wide_equals(const WCHAR *w, const char *s);

#endif /* KMTSHIM_CONTRACT_UTIL_H */
