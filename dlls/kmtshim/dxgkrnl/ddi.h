/*
 * The gateway to the miniport: the only code of the core that calls a
 * function of a DRIVER_INITIALIZATION_DATA table, as dxgkrnl on Linux puts
 * every host call behind dxgvmbus.c.  One place to read the contract, one
 * trace line per call ("<miniport>: DxgkDdiX(arguments) -> STATUS, results"
 * on the dxgk channel), and one place that keeps the rules a miniport may
 * rely on:
 *
 *   - an optional DDI the table lacks is never called: the gateway answers
 *     as the core wants it answered (dxgk_ddi_has_* tell the callers that
 *     decide on it);
 *   - nothing reaches an adapter after DxgkDdiRemoveDevice, nor a device
 *     after DxgkDdiDestroyDevice (the call is refused with an ERR line and
 *     STATUS_INVALID_DEVICE_STATE: a core bug, never a caller's);
 *   - DxgkDdiCloseAllocation of an allocation's device binding comes before
 *     DxgkDdiDestroyAllocation of the allocation;
 *   - the results a miniport must give are there (a device, a context, a
 *     handle per allocation, an address from Lock), or the call fails with
 *     STATUS_UNSUCCESSFUL and what it made is undone.
 *
 * Files: ddi_adapter.c (the driver and its adapters, queries, escapes,
 * GPU clock calibration),
 * ddi_device.c (devices), ddi_allocation.c (allocations, CPU access, GPU
 * mappings), ddi_execution.c (contexts, submission, engine reset, fences),
 * ddi_miracast.c (the Miracast class), ddi_display.c (display timing).
 */
#ifndef KMTSHIM_DXGKRNL_DDI_H
#define KMTSHIM_DXGKRNL_DDI_H

#include "dxgkrnl.h"
#include "base/kmt_debug.h"

struct dxgk_context;

/* Every DDI call's trace line. */
#define DXGK_DDI_TRACE(adapter, call, status, fmt, ...)                                           \
    TRACE_(dxgk, "%s: " call "(" fmt ") -> %s\n", (adapter)->miniport->name, ##__VA_ARGS__,         \
           kmt_debugstr_status(status))

/* A core bug, never a caller's: a DDI naming an adapter after its
 * DxgkDdiRemoveDevice.  Reported, and the call is not made. */
static inline bool dxgk_ddi_adapter_gone(const struct dxgk_adapter *adapter, const char *call)
{
    if (!adapter->removed)
        return false;
    ERR_(dxgk, "%s: %s after DxgkDdiRemoveDevice refused\n", adapter->miniport->name, call);
    return true;
}

/* ---- the driver and its adapters (ddi_adapter.c) ---------------------------------- */

/* The DDIs the core cannot work without are all in the table. */
bool dxgk_ddi_table_complete(const DRIVER_INITIALIZATION_DATA *data);
NTSTATUS dxgk_ddi_enum_physical_devices(struct dxgk_miniport *mp, UINT *count, KMT_PHYSICAL_DEVICE *devices);
void dxgk_ddi_unload(struct dxgk_miniport *mp);
NTSTATUS dxgk_ddi_add_device(struct dxgk_adapter *adapter);
NTSTATUS dxgk_ddi_start_device(struct dxgk_adapter *adapter, DXGK_START_INFO *start, ULONG *children);
/* Stop (when started), then remove: the adapter is the miniport's no more. */
void dxgk_ddi_stop_device(struct dxgk_adapter *adapter);
void dxgk_ddi_remove_device(struct dxgk_adapter *adapter);
NTSTATUS dxgk_ddi_query_adapter_info(struct dxgk_adapter *adapter, DXGK_QUERYADAPTERINFOTYPE type,
                                     void *in, UINT in_size, void *out, UINT out_size);
/* STATUS_NOT_SUPPORTED without DxgkDdiEscape. */
NTSTATUS dxgk_ddi_escape(struct dxgk_adapter *adapter, DXGKARG_ESCAPE *args);
/* STATUS_NOT_SUPPORTED without DxgkDdiCalibrateGpuClock. */
NTSTATUS dxgk_ddi_calibrate_gpu_clock(struct dxgk_adapter *adapter, UINT node, UINT engine,
                                      DXGKARG_CALIBRATEGPUCLOCK *args);

/* ---- display timing (ddi_display.c) ---------------------------------------------- */

/* STATUS_NOT_SUPPORTED without DxgkDdiControlInterrupt / DxgkDdiGetScanLine. */
NTSTATUS dxgk_ddi_control_interrupt(struct dxgk_adapter *adapter, DXGK_INTERRUPT_TYPE type, bool enable);
NTSTATUS dxgk_ddi_get_scan_line(struct dxgk_adapter *adapter, DXGKARG_GETSCANLINE *args);
/* StatusConnection of child->ChildUid; connected without the DDI. */
NTSTATUS dxgk_ddi_query_child_status(struct dxgk_adapter *adapter, DXGK_CHILD_STATUS *child,
                                     bool non_destructive);

/* ---- devices (ddi_device.c) ------------------------------------------------------- */

/* A core bug, never a caller's: a DDI naming a device after its
 * DxgkDdiDestroyDevice.  Reported, and the call is not made. */
static inline bool dxgk_ddi_device_gone(const struct dxgk_device *device, const char *call)
{
    if (!device->ddi_destroyed)
        return false;
    ERR_(dxgk, "%s: %s after DxgkDdiDestroyDevice refused\n", device->adapter->miniport->name, call);
    return true;
}

/* On success device->driver_device is the miniport's device. */
NTSTATUS dxgk_ddi_create_device(struct dxgk_device *device, DXGK_DEVICEINFO *info);
void dxgk_ddi_destroy_device(struct dxgk_device *device);

