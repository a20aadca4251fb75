/* DXGI through Wine's wined3d: the factory, adapters with their LUID,
 * outputs and their mode lists, the video-memory budget, output ownership
 * and a swap chain's fullscreen toggle.  One line per step (d3dcheck.h);
 * the LUID and the budget are notes (they differ by design when the
 * adapter is kmtshim's), their predicates are compared. */
#define COBJMACROS
#include <initguid.h>
#include <d3d11.h>
#include <stdlib.h>

#include "dxgicheck.h"

static void output_info(IDXGIOutput *output, unsigned int index)
{
    UINT count = 0;
    DXGI_MODE_DESC *modes;
    DXGI_OUTPUT_DESC desc;
    char name[64];
    HRESULT hr;

    hr = IDXGIOutput_GetDesc(output, &desc);
    if (step_hr("output GetDesc", hr))
    {
        WideCharToMultiByte(CP_ACP, 0, desc.DeviceName, -1, name, sizeof(name), NULL, NULL);
        step("output", "%u '%s' attached %d desktop (%ld,%ld)-(%ld,%ld) rotation %u", index, name,
             desc.AttachedToDesktop, desc.DesktopCoordinates.left, desc.DesktopCoordinates.top,
             desc.DesktopCoordinates.right, desc.DesktopCoordinates.bottom, (unsigned)desc.Rotation);
    }
    hr = IDXGIOutput_GetDisplayModeList(output, DXGI_FORMAT_R8G8B8A8_UNORM, 0, &count, NULL);
    if (!step_hr("GetDisplayModeList count", hr))
        return;
    step("display modes", "%u", count);
    if (!count || !(modes = calloc(count, sizeof(*modes))))
        return;
    hr = IDXGIOutput_GetDisplayModeList(output, DXGI_FORMAT_R8G8B8A8_UNORM, 0, &count, modes);
    if (step_hr("GetDisplayModeList", hr))
        step("largest mode", "%ux%u", modes[count - 1].Width, modes[count - 1].Height);
    free(modes);
}

/* Exclusive ownership of the first output from a second factory (its own
 * wined3d, so its own D3DKMT device): refused while the first factory's
 * device holds it, granted once that one released it. */
static void contend(void)
{
    IDXGIFactory1 *factory = NULL;
    IDXGIAdapter1 *adapter = NULL;
    IDXGIOutput *output = NULL;
    ID3D11Device *dev = NULL;
    HRESULT hr;

    hr = CreateDXGIFactory1(&IID_IDXGIFactory1, (void **)&factory);
    if (SUCCEEDED(hr))
        hr = IDXGIFactory1_EnumAdapters1(factory, 0, &adapter);
    if (SUCCEEDED(hr))
        hr = IDXGIAdapter1_EnumOutputs(adapter, 0, &output);
    if (SUCCEEDED(hr))
        hr = D3D11CreateDevice((IDXGIAdapter *)adapter, D3D_DRIVER_TYPE_UNKNOWN, NULL, 0, NULL, 0,
                               D3D11_SDK_VERSION, &dev, NULL, NULL);
    if (step_hr("second factory's output and device", hr))
    {
        hr = IDXGIOutput_TakeOwnership(output, (IUnknown *)dev, TRUE);
        step("second factory's TakeOwnership exclusive", "hr 0x%08lx", (unsigned long)hr);
        if (SUCCEEDED(hr))
            IDXGIOutput_ReleaseOwnership(output);
    }
    if (dev) ID3D11Device_Release(dev);
    if (output) IDXGIOutput_Release(output);
    if (adapter) IDXGIAdapter1_Release(adapter);
    if (factory) IDXGIFactory1_Release(factory);
}

/* Exclusive ownership of the output (SetVidPnSourceOwner underneath) and a
 * swap chain that goes fullscreen on it and back. */
