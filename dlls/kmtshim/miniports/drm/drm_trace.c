/*
 * DRM miniport: the trace line every file of the miniport writes through
 * the core's KmtCbTrace.
 */
#include <stdarg.h>
#include <stdio.h>

#include "drm_winsys.h"
#include "drm_trace.h"

void kdrm_trace(struct kdrm_adapter *a, KMT_TRACE_LEVEL level, const char *func, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    if (!a || !a->dxgkrnl.KmtCbTrace)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    a->dxgkrnl.KmtCbTrace(a->dxgkrnl.DeviceHandle, level, func, msg);
}
