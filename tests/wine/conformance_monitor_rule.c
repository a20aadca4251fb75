/*
 * Conformance: which monitor a window's DC opens, with the two monitors
 * window-dc-xvfb.sh lays out (the primary one, and a shorter one right
 * of it): a window wholly on the second, one straddling both (mostly on
 * either), and two on neither, each nearer one of them (MonitorFromWindow's
 * MONITOR_DEFAULTTONEAREST, by the distance between the rectangles).  Each
 * DC opens what the open by that monitor's GDI name opens; the second
 * display is source 1 of the adapter the first is source 0 of (or, with
 * one source, refused), so neither a default to the primary nor a wrong
 * rule passes.
 */
#include <stdio.h>

#include "conformance_display_open.h"

#define SIDE KMTC_WINDOW_SIDE

/* The primary monitor and the other one, if Wine lists two. */
static BOOL two_monitors(const struct monitors *m, const MONITORINFOEXW **first, const MONITORINFOEXW **second)
{
    if (m->count != 2) {
        skip("%u monitor(s): the rule needs two (tests/wine/window-dc-xvfb.sh)\n", m->count);
        return FALSE;
    }
    *first = &m->info[!(m->info[0].dwFlags & MONITORINFOF_PRIMARY)];
    *second = &m->info[m->info[0].dwFlags & MONITORINFOF_PRIMARY ? 1 : 0];
    return TRUE;
}

/* The second monitor is right of the first, top-aligned, shorter by room
 * for a window below it, as the rows' positions need. */
static BOOL layout_ok(const RECT *a, const RECT *b)
{
    BOOL good = b->left == a->right && b->top == a->top && a->bottom - b->bottom >= 2 * SIDE;

    ok(good, "monitors (%ld,%ld)-(%ld,%ld) and (%ld,%ld)-(%ld,%ld): not the layout the rows need\n", a->left,
       a->top, a->right, a->bottom, b->left, b->top, b->right, b->bottom);
    return good;
}

/* Both displays are sources of one adapter, 0 and 1.  Or the adapter has
 * one source (KMTSHIM_SOFT_SOURCES=1): the second display has none of its
 * own, its open is refused, and so is that of a window's DC on it. */
static void check_sources(struct display_open a, struct display_open b)
{
    ok(a.status == STATUS_SUCCESS && a.source == 0, "first display: %#lx, source %u\n", (unsigned long)a.status,
       a.source);
    if (b.status != STATUS_SUCCESS) {
        ok(b.status == (NTSTATUS)STATUS_INVALID_PARAMETER, "second display: %#lx\n", (unsigned long)b.status);
        trace("the second display has no source of its own\n");
        return;
    }
    ok(a.luid.LowPart == b.luid.LowPart && a.luid.HighPart == b.luid.HighPart, "two adapters\n");
    ok(b.source == 1, "second display: source %u\n", b.source);
}

void kmtc_monitor_rule(void)
{
    static struct monitors m;
    const MONITORINFOEXW *first, *second;
    struct display_open one, two;
    RECT a, b;

    if (!windc_begin())
        return;
    windc_monitors(&m);
    if (!two_monitors(&m, &first, &second) || !layout_ok(&first->rcMonitor, &second->rcMonitor)) {
        windc_end();
        return;
    }
    a = first->rcMonitor;
    b = second->rcMonitor;
    one = open_by_name(first->szDevice);
    two = open_by_name(second->szDevice);
    check_sources(one, two);

    check_window_at("a window wholly on the second monitor", b.left + 16, b.top + 16, two);
    check_window_at("a window 3/4 on the second monitor", b.left - SIDE / 4, b.top + 16, two);
    check_window_at("a window 3/4 on the first monitor", b.left - 3 * SIDE / 4, b.top + 16, one);
    /* beside the first (200 px right of it), 16 px below the second */
    check_window_at("a window on neither, nearest the second", a.right + 200, b.bottom + 16, two);
    /* 16 px right of the first, further below the second */
    check_window_at("a window on neither, nearest the first", a.right + 16, a.bottom - SIDE - 4, one);
    windc_end();
}