static void fullscreen(IDXGIFactory1 *factory, IDXGIAdapter1 *adapter, IDXGIOutput *output)
{
    IDXGIOutput *target = NULL;
    IDXGISwapChain *sc = NULL;
    ID3D11Device *dev = NULL;
    BOOL on = FALSE;
    HWND hwnd;
    HRESULT hr;

    hr = D3D11CreateDevice((IDXGIAdapter *)adapter, D3D_DRIVER_TYPE_UNKNOWN, NULL, 0, NULL, 0,
                           D3D11_SDK_VERSION, &dev, NULL, NULL);
    if (!step_hr("D3D11CreateDevice on the adapter", hr))
        return;
    step_hr("output TakeOwnership exclusive", IDXGIOutput_TakeOwnership(output, (IUnknown *)dev, TRUE));
    contend();
    IDXGIOutput_ReleaseOwnership(output);
    step("output ReleaseOwnership", "done");
    contend();

    hwnd = d3dcheck_window("dxgi_check");
    hr = dxgicheck_swap_chain((IDXGIFactory *)factory, (IUnknown *)dev, hwnd, &sc);
    if (step_hr("CreateSwapChain windowed", hr))
    {
        step_hr("SetFullscreenState TRUE", IDXGISwapChain_SetFullscreenState(sc, TRUE, output));
        d3dcheck_pump();
        hr = IDXGISwapChain_GetFullscreenState(sc, &on, &target);
        if (step_hr("GetFullscreenState", hr))
            step("fullscreen", "%d on the output %s", on, target == output ? "given" : "other");
        if (target) IDXGIOutput_Release(target);
        step_hr("Present fullscreen", IDXGISwapChain_Present(sc, 0, 0));
        step_hr("SetFullscreenState FALSE", IDXGISwapChain_SetFullscreenState(sc, FALSE, NULL));
        d3dcheck_pump();
        hr = IDXGISwapChain_GetFullscreenState(sc, &on, NULL);
        if (step_hr("GetFullscreenState", hr))
            step("fullscreen", "%d", on);
        IDXGISwapChain_Release(sc);
    }
    DestroyWindow(hwnd);
    ID3D11Device_Release(dev);
}

int main(void)
{
    IDXGIFactory1 *factory = NULL;
    IDXGIAdapter1 *adapter, *first = NULL;
    IDXGIOutput *output, *first_output = NULL;
    DXGI_ADAPTER_DESC1 desc;
    unsigned int i, j;
    char name[128];
    HRESULT hr;

    hr = CreateDXGIFactory1(&IID_IDXGIFactory1, (void **)&factory);
    if (!step_hr("CreateDXGIFactory1", hr))
        return d3dcheck_exit("dxgi_check");
    for (i = 0; IDXGIFactory1_EnumAdapters1(factory, i, &adapter) == S_OK; i++)
    {
        hr = IDXGIAdapter1_GetDesc1(adapter, &desc);
        if (step_hr("adapter GetDesc1", hr))
        {
            WideCharToMultiByte(CP_ACP, 0, desc.Description, -1, name, sizeof(name), NULL, NULL);
            step("adapter", "%u '%s' vendor 0x%04x device 0x%04x flags 0x%x", i, name, desc.VendorId,
                 desc.DeviceId, desc.Flags);
            note("adapter %u LUID %08lx:%08lx (differs by design when the adapter is kmtshim's)", i,
                 desc.AdapterLuid.HighPart, desc.AdapterLuid.LowPart);
            step_pred("adapter LUID non-zero", desc.AdapterLuid.HighPart || desc.AdapterLuid.LowPart);
        }
        for (j = 0; IDXGIAdapter1_EnumOutputs(adapter, j, &output) == S_OK; j++)
        {
            output_info(output, j);
            if (!i && !j)
                first_output = output;
            else
                IDXGIOutput_Release(output);
        }
        step("outputs", "%u on adapter %u", j, i);
        if (!i)
            first = adapter;
        else
            IDXGIAdapter1_Release(adapter);
    }
    step("adapters", "%u", i);
    if (first)
    {
        dxgicheck_budget((IDXGIAdapter *)first);
        if (first_output)
            fullscreen(factory, first, first_output);
        else
            d3dcheck_failures++;
    }
    else
        d3dcheck_failures++;
    if (first_output) IDXGIOutput_Release(first_output);
    if (first) IDXGIAdapter1_Release(first);
    IDXGIFactory1_Release(factory);
    return d3dcheck_exit("dxgi_check");
}
