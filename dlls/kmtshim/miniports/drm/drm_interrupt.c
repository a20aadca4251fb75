/*
 * DRM miniport: interrupts to the core - DxgkCbNotifyInterrupt, and the
 * fault a submission raises when the kernel refused it or its results
 * could not be written back.
 */
#include <errno.h>

#include "drm_winsys.h"
#include "drm_cs.h"
#include "drm_trace.h"

void kdrm_raise(struct kdrm_adapter *a, const DXGKARGCB_NOTIFY_INTERRUPT_DATA *irq)
{
    if (a->dxgkrnl.DxgkCbNotifyInterrupt)
        a->dxgkrnl.DxgkCbNotifyInterrupt(a->dxgkrnl.DeviceHandle, irq);
}

void kdrm_raise_fault(struct kdrm_adapter *a, UINT fence_id, UINT node, int err, D3DGPU_VIRTUAL_ADDRESS va)
{
    DXGKARGCB_NOTIFY_INTERRUPT_DATA irq = { 0 };

    if (err == -EFAULT) {
        irq.InterruptType = DXGK_INTERRUPT_DMA_PAGE_FAULTED;
        irq.DmaPageFaulted.FaultedFenceId = fence_id;
        irq.DmaPageFaulted.NodeOrdinal = node;
        irq.DmaPageFaulted.FaultedVirtualAddress = va;
    } else {
        irq.InterruptType = DXGK_INTERRUPT_DMA_FAULTED;
        irq.DmaFaulted.FaultedFenceId = fence_id;
        irq.DmaFaulted.NodeOrdinal = node;
        irq.DmaFaulted.Status = kdrm_status_from_errno(err);
    }
    kdrm_raise(a, &irq);
}
