/* D3D9 through Wine's wined3d: adapters, a windowed device, Reset to
 * fullscreen at the current mode and back, presents, the texture memory.
 * One line per step (d3dcheck.h); exit status 1 when a step failed. */
#define COBJMACROS
#include <d3d9.h>

#include "d3dcheck.h"

static void clear_present(IDirect3DDevice9 *dev, const char *name, D3DCOLOR color)
{
    HRESULT hr = IDirect3DDevice9_Clear(dev, 0, NULL, D3DCLEAR_TARGET, color, 1.0f, 0);

    if (SUCCEEDED(hr))
        hr = IDirect3DDevice9_Present(dev, NULL, NULL, NULL, NULL);
    step_hr(name, hr);
    d3dcheck_pump();
}

int main(void)
{
    D3DPRESENT_PARAMETERS pp = {0};
    D3DADAPTER_IDENTIFIER9 id;
    IDirect3DDevice9 *dev = NULL;
    D3DDISPLAYMODE mode;
    IDirect3D9 *d3d;
    UINT mem;
    HWND hwnd;
    HRESULT hr;

    d3d = Direct3DCreate9(D3D_SDK_VERSION);
    step("Direct3DCreate9", d3d ? "ok" : "FAILED");
    if (!d3d)
        return d3dcheck_exit("d3d9_check") | 1;
    step("adapter count", "%u", IDirect3D9_GetAdapterCount(d3d));
    hr = IDirect3D9_GetAdapterIdentifier(d3d, D3DADAPTER_DEFAULT, 0, &id);
    if (step_hr("GetAdapterIdentifier", hr))
        step("adapter identifier", "'%s' driver '%s' vendor 0x%04lx device 0x%04lx", id.Description,
             id.Driver, (unsigned long)id.VendorId, (unsigned long)id.DeviceId);
    hr = IDirect3D9_GetAdapterDisplayMode(d3d, D3DADAPTER_DEFAULT, &mode);
    if (step_hr("GetAdapterDisplayMode", hr))
        step("display mode", "%ux%u format %u", mode.Width, mode.Height, (unsigned)mode.Format);

    hwnd = d3dcheck_window("d3d9_check");
    pp.Windowed = TRUE;
    pp.SwapEffect = D3DSWAPEFFECT_DISCARD;
    pp.BackBufferFormat = D3DFMT_UNKNOWN;
    pp.hDeviceWindow = hwnd;
    hr = IDirect3D9_CreateDevice(d3d, D3DADAPTER_DEFAULT, D3DDEVTYPE_HAL, hwnd,
                                 D3DCREATE_SOFTWARE_VERTEXPROCESSING, &pp, &dev);
    if (!step_hr("CreateDevice windowed", hr))
    {
        IDirect3D9_Release(d3d);
        return d3dcheck_exit("d3d9_check");
    }
    clear_present(dev, "Clear+Present windowed", D3DCOLOR_XRGB(0x20, 0x40, 0x80));

    /* fullscreen at the current mode: no mode change, only ownership */
    pp.Windowed = FALSE;
    pp.BackBufferWidth = mode.Width;
    pp.BackBufferHeight = mode.Height;
    pp.BackBufferFormat = mode.Format;
    pp.FullScreen_RefreshRateInHz = mode.RefreshRate;
    hr = IDirect3DDevice9_Reset(dev, &pp);
    if (step_hr("Reset fullscreen", hr))
        clear_present(dev, "Clear+Present fullscreen", D3DCOLOR_XRGB(0x80, 0x40, 0x20));
    hr = IDirect3DDevice9_TestCooperativeLevel(dev);
    step_hr("TestCooperativeLevel fullscreen", hr);

    memset(&pp, 0, sizeof(pp));
    pp.Windowed = TRUE;
    pp.SwapEffect = D3DSWAPEFFECT_DISCARD;
    pp.hDeviceWindow = hwnd;
    hr = IDirect3DDevice9_Reset(dev, &pp);
    if (step_hr("Reset windowed", hr))
        clear_present(dev, "Clear+Present windowed again", D3DCOLOR_XRGB(0x40, 0x80, 0x20));

    mem = IDirect3DDevice9_GetAvailableTextureMem(dev);
    note("GetAvailableTextureMem %u MiB", mem >> 20);
    step_pred("GetAvailableTextureMem > 0", mem > 0);

    step("device released", "%lu references left", (unsigned long)IDirect3DDevice9_Release(dev));
    IDirect3D9_Release(d3d);
    DestroyWindow(hwnd);
    return d3dcheck_exit("d3d9_check");
}
