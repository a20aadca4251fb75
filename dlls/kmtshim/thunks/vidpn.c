/*
 * Display ownership thunks: SetVidPnSourceOwner (and its 1 and 2 forms),
 * CheckVidPnExclusiveOwnership, CheckExclusiveOwnership, CheckOcclusion.
 */
#include "thunk.h"

/* Most entries one SetVidPnSourceOwner call may carry: one per source. */
#define MAX_OWNER_ENTRIES DXGK_MAX_VIDPN_SOURCES

/* The shared tail of the three SetVidPnSourceOwner forms: the arrays are
 * copied (a thread rewriting them mid-call changes nothing) and handed to
 * the core.  Count 0 releases; its arrays are not read. */
static NTSTATUS set_owner(const D3DKMT_SETVIDPNSOURCEOWNER *k)
{
    D3DKMT_VIDPNSOURCEOWNER_TYPE types[MAX_OWNER_ENTRIES];
    D3DDDI_VIDEO_PRESENT_SOURCE_ID ids[MAX_OWNER_ENTRIES];
    UINT i;

    TRACE_(d3dkmt, "hDevice %#x, pType %p, pVidPnSourceId %p, VidPnSourceCount %u\n", k->hDevice,
           (const void *)k->pType, (const void *)k->pVidPnSourceId, k->VidPnSourceCount);
    if (k->VidPnSourceCount > MAX_OWNER_ENTRIES)
        return STATUS_INVALID_PARAMETER;
    if (k->VidPnSourceCount) {
        if (!kmt_user_ptr_ok(k->pType, k->VidPnSourceCount * sizeof(*types)) ||
            !kmt_user_ptr_ok(k->pVidPnSourceId, k->VidPnSourceCount * sizeof(*ids)))
            return STATUS_INVALID_PARAMETER;
        memcpy(types, k->pType, k->VidPnSourceCount * sizeof(*types));
        memcpy(ids, k->pVidPnSourceId, k->VidPnSourceCount * sizeof(*ids));
        for (i = 0; i < k->VidPnSourceCount; i++)
            TRACE_(d3dkmt, "  [%u] source %u, type %d\n", i, ids[i], (int)types[i]);
    }
    return dxgk_set_vidpn_owner(k->hDevice, types, ids, k->VidPnSourceCount);
}

NTSTATUS APIENTRY D3DKMTSetVidPnSourceOwner(const D3DKMT_SETVIDPNSOURCEOWNER *desc)
{
    D3DKMT_SETVIDPNSOURCEOWNER k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    THUNK_RETURN(set_owner(&k));
}

/* Flags: AllowOutputDuplication and DisableDWMVirtualMode change nothing
 * here (no desktop duplication, no DWM); UseNtHandles needs the handle
 * array of the 2 form; reserved bits are STATUS_INVALID_PARAMETER. */
static bool owner_flags_ok(D3DKMT_VIDPNSOURCEOWNER_FLAGS flags, bool has_nt_handles)
{
    return !flags.Reserved && (!flags.UseNtHandles || has_nt_handles);
}

NTSTATUS APIENTRY D3DKMTSetVidPnSourceOwner1(const D3DKMT_SETVIDPNSOURCEOWNER1 *desc)
{
    D3DKMT_SETVIDPNSOURCEOWNER1 k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "Flags %#x\n", k.Flags.Value);
    if (!owner_flags_ok(k.Flags, false))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    THUNK_RETURN(set_owner(&k.Version0));
}

/* With UseNtHandles every source comes with an NT handle of its own; the
 * array must be readable, and kmtshim, which has no source objects to
 * open, does not use the handles. */
NTSTATUS APIENTRY D3DKMTSetVidPnSourceOwner2(const D3DKMT_SETVIDPNSOURCEOWNER2 *desc)
{
    D3DKMT_SETVIDPNSOURCEOWNER2 k;
    UINT count;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    count = k.Version1.Version0.VidPnSourceCount;
    TRACE_(d3dkmt, "Flags %#x, pVidPnSourceNtHandles %p\n", k.Version1.Flags.Value,
           (const void *)k.pVidPnSourceNtHandles);
    if (!owner_flags_ok(k.Version1.Flags, true))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if (k.Version1.Flags.UseNtHandles && count &&
        !kmt_user_ptr_ok(k.pVidPnSourceNtHandles, (size_t)count * sizeof(HANDLE)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    THUNK_RETURN(set_owner(&k.Version1.Version0));
}

NTSTATUS APIENTRY D3DKMTCheckVidPnExclusiveOwnership(const D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP *desc)
{
    D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hAdapter %#x, VidPnSourceId %u\n", k.hAdapter, k.VidPnSourceId);
    THUNK_RETURN(dxgk_check_vidpn_exclusive(k.hAdapter, k.VidPnSourceId));
}

/* A BOOLEAN, not an NTSTATUS: TRUE while a source has an EXCLUSIVE owner
 * (an EMULATED one leaves the desktop visible, as CheckVidPn... says). */
BOOLEAN APIENTRY D3DKMTCheckExclusiveOwnership(void)
{
    BOOLEAN owned;

    if (dxgk_status_is_exhaustion(dxgk_process_init()))
        owned = FALSE;                   /* no process, no owner */
    else
        owned = dxgk_vidpn_any_exclusive();
    if (KMT_TRACE_ON(d3dkmt))
        kmt_debug_log(&kmt_dbch_d3dkmt, KMT_DBG_TRACE, __func__, "-> %s\n", owned ? "TRUE" : "FALSE");
    return owned;
}

/* Windows answers for the window's monitor; kmtshim cannot map a window
 * to a source (single-monitor rule of the notes): any EXCLUSIVE owner
 * occludes every window.  The window itself is not checked natively. */
NTSTATUS APIENTRY D3DKMTCheckOcclusion(const D3DKMT_CHECKOCCLUSION *desc)
{
    D3DKMT_CHECKOCCLUSION k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hWindow %p\n", (void *)k.hWindow);
    if (!k.hWindow)
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    THUNK_RETURN(dxgk_vidpn_any_exclusive() ? STATUS_GRAPHICS_PRESENT_OCCLUDED : STATUS_SUCCESS);
}
