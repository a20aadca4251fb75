/*
 * Shared by the gdi32 proxy tests: is the proxy in place, and the table of
 * D3DKMT functions looked up in "gdi32".
 */
#ifndef KMTSHIM_PROXY_COMMON_H
#define KMTSHIM_PROXY_COMMON_H

#include "conformance.h"

/* gdi32 as this process sees it must be the proxy: it exports the D3DKMT
 * functions Wine's lacks and has Wine's gdi32 loaded as gdi32_orig.dll.
 * Fails a check (not a skip) otherwise: the runner enables the proxy. */
static inline BOOL proxy_in_place(HMODULE gdi32)
{
    BOOL in_place = gdi32 && GetProcAddress(gdi32, "D3DKMTCreateAllocation") &&
                    GetModuleHandleA("gdi32_orig.dll");

    ok(in_place, "gdi32 (%p) is not the kmtshim proxy: is the override gdi32=native,builtin set?\n",
       (void *)gdi32);
    return in_place;
}

#endif
