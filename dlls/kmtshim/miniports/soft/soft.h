/*
 * The software miniport: kmtshim's Basic Render Driver.  Allocations are
 * real memory (a memfd each, or the caller's own pages for existing-sysmem
 * allocations); there is no display.
 */
#ifndef KMTSHIM_SOFT_H
#define KMTSHIM_SOFT_H

#include <stdatomic.h>
#include <stdbool.h>

#include "kmtshim/d3dkmddi.h"
#include "kmtshim/kmtsoft.h"

struct soft_adapter {
    DXGKRNL_INTERFACE dxgkrnl;
    UINT64 budget;                       /* bytes of system memory we may use */
    atomic_ullong devices, allocations, resources, bytes, bindings;
};

struct soft_device {
    struct soft_adapter *adapter;
    HANDLE core_device;                  /* the core's handle */
};

struct soft_resource {
    atomic_uint allocation_count;        /* allocations created with it; creates
                                            adding to it may run concurrently */
};

struct soft_allocation {
    int fd;                              /* memfd, -1 for sysmem */
    UINT64 size;
    void *sysmem;
    atomic_uint open_count;              /* device bindings */
};

#define SOFT_PAGE_SIZE 4096u

void soft_trace(struct soft_adapter *a, KMT_TRACE_LEVEL level, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

NTSTATUS APIENTRY soft_create_allocation(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args);
NTSTATUS APIENTRY soft_destroy_allocation(HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *args);
NTSTATUS APIENTRY soft_open_allocation(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args);
NTSTATUS APIENTRY soft_close_allocation(HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *args);
NTSTATUS APIENTRY soft_lock(HANDLE hAdapter, DXGKARG_LOCK *args);
NTSTATUS APIENTRY soft_unlock(HANDLE hAdapter, const DXGKARG_UNLOCK *args);
NTSTATUS APIENTRY soft_escape(HANDLE hAdapter, const DXGKARG_ESCAPE *args);

#endif
