/* D3D11 through Wine's wined3d: hardware and WARP devices, a render target
 * clear read back, a swap chain windowed and fullscreen
 * (IDXGISwapChain::SetFullscreenState) with presents, and the video-memory
 * budget of IDXGIAdapter3.  One line per step (d3dcheck.h). */
#define COBJMACROS
#include <initguid.h>
#include <d3d11.h>

#include "dxgicheck.h"

static void create_device(D3D_DRIVER_TYPE type, const char *name)
{
    D3D_FEATURE_LEVEL level = 0;
    ID3D11Device *dev = NULL;
    HRESULT hr;

    hr = D3D11CreateDevice(NULL, type, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &dev, &level, NULL);
    if (SUCCEEDED(hr))
    {
        step(name, "ok, feature level 0x%x", (unsigned)level);
        ID3D11Device_Release(dev);
    }
    else
        step(name, "hr 0x%08lx", (unsigned long)hr); /* WARP may be absent: compared, not required */
}

/* A 4x4 render target cleared to a color, read back through a staging copy. */
static void clear_readback(ID3D11Device *dev, ID3D11DeviceContext *ctx)
{
    static const float color[4] = {0.25f, 0.5f, 0.75f, 1.0f};
    D3D11_TEXTURE2D_DESC desc = {0};
    ID3D11Texture2D *rt = NULL, *staging = NULL;
    ID3D11RenderTargetView *rtv = NULL;
    D3D11_MAPPED_SUBRESOURCE map;
    HRESULT hr;

    desc.Width = desc.Height = 4;
    desc.MipLevels = desc.ArraySize = 1;
    desc.Format = DXGI_FORMAT_R8G8B8A8_UNORM;
    desc.SampleDesc.Count = 1;
    desc.Usage = D3D11_USAGE_DEFAULT;
    desc.BindFlags = D3D11_BIND_RENDER_TARGET;
    hr = ID3D11Device_CreateTexture2D(dev, &desc, NULL, &rt);
    if (SUCCEEDED(hr))
        hr = ID3D11Device_CreateRenderTargetView(dev, (ID3D11Resource *)rt, NULL, &rtv);
    desc.Usage = D3D11_USAGE_STAGING;
    desc.BindFlags = 0;
    desc.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
    if (SUCCEEDED(hr))
        hr = ID3D11Device_CreateTexture2D(dev, &desc, NULL, &staging);
    if (step_hr("render target", hr))
    {
        ID3D11DeviceContext_ClearRenderTargetView(ctx, rtv, color);
        ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)staging, (ID3D11Resource *)rt);
        hr = ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)staging, 0, D3D11_MAP_READ, 0, &map);
        if (step_hr("Map staging copy", hr))
        {
            DWORD texel = *(const DWORD *)map.pData;

            step("cleared texel", "0x%08lx", (unsigned long)texel);
            if (texel != 0xffbf8040)
                d3dcheck_failures++;
            ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)staging, 0);
        }
    }
    if (staging) ID3D11Texture2D_Release(staging);
    if (rtv) ID3D11RenderTargetView_Release(rtv);
    if (rt) ID3D11Texture2D_Release(rt);
}

static void swap_chain(ID3D11Device *dev, IDXGIFactory *factory, HWND hwnd)
{
    IDXGISwapChain *sc = NULL;
    BOOL fullscreen = FALSE;
    HRESULT hr;

    hr = dxgicheck_swap_chain(factory, (IUnknown *)dev, hwnd, &sc);
    if (!step_hr("CreateSwapChain windowed", hr))
        return;
    step_hr("Present windowed", IDXGISwapChain_Present(sc, 0, 0));
    d3dcheck_pump();
    hr = IDXGISwapChain_SetFullscreenState(sc, TRUE, NULL);
    step_hr("SetFullscreenState TRUE", hr);
    d3dcheck_pump();
    hr = IDXGISwapChain_GetFullscreenState(sc, &fullscreen, NULL);
    if (step_hr("GetFullscreenState", hr))
        step("fullscreen", "%d", fullscreen);
    step_hr("Present fullscreen", IDXGISwapChain_Present(sc, 0, 0));
    hr = IDXGISwapChain_SetFullscreenState(sc, FALSE, NULL);
    step_hr("SetFullscreenState FALSE", hr);
    d3dcheck_pump();
    step_hr("Present windowed again", IDXGISwapChain_Present(sc, 0, 0));
    IDXGISwapChain_Release(sc);
}

int main(void)
{
    ID3D11DeviceContext *ctx = NULL;
    IDXGIFactory *factory = NULL;
    IDXGIAdapter *adapter = NULL;
    IDXGIDevice *dxgi_dev = NULL;
    D3D_FEATURE_LEVEL level = 0;
    ID3D11Device *dev = NULL;
    HWND hwnd;
    HRESULT hr;

    create_device(D3D_DRIVER_TYPE_WARP, "D3D11CreateDevice WARP");
    hr = D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &dev, &level, &ctx);
    if (!step_hr("D3D11CreateDevice hardware", hr))
        return d3dcheck_exit("d3d11_check");
    step("feature level", "0x%x", (unsigned)level);
    clear_readback(dev, ctx);

    hr = ID3D11Device_QueryInterface(dev, &IID_IDXGIDevice, (void **)&dxgi_dev);
    if (SUCCEEDED(hr))
        hr = IDXGIDevice_GetAdapter(dxgi_dev, &adapter);
    if (SUCCEEDED(hr))
        hr = IDXGIAdapter_GetParent(adapter, &IID_IDXGIFactory, (void **)&factory);
    if (step_hr("device's adapter and factory", hr))
    {
        hwnd = d3dcheck_window("d3d11_check");
        swap_chain(dev, factory, hwnd);
        dxgicheck_budget(adapter);
        DestroyWindow(hwnd);
    }
    if (factory) IDXGIFactory_Release(factory);
    if (adapter) IDXGIAdapter_Release(adapter);
    if (dxgi_dev) IDXGIDevice_Release(dxgi_dev);
    ID3D11DeviceContext_Release(ctx);
    step("device released", "%lu references left", (unsigned long)ID3D11Device_Release(dev));
    return d3dcheck_exit("d3d11_check");
}
