/*
 * The software miniport: kmtshim's Basic Render Driver.  Allocations are
 * real memory (a memfd each, or the caller's own pages for existing-sysmem
 * allocations); its VidPn sources are virtual 1080p60 outputs that scan
 * out nothing (soft_display.c).
 */
#ifndef KMTSHIM_SOFT_H
#define KMTSHIM_SOFT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kmtshim/d3dkmddi.h"
#include "kmtshim/kmtsoft.h"
#include "kmtshim/kmtmiracast.h"

/* The adapter's GPU virtual address space: every allocation and every
 * piece of core memory mapped for the engine owns a range. */
struct soft_vaspace {
    pthread_rwlock_t lock;               /* readers: the engine, per command */
    void *tree;                          /* tsearch tree of struct soft_va_range */
    UINT64 next;                         /* bump allocator: VAs are never reused */
    pthread_mutex_t next_lock;
};

struct soft_allocation;

struct soft_va_range {
    UINT64 start;
    UINT64 size;
    struct soft_allocation *alloc;       /* or NULL: plain CPU memory */
    void *cpu;                           /* CPU memory (sysmem, core memory) */
};

struct soft_engine;
struct soft_miracast_context;

/* The virtual Miracast sink (soft_miracast.c): one target, one context. */
struct soft_miracast_sink {
    pthread_mutex_t lock;
    struct soft_miracast_context *live;  /* the one context, or NULL */
    UINT64 last_id;                      /* context ids, never reused */
    KMT_SOFT_MIRACAST_STATS stats;       /* under lock, except Overlaps */
    atomic_uint in_ddi;                  /* Miracast-class DDIs running now */
    atomic_ullong overlaps;
};

/* The virtual outputs and their vsync timer (soft_display.c). */
struct soft_display {
    ULONG sources;                       /* fixed at AddDevice */
    pthread_mutex_t lock;
    pthread_cond_t cond;                 /* CLOCK_MONOTONIC: the timer's sleep */
    bool enabled;                        /* CRTC_VSYNC on, under lock */
    bool running;                        /* the timer thread exists, under lock */
    pthread_t thread;
};

struct soft_adapter {
    DXGKRNL_INTERFACE dxgkrnl;
    UINT64 budget;                       /* bytes of system memory we may use */
    atomic_ullong devices, allocations, resources, bytes, bindings, contexts, commands;
    struct soft_vaspace va;
    struct soft_engine *engine;
    struct soft_miracast_sink miracast;
    struct soft_display display;
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
    UINT64 gpu_va;
    void *_Atomic engine_map;            /* the engine's mapping, made on first use */
};

struct soft_context {
    struct soft_device *device;
    HANDLE core_context;
    UINT node;
    HANDLE save_area;                    /* a context allocation (DxgkCbCreateContextAllocation) */
};

#define SOFT_PAGE_SIZE 4096u

