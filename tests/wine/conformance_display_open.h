/*
 * What the display-open subtests share (conformance_display_open.c,
 * conformance_window_dc.c, conformance_monitor_rule.c): the software
 * adapter's presence, the refusal check, which through the gdi32 proxy
 * expects Wine's own answer (routing.txt's `first` rule), a descriptor
 * naming a DC, and test windows with the open their DC must match.
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

/* conformance_window_dc.c's windows, for conformance_monitor_rule.c */
#define KMTC_WINDOW_SIDE 64     /* a test window is a square this wide */
#define KMTC_MAX_MONITORS 16

/* What opening a display by its GDI name gives. */
struct display_open {
    NTSTATUS status;
    LUID luid;
    UINT source;
};

struct monitors {
    unsigned count;
    MONITORINFOEXW info[KMTC_MAX_MONITORS];
};

struct display_open open_by_name(const WCHAR *name);
/* The soft adapter, user32/gdi32 and the window classes are there and a
 * window can be created (not so in headless Wine: skipped), or FALSE. */
BOOL windc_begin(void);
void windc_end(void);
/* Wine's monitors (EnumDisplayMonitors, GetMonitorInfoW). */
void windc_monitors(struct monitors *m);
/* A popup window at (x, y) is there, and its DC opens what `want` opened. */
void check_window_at(const char *what, int x, int y, struct display_open want);

#endif
