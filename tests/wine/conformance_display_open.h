/*
 * What the display-open subtests share (conformance_display_open.c,
 * conformance_window_dc.c): the software adapter's presence, the refusal
 * check, which through the gdi32 proxy expects Wine's own answer
 * (routing.txt's `first` rule), a descriptor naming a DC.
 */
#ifndef KMTSHIM_CONFORMANCE_DISPLAY_OPEN_H
#define KMTSHIM_CONFORMANCE_DISPLAY_OPEN_H

#include "conformance.h"

/* A refusal: kmtshim's STATUS_INVALID_PARAMETER, or Wine's answer through the proxy. */
#define expect_refused(name, desc_type, desc) do {                                        \
        desc_type copy_ = (desc);                                                         \
        NTSTATUS want_ = STATUS_INVALID_PARAMETER, got_;                                  \
        if (kmt_wine_api.name) {                                                          \
            want_ = kmt_wine_api.name(&copy_);                                            \
            copy_ = (desc);                                                               \
        }                                                                                 \
        got_ = kmt_api.name(&copy_);                                                      \
        ok(got_ == want_, "%s(%s): %#lx, expected %#lx\n", #name, #desc, (unsigned long)got_, \
           (unsigned long)want_);                                                         \
        if (!got_ && copy_.hAdapter)                                                      \
            kmt_close_adapter(copy_.hAdapter);                                            \
    } while (0)

/* The software adapter is there (its LUID in `luid`), or FALSE (skipped). */
static inline BOOL soft_adapter_here(LUID *luid)
{
    D3DKMT_HANDLE h = kmt_open_soft_adapter(luid);

    if (!h) {
        skip("no software adapter through %s\n", kmt_api_via);
        return FALSE;
    }
    kmt_close_adapter(h);
    return TRUE;
}

static inline D3DKMT_OPENADAPTERFROMHDC from_hdc(HDC hdc)
{
    D3DKMT_OPENADAPTERFROMHDC o;

    memset(&o, 0, sizeof(o));
    o.hDc = hdc;
    return o;
}

#endif
