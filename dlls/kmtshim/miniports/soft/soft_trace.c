/*
 * Software miniport: the trace line every file of the miniport writes
 * through the core's KmtCbTrace.
 */
#include <stdarg.h>

#include "base/kmt_cb_trace.h"
#include "soft.h"

void soft_trace(struct soft_adapter *a, KMT_TRACE_LEVEL level, const char *func, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    kmt_cb_vtrace(a ? &a->dxgkrnl : NULL, level, func, fmt, ap);
    va_end(ap);
}
