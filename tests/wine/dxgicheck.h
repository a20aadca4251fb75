/* The DXGI steps d3d11_check and dxgi_check share (after d3dcheck.h). */
#ifndef KMT_DXGICHECK_H
#define KMT_DXGICHECK_H

#include <string.h>
#include <dxgi1_4.h>

#include "d3dcheck.h"

/* A windowed 640x480 swap chain on hwnd. */
static inline HRESULT dxgicheck_swap_chain(IDXGIFactory *factory, IUnknown *device, HWND hwnd,
                                           IDXGISwapChain **sc)
{
    DXGI_SWAP_CHAIN_DESC desc = {0};

    desc.BufferDesc.Width = 640;
    desc.BufferDesc.Height = 480;
    desc.BufferDesc.Format = DXGI_FORMAT_R8G8B8A8_UNORM;
    desc.SampleDesc.Count = 1;
    desc.BufferUsage = DXGI_USAGE_RENDER_TARGET_OUTPUT;
    desc.BufferCount = 1;
    desc.OutputWindow = hwnd;
    desc.Windowed = TRUE;
    desc.SwapEffect = DXGI_SWAP_EFFECT_DISCARD;
    return IDXGIFactory_CreateSwapChain(factory, device, &desc, sc);
}

/* IDXGIAdapter3's budget (wined3d's QueryVideoMemoryInfo): the values are
 * a note, the rule they must follow a compared step.  The rule is a budget
 * > 0 with usage and available reservation not above it (kmtshim's
 * answer).  With KMT_WINE_BUDGET=wine in the environment (Wine's own
 * answer, without the proxy) all three 0 pass too: a Wine whose
 * QueryVideoMemoryInfo succeeds reports 0 where it has no Vulkan driver
 * to ask, one whose gdi32 fails it leaves wined3d's own estimate (> 0). */
static inline void dxgicheck_budget(IDXGIAdapter *adapter)
{
    DXGI_QUERY_VIDEO_MEMORY_INFO info;
    IDXGIAdapter3 *adapter3 = NULL;
    char rule[8] = "";
    BOOL wine, zero;
    HRESULT hr;

    GetEnvironmentVariableA("KMT_WINE_BUDGET", rule, sizeof(rule));
    wine = !strcmp(rule, "wine");

    hr = IDXGIAdapter_QueryInterface(adapter, &IID_IDXGIAdapter3, (void **)&adapter3);
    if (!step_hr("IDXGIAdapter3", hr))
        return;
    hr = IDXGIAdapter3_QueryVideoMemoryInfo(adapter3, 0, DXGI_MEMORY_SEGMENT_GROUP_LOCAL, &info);
    if (step_hr("QueryVideoMemoryInfo local", hr))
    {
        note("budget %llu MiB, usage %llu KiB, available for reservation %llu MiB",
             (unsigned long long)info.Budget >> 20, (unsigned long long)info.CurrentUsage >> 10,
             (unsigned long long)info.AvailableForReservation >> 20);
        note("budget rule: %s",
             wine ? "all 0, or budget > 0 with usage and available reservation <= budget"
                  : "budget > 0, usage and available reservation <= budget");
        zero = !info.Budget && !info.CurrentUsage && !info.AvailableForReservation;
        step_pred("budget follows the rule",
                  (wine && zero) || (info.Budget > 0 && info.CurrentUsage <= info.Budget &&
                                     info.AvailableForReservation <= info.Budget));
    }
    hr = IDXGIAdapter3_QueryVideoMemoryInfo(adapter3, 0, DXGI_MEMORY_SEGMENT_GROUP_NON_LOCAL, &info);
    if (step_hr("QueryVideoMemoryInfo non-local", hr))
        note("non-local budget %llu MiB", (unsigned long long)info.Budget >> 20);
    IDXGIAdapter3_Release(adapter3);
}

#endif