/* ---- allocations (ddi_allocation.c) ----------------------------------------------- */

/* On success every pAllocationInfo[i].hAllocation is set. */
NTSTATUS dxgk_ddi_create_allocation(struct dxgk_adapter *adapter, DXGKARG_CREATEALLOCATION *args);
/* Open(Create) of new allocations on their device; on success each has its
 * device_allocation and is `opened`, on failure none is. */
NTSTATUS dxgk_ddi_open_allocations(struct dxgk_device *device, struct dxgk_allocation **allocs, UINT count,
                                   const void *resource_data, UINT resource_data_size);
/* Closes the device bindings of those that are `opened`. */
void dxgk_ddi_close_allocations(struct dxgk_device *device, struct dxgk_allocation **allocs, UINT count);
/* Destroys the miniport's allocations (closing a binding still open
 * first), in one call where memory allows.  `resource`: the miniport's
 * hResource, in/out, or NULL for standalone allocations; destroy_resource
 * frees the resource with them. */
void dxgk_ddi_destroy_allocations(struct dxgk_adapter *adapter, struct dxgk_allocation **allocs, UINT count,
                                  HANDLE *resource, bool destroy_resource);
/* Sharing across processes (1.6): an fd naming an allocation's memory
 * (O_CLOEXEC, the caller's), and an allocation of the adapter over one;
 * STATUS_NOT_SUPPORTED where the miniport has no such DDI or cannot. */
NTSTATUS dxgk_ddi_export_allocation(struct dxgk_adapter *adapter, HANDLE allocation, int *fd);
NTSTATUS dxgk_ddi_import_allocation(struct dxgk_adapter *adapter, KMTARG_IMPORTALLOCATION *args);
/* STATUS_NOT_SUPPORTED without DxgkDdiLock; an unlock without
 * DxgkDdiUnlock has nothing to do. */
NTSTATUS dxgk_ddi_lock(struct dxgk_adapter *adapter, DXGKARG_LOCK *args);
void dxgk_ddi_unlock(struct dxgk_adapter *adapter, HANDLE allocation, void *address);
/* GPU mappings of the core's own memory (fence values, context
 * allocations): STATUS_NOT_SUPPORTED without them; unmapping 0 is a no-op. */
bool dxgk_ddi_has_system_memory_mapping(const struct dxgk_adapter *adapter);
NTSTATUS dxgk_ddi_map_system_memory(struct dxgk_adapter *adapter, void *memory, SIZE_T size,
                                    D3DGPU_VIRTUAL_ADDRESS *va);
void dxgk_ddi_unmap_system_memory(struct dxgk_adapter *adapter, D3DGPU_VIRTUAL_ADDRESS va);

/* ---- execution (ddi_execution.c) ------------------------------------------------- */

/* The contexts' DDIs: create and destroy, and the submission path of the
 * kind (virtual: SubmitCommandVirtual; legacy: Render and SubmitCommand). */
bool dxgk_ddi_has_contexts(const struct dxgk_adapter *adapter, bool is_virtual);
/* On success args->hContext is the miniport's context. */
NTSTATUS dxgk_ddi_create_context(struct dxgk_device *device, DXGKARG_CREATECONTEXT *args);
void dxgk_ddi_destroy_context(struct dxgk_device *device, HANDLE driver_context);
NTSTATUS dxgk_ddi_render(struct dxgk_context *ctx, DXGKARG_RENDER *args);
NTSTATUS dxgk_ddi_submit_command(struct dxgk_adapter *adapter, DXGKARG_SUBMITCOMMAND *args);
NTSTATUS dxgk_ddi_submit_command_virtual(struct dxgk_adapter *adapter, DXGKARG_SUBMITCOMMANDVIRTUAL *args);
bool dxgk_ddi_has_reset_engine(const struct dxgk_adapter *adapter);
NTSTATUS dxgk_ddi_reset_engine(struct dxgk_adapter *adapter, DXGKARG_RESETENGINE *args);
/* Fences the miniport follows: all three DDIs or none. */
bool dxgk_ddi_has_fences(const struct dxgk_adapter *adapter);
NTSTATUS dxgk_ddi_create_fence(struct dxgk_adapter *adapter, KMTARG_CREATEFENCE *args);
void dxgk_ddi_destroy_fence(struct dxgk_adapter *adapter, HANDLE fence);
/* A signal cannot fail: a miniport error is only reported. */
void dxgk_ddi_signal_fence(struct dxgk_adapter *adapter, HANDLE fence, UINT64 value);
/* Fences that cross processes (1.6): both DDIs or neither.  Export gives
 * a new fd (-1 on failure); import makes a driver fence over one. */
bool dxgk_ddi_has_fence_sharing(const struct dxgk_adapter *adapter);
NTSTATUS dxgk_ddi_export_fence(struct dxgk_adapter *adapter, HANDLE fence, int *fd);
NTSTATUS dxgk_ddi_import_fence(struct dxgk_adapter *adapter, KMTARG_IMPORTFENCE *args);

/* ---- Miracast (ddi_miracast.c) ----------------------------------------------------- */

bool dxgk_ddi_has_miracast(const struct dxgk_adapter *adapter);
NTSTATUS dxgk_ddi_miracast_create_context(struct dxgk_adapter *adapter, struct _DXGK_MIRACAST_CALLBACKS *callbacks,
                                          PVOID *context, UINT *target);
void dxgk_ddi_miracast_destroy_context(struct dxgk_adapter *adapter, PVOID context);
NTSTATUS dxgk_ddi_miracast_io_control(struct dxgk_adapter *adapter, PVOID context, ULONG in_size, void *in,
                                      ULONG out_size, void *out, ULONG *returned);

#endif /* KMTSHIM_DXGKRNL_DDI_H */
