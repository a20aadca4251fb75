/*
 * Escape thunk.
 */
#include <stdlib.h>

#include "thunk.h"
#include "base/user_memory.h"

NTSTATUS APIENTRY D3DKMTEscape(const D3DKMT_ESCAPE *desc)
{
    D3DKMT_ESCAPE k;
    unsigned char small[256], *buf = small;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hAdapter %#x, hDevice %#x, Type %d, Flags %#x, data %p/%u, hContext %#x\n",
           k.hAdapter, k.hDevice, k.Type, k.Flags.Value, k.pPrivateDriverData,
           k.PrivateDriverDataSize, k.hContext);
    /* a runtime may clear a resource's runtime data with an empty update */
    if (k.Type == D3DKMT_ESCAPE_UPDATE_RESOURCE_WINE && !k.PrivateDriverDataSize)
        THUNK_RETURN(dxgk_escape(&k, NULL));
    if (!k.PrivateDriverDataSize || k.PrivateDriverDataSize > DXGK_MAX_PRIVATE_DATA ||
        !kmt_user_ptr_ok(k.pPrivateDriverData, k.PrivateDriverDataSize))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if (k.PrivateDriverDataSize > sizeof(small) && !(buf = malloc(k.PrivateDriverDataSize)))
        THUNK_RETURN(STATUS_NO_MEMORY);
    memcpy(buf, k.pPrivateDriverData, k.PrivateDriverDataSize);
    status = dxgk_escape(&k, buf);
    /* in/out, and the driver's answer also travels with a failure status;
     * a buffer the driver left alone is not written (it may be read-only
     * input), one it changed must be writable */
    if (!kmt_user_write_back(k.pPrivateDriverData, buf, k.PrivateDriverDataSize))
        status = STATUS_ACCESS_VIOLATION;
    if (buf != small)
        free(buf);
    THUNK_RETURN(status);
}
