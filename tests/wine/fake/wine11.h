/*
 * A fake Wine 11 gdi32 (gdi32_orig.dll for tests/wine/test_fakegdi.exe):
 * the D3DKMT objects Wine 10.15 on implements itself, with handles as Wine
 * hands them out.  Its tables (wine11_handles.c) and its functions
 * (wine11_d3dkmt.c); every other gdi32 export is a thunk into Wine's own
 * gdi32, loaded as gdi32_wine.dll (gen-fake-gdi32.sh).
 *
 * Handles, as Wine's win32u and wineserver make them:
 *   local   0x40000000 | index << 6, index from 0 (first free from the
 *           last one handed out, no generation bits)
 *   global  0x40000000 | index << 6 | 2, index from 0 (the wineserver's
 *           table; here one per process: the test runs in one)
 *   NT      a real Wine handle to an object of the fake's (an event), as
 *           Wine's are handles to its DxgkShared* server objects
 */
#ifndef KMTSHIM_FAKE_WINE11_H
#define KMTSHIM_FAKE_WINE11_H

#define KMTAPI
#include "kmtshim/d3dkmthk.h"

enum fake_type {
    FAKE_FREE,
    FAKE_ADAPTER,
    FAKE_DEVICE,
    FAKE_CONTEXT,
    FAKE_SYNC,
    FAKE_RESOURCE,
    FAKE_ALLOCATION,
    FAKE_MUTEX,
};

/* A global ("wineserver") object: a shared resource, sync object or keyed
 * mutex, alive while a local object or an NT handle refers to it. */
struct fake_global {
    enum fake_type type;                 /* FAKE_FREE: unused slot */
    D3DKMT_HANDLE handle;
    unsigned refs;
    HANDLE nt_event;                     /* the fake's own reference of the NT share, or NULL */
    struct fake_global *mutex, *sync;    /* a resource's ShareObjects companions */
    UINT64 key;                          /* keyed mutex: the key it was released to */
    BOOL owned;
};

struct fake_object {
    enum fake_type type;                 /* FAKE_FREE: unused slot */
    D3DKMT_HANDLE handle;
    D3DKMT_HANDLE parent;                /* adapter of a device, device of the rest */
    struct fake_global *global;          /* shared objects */
    BOOL owner;                          /* keyed mutex: this handle acquired it */
};

/* wine11_handles.c: one lock around every table (Wine takes one too). */
void fake_lock(void);
void fake_unlock(void);
struct fake_object *fake_new(enum fake_type type, D3DKMT_HANDLE parent);
struct fake_object *fake_get(D3DKMT_HANDLE handle, enum fake_type type);
void fake_free(struct fake_object *object);
/* Frees every object whose parent is `parent`, recursively. */
void fake_free_children(D3DKMT_HANDLE parent);
struct fake_global *fake_global_new(enum fake_type type);
struct fake_global *fake_global_get(D3DKMT_HANDLE handle, enum fake_type type);
void fake_global_ref(struct fake_global *global);
void fake_global_unref(struct fake_global *global);
/* The global object an NT handle of the fake's names (NtCompareObjects),
 * or NULL for any other handle. */
struct fake_global *fake_global_from_nt(HANDLE handle);
/* Counts a call served (FakeWineCalls, FakeWineLastCall: what the test reads). */
void fake_served(const char *name);

/* The adapter the fake enumerates, as Wine's one GPU. */
#define FAKE_LUID_LOW 0x0000fa4eu
#define FAKE_LUID_HIGH 0x00000011

#endif
