/*
 * A built-in miniport's trace line: printf-style text through the core's
 * KmtCbTrace callback, which writes it on the miniport's debug channel.
 */
#ifndef KMTSHIM_BASE_CB_TRACE_H
#define KMTSHIM_BASE_CB_TRACE_H

#include <stdarg.h>

#include "kmtshim/d3dkmddi.h"

/* Formats into a 256-byte line; nothing when k or its callback is NULL. */
void kmt_cb_vtrace(const DXGKRNL_INTERFACE *k, KMT_TRACE_LEVEL level, const char *func, const char *fmt,
                   va_list ap);

#endif
