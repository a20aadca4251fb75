/*
 * Display-based adapter opens: OpenAdapterFromGdiDisplayName,
 * OpenAdapterFromDeviceName, OpenAdapterFromHdc; and the Kmt extras that
 * name an adapter by its device interface path.
 */
#include "config.h"
#include "kmtshim/kmtshim.h"

#include "thunk.h"
#include "base/user_memory.h"
#include "dxgkrnl/device_path.h"

_Static_assert(KMT_DEVICE_PATH_DEFAULT_ADAPTER == DXGK_PATH_DEFAULT_ADAPTER &&
               KMT_DEVICE_PATH_NEED_SOURCE == DXGK_PATH_NEED_SOURCE &&
               KMT_DEVICE_PATH_NO_HANDLE == DXGK_PATH_NO_HANDLE, "one set of flags");
_Static_assert(KMT_DEVICE_PATH_MAX == DXGK_DEVICE_PATH_MAX, "one path size");

/* A caller's NUL-terminated string, copied a page at most at a time (the
 * string may end just before an unmapped page).  false: unreadable, or no
 * NUL within `max` WCHARs. */
static bool copy_user_string(const WCHAR *src, WCHAR *dst, size_t max)
{
    size_t done = 0;

    if (!kmt_user_ptr_ok(src, sizeof(WCHAR)))
        return false;
    while (done < max) {
        uintptr_t at = (uintptr_t)(src + done);
        size_t chunk = (4096 - (at & 4095)) / sizeof(WCHAR);

        if (chunk > max - done)
            chunk = max - done;
        if (!chunk || !kmt_user_copy_in(dst + done, src + done, chunk * sizeof(WCHAR)))
            return false;
        for (size_t i = done; i < done + chunk; i++)
            if (!dst[i])
                return true;
        done += chunk;
    }
    return false;
}

NTSTATUS APIENTRY D3DKMTOpenAdapterFromGdiDisplayName(D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME *desc)
{
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME k;
    D3DKMT_HANDLE h = 0;
    LUID luid;
    UINT source = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    status = dxgk_open_adapter_from_display_name(k.DeviceName, sizeof(k.DeviceName) / sizeof(WCHAR), &h, &luid,
                                                 &source);
    if (!status) {
        TRACE_(d3dkmt, "hAdapter %#x, luid %08x:%08x, source %u\n", h, (unsigned)luid.HighPart,
               (unsigned)luid.LowPart, source);
        desc->hAdapter = h;
        desc->AdapterLuid = luid;
        desc->VidPnSourceId = source;
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTOpenAdapterFromDeviceName(D3DKMT_OPENADAPTERFROMDEVICENAME *desc)
{
    D3DKMT_HANDLE h = 0;
    LUID luid;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    status = KmtOpenAdapterFromDevicePath(desc->pDeviceName, 0, 0, &h, &luid);
    if (!status) {
        desc->hAdapter = h;
        desc->AdapterLuid = luid;
    }
    THUNK_RETURN(status);
}

/* Natively there is no GDI: no value is a display's DC, and an HDC that is
 * not one is STATUS_INVALID_PARAMETER on Windows (the one failure
 * Microsoft's page for the function gives). */
NTSTATUS APIENTRY D3DKMTOpenAdapterFromHdc(D3DKMT_OPENADAPTERFROMHDC *desc)
{
    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "hDc %p: no GDI here\n", desc->hDc);
    THUNK_RETURN(STATUS_INVALID_PARAMETER);
}

NTSTATUS KmtOpenAdapterFromDevicePath(const WCHAR *path, UINT flags, UINT source,
                                      D3DKMT_HANDLE *hAdapter, LUID *luid)
{
    WCHAR copy[DXGK_DEVICE_PATH_MAX];
    D3DKMT_HANDLE h = 0;
    LUID l = { 0, 0 };
    NTSTATUS status;

    THUNK_ENTER();
    if (flags & ~(KMT_DEVICE_PATH_DEFAULT_ADAPTER | KMT_DEVICE_PATH_NEED_SOURCE |
                  KMT_DEVICE_PATH_NO_HANDLE))
        return STATUS_INVALID_PARAMETER;
    if (!(flags & KMT_DEVICE_PATH_NO_HANDLE) && !kmt_user_ptr_ok(hAdapter, sizeof(*hAdapter)))
        return STATUS_INVALID_PARAMETER;
    if (!kmt_user_ptr_ok(luid, sizeof(*luid)))
        return STATUS_INVALID_PARAMETER;
    /* a path longer than any adapter's names none: refused like garbage */
    if (!copy_user_string(path, copy, sizeof(copy) / sizeof(WCHAR)))
        return STATUS_INVALID_PARAMETER;
    status = dxgk_open_adapter_from_device_path(copy, flags, source, &h, &l);
    TRACE_(d3dkmt, "flags %#x, source %u -> hAdapter %#x, luid %08x:%08x\n", flags, source, h,
           (unsigned)l.HighPart, (unsigned)l.LowPart);
    if (!status) {
        if (!(flags & KMT_DEVICE_PATH_NO_HANDLE))
            *hAdapter = h;
        *luid = l;
    }
    return status;
}

NTSTATUS KmtQueryAdapterDeviceName(D3DKMT_HANDLE hAdapter, WCHAR *name, UINT chars)
{
    WCHAR path[DXGK_DEVICE_PATH_MAX];
    size_t len = 0;
    NTSTATUS status;

    THUNK_ENTER();
    if (!chars || !kmt_user_ptr_ok(name, (size_t)chars * sizeof(WCHAR)))
        return STATUS_INVALID_PARAMETER;
    if ((status = dxgk_adapter_device_path(hAdapter, path)))
        return status;
    while (path[len])
        len++;
    if (len + 1 > chars)
        return STATUS_BUFFER_TOO_SMALL;
    if (!kmt_user_copy_out(name, path, (len + 1) * sizeof(WCHAR)))
        return STATUS_ACCESS_VIOLATION;
    return STATUS_SUCCESS;
}
