/*
 * The recording miniport's internals: the objects it hands out, the registry
 * that recognises them, and the log / steering helpers shared by its files.
 *
 * Every handle it returns to the core is a pointer to one of these objects.
 * Destroyed objects are kept (marked dead) until DxgkDdiUnload, so a late or
 * repeated use of a handle is reported instead of reading freed memory.
 */
#ifndef KMTSHIM_RECORD_INTERNAL_H
#define KMTSHIM_RECORD_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "record_miniport.h"

enum rec_kind {
    REC_ADAPTER = 1,
    REC_DEVICE,
    REC_RESOURCE,
    REC_ALLOCATION,
    REC_BINDING,
};

struct rec_obj {
    enum rec_kind kind;
    bool dead;
    struct rec_obj *next_all;            /* every object ever made, for Unload */
};

struct rec_adapter {
    struct rec_obj o;
    DXGKRNL_INTERFACE k;
    UINT index;
    char location[64];
    bool started;
};

struct rec_device {
    struct rec_obj o;
    struct rec_adapter *adapter;
    HANDLE core_device;
};

/* A resource outlives the handle the KMD gave for it (rewrite_resource). */
struct rec_resource_state {
    unsigned live_allocations;
    bool destroyed;
};

struct rec_resource {
    struct rec_obj o;
    struct rec_resource_state *state;    /* shared by the handles of one resource */
    struct rec_adapter *adapter;
};

struct rec_allocation {
    struct rec_obj o;
    struct rec_adapter *adapter;
    struct rec_resource_state *resource; /* NULL when standalone */
    struct rec_device *creator;          /* from Open(Create) */
    unsigned bindings;                   /* open device bindings */
    unsigned mappings;                   /* DxgkDdiLock without DxgkDdiUnlock */
    bool opened_for_create;
    SIZE_T size;
    void *memory;                        /* what Lock maps */
};

struct rec_binding {
    struct rec_obj o;
    struct rec_allocation *allocation;
    struct rec_device *device;
};

/* The miniport's state lock: objects, registry, log, steering. */
extern pthread_mutex_t rec_lock;
extern struct record_config rec_config;

/* registry (record_log.c); rec_lock held */
void *rec_obj_new(enum rec_kind kind, size_t size);
/* The live or dead object behind a handle, or NULL if the miniport never made it. */
struct rec_obj *rec_obj_find(const void *handle, enum rec_kind kind);
void rec_free_all(void);
struct record_live rec_count_live(void);
/* Live objects that belong to adapter `a` (devices, allocations, resources, bindings). */
unsigned rec_adapter_live_children(const struct rec_adapter *a);
/* Live allocations created through device `d`, and its open bindings. */
void rec_device_live_children(const struct rec_device *d, unsigned *allocations, unsigned *bindings);

/* log (record_log.c); rec_lock held */
struct record_call *rec_log_new(enum record_ddi ddi);
void rec_violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
unsigned char *rec_dup(const void *data, size_t size);

/* steering; each consumes one call of `ddi` from the countdowns.  rec_lock held. */
NTSTATUS rec_injected_failure(enum record_ddi ddi);
/* Index to leave NULL in this call's outputs, or RECORD_NONE. */
UINT rec_injected_null(enum record_ddi ddi);
/* Stops here if record_block(ddi) is armed; rec_lock NOT held. */
void rec_maybe_block(enum record_ddi ddi);

/* Checks a device handle a DDI received; logs a violation and returns NULL
 * if it is unknown or destroyed.  rec_lock held. */
struct rec_device *rec_check_device(HANDLE h, const char *ddi);
struct rec_adapter *rec_check_adapter(HANDLE h, const char *ddi);

/* DDIs of record_allocation.c */
NTSTATUS APIENTRY rec_create_allocation(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args);
NTSTATUS APIENTRY rec_destroy_allocation(HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *args);
NTSTATUS APIENTRY rec_open_allocation(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args);
NTSTATUS APIENTRY rec_close_allocation(HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *args);
NTSTATUS APIENTRY rec_lock_allocation(HANDLE hAdapter, DXGKARG_LOCK *args);
NTSTATUS APIENTRY rec_unlock_allocation(HANDLE hAdapter, const DXGKARG_UNLOCK *args);

#endif /* KMTSHIM_RECORD_INTERNAL_H */
