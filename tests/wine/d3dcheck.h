/* Shared by d3d9_check, d3d11_check and dxgi_check: one line per step,
 * "STEP: RESULT", which wined3d-proxy.sh compares between a prefix with the
 * gdi32 proxy and one without.  Lines starting with '#' carry values that
 * differ by design (a LUID, a budget) and are left out of the comparison;
 * the predicate on them is a compared step of its own. */
#ifndef KMT_D3DCHECK_H
#define KMT_D3DCHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <windows.h>

static int d3dcheck_failures;

/* A compared line. */
static inline void step(const char *name, const char *fmt, ...)
{
    va_list ap;

    printf("%s: ", name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* A line left out of the comparison. */
static inline void note(const char *fmt, ...)
{
    va_list ap;

    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* A compared step that must succeed: prints the HRESULT, counts a failure. */
static inline int step_hr(const char *name, HRESULT hr)
{
    if (SUCCEEDED(hr))
        step(name, "ok");
    else
    {
        step(name, "FAILED hr 0x%08lx", (unsigned long)hr);
        d3dcheck_failures++;
    }
    return SUCCEEDED(hr);
}

/* A compared predicate over values that may differ (printed as a note). */
static inline void step_pred(const char *name, int holds)
{
    step(name, holds ? "yes" : "NO");
    if (!holds)
        d3dcheck_failures++;
}

static inline LRESULT CALLBACK d3dcheck_wndproc(HWND hwnd, UINT msg, WPARAM wp, LPARAM lp)
{
    return DefWindowProcA(hwnd, msg, wp, lp);
}

/* A visible 640x480 window for the swap chains. */
static inline HWND d3dcheck_window(const char *title)
{
    WNDCLASSA wc = {0};
    HWND hwnd;

    wc.lpfnWndProc = d3dcheck_wndproc;
    wc.hInstance = GetModuleHandleA(NULL);
    wc.lpszClassName = "kmtshim_d3dcheck";
    RegisterClassA(&wc);
    hwnd = CreateWindowA("kmtshim_d3dcheck", title, WS_OVERLAPPEDWINDOW | WS_VISIBLE,
                         0, 0, 640, 480, NULL, NULL, wc.hInstance, NULL);
    step("window", hwnd ? "ok" : "FAILED");
    if (!hwnd)
        d3dcheck_failures++;
    return hwnd;
}

/* Lets the window manager and Wine's X11 driver settle between steps. */
static inline void d3dcheck_pump(void)
{
    MSG msg;

    while (PeekMessageA(&msg, NULL, 0, 0, PM_REMOVE))
    {
        TranslateMessage(&msg);
        DispatchMessageA(&msg);
    }
}

static inline int d3dcheck_exit(const char *program)
{
    printf("%s: %s, %d failed steps\n", program, d3dcheck_failures ? "FAILED" : "OK", d3dcheck_failures);
    fflush(stdout);
    return d3dcheck_failures ? 1 : 0;
}

#endif
