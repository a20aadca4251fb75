/*
 * A built-in miniport's trace line through KmtCbTrace (kmt_cb_trace.h).
 */
#include <stdio.h>

#include "base/kmt_cb_trace.h"

void kmt_cb_vtrace(const DXGKRNL_INTERFACE *k, KMT_TRACE_LEVEL level, const char *func, const char *fmt,
                   va_list ap)
{
    char msg[256];

    if (!k || !k->KmtCbTrace)
        return;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    k->KmtCbTrace(k->DeviceHandle, level, func, msg);
}