/* soft_trace.c */
void soft_trace(struct soft_adapter *a, KMT_TRACE_LEVEL level, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* soft_allocation.c: gives an allocation whose size and memory are set its
 * GPU VA and counts it (false: out of memory, and it is freed); frees one. */
bool soft_allocation_place(struct soft_adapter *a, struct soft_allocation *s);
void soft_allocation_free(struct soft_adapter *a, struct soft_allocation *s);
/* soft_share.c: the memfd of an allocation, for another process. */
NTSTATUS APIENTRY soft_export_allocation(HANDLE hAdapter, HANDLE hAllocation, int *pFd);
NTSTATUS APIENTRY soft_import_allocation(HANDLE hAdapter, KMTARG_IMPORTALLOCATION *pImport);
NTSTATUS APIENTRY soft_create_allocation(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args);
NTSTATUS APIENTRY soft_destroy_allocation(HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *args);
NTSTATUS APIENTRY soft_open_allocation(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args);
NTSTATUS APIENTRY soft_close_allocation(HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *args);
NTSTATUS APIENTRY soft_lock(HANDLE hAdapter, DXGKARG_LOCK *args);
NTSTATUS APIENTRY soft_unlock(HANDLE hAdapter, const DXGKARG_UNLOCK *args);
NTSTATUS APIENTRY soft_escape(HANDLE hAdapter, const DXGKARG_ESCAPE *args);

/* soft_miracast.c */
void soft_miracast_init(struct soft_adapter *a);
void soft_miracast_fini(struct soft_adapter *a);
void soft_miracast_stats(struct soft_adapter *a, KMT_SOFT_MIRACAST_STATS *stats);
NTSTATUS APIENTRY soft_miracast_create_context(PVOID ctx, DXGK_MIRACAST_CALLBACKS *callbacks,
                                               PVOID *miracast_context, UINT *target_id);
void APIENTRY soft_miracast_destroy_context(PVOID ctx, PVOID miracast_context);
NTSTATUS APIENTRY soft_miracast_io_control(PVOID ctx, PVOID miracast_context, ULONG in_size,
                                           VOID *in, ULONG out_size, VOID *out, ULONG *returned);

/* soft_display.c */
void soft_display_init(struct soft_adapter *a);
void soft_display_fini(struct soft_adapter *a);
/* Stops the vsync timer (disable, StopDevice). */
void soft_display_stop(struct soft_adapter *a);
NTSTATUS soft_display_mode(struct soft_adapter *a, const DXGKARG_QUERYADAPTERINFO *q);
NTSTATUS APIENTRY soft_control_interrupt(HANDLE hAdapter, DXGK_INTERRUPT_TYPE type, BOOLEAN enable);
NTSTATUS APIENTRY soft_get_scan_line(HANDLE hAdapter, DXGKARG_GETSCANLINE *args);
NTSTATUS APIENTRY soft_query_child_status(PVOID ctx, DXGK_CHILD_STATUS *child, BOOLEAN non_destructive);

/* soft_va.c */
void soft_va_init(struct soft_vaspace *va);
void soft_va_destroy(struct soft_vaspace *va);
UINT64 soft_va_reserve(struct soft_vaspace *va, UINT64 size);
NTSTATUS soft_va_insert(struct soft_vaspace *va, UINT64 start, UINT64 size,
                        struct soft_allocation *alloc, void *cpu);
/* Removes a range, waiting for the engine to be done with it. */
void soft_va_remove(struct soft_vaspace *va, UINT64 start);
/* Engine side, with va->lock held for reading: the CPU address of
 * [gpu_va, gpu_va + size), or NULL if that is not inside one range. */
void *soft_va_translate(struct soft_vaspace *va, UINT64 gpu_va, UINT64 size);
NTSTATUS APIENTRY soft_map_system_memory(HANDLE hAdapter, VOID *cpu, SIZE_T size, D3DGPU_VIRTUAL_ADDRESS *va);
NTSTATUS APIENTRY soft_unmap_system_memory(HANDLE hAdapter, D3DGPU_VIRTUAL_ADDRESS va);

/* soft_context.c */
NTSTATUS APIENTRY soft_create_context(HANDLE hDevice, DXGKARG_CREATECONTEXT *args);
NTSTATUS APIENTRY soft_destroy_context(HANDLE hContext);
NTSTATUS APIENTRY soft_render(HANDLE hContext, DXGKARG_RENDER *args);

/* soft_engine.c */
NTSTATUS soft_engine_start(struct soft_adapter *a);
void soft_engine_stop(struct soft_adapter *a);
/* Nanoseconds the engine spent running jobs of `node` (0 before it started). */
UINT64 soft_engine_busy_ns(struct soft_adapter *a, UINT node);
/* The DMA buffer private data a context asks for: a submission's job. */
extern const UINT soft_job_size;
NTSTATUS APIENTRY soft_reset_engine(HANDLE hAdapter, DXGKARG_RESETENGINE *args);
NTSTATUS APIENTRY soft_submit_command(HANDLE hAdapter, const DXGKARG_SUBMITCOMMAND *args);
NTSTATUS APIENTRY soft_submit_command_virtual(HANDLE hAdapter, const DXGKARG_SUBMITCOMMANDVIRTUAL *args);

#endif
