/*
 * Finding and freeing the runtime's objects (see runtime.h).
 */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

kmtumd_lock rt_registry_lock = KMTUMD_LOCK_INIT;
struct rt_adapter *rt_adapters;          /* under rt_registry_lock (host.c adds) */

struct rt_adapter *rt_adapter_from_handle(HANDLE h)
{
    struct rt_adapter *a;

    kmtumd_lock_enter(&rt_registry_lock);
    for (a = rt_adapters; a && (HANDLE)a != h; a = a->next)
        ;
    kmtumd_lock_leave(&rt_registry_lock);
    return a;
}

struct rt_device *rt_device_from_handle(HANDLE h)
{
    struct rt_device *found = NULL;

    if (!h)
        return NULL;
    kmtumd_lock_enter(&rt_registry_lock);
    for (struct rt_adapter *a = rt_adapters; a && !found; a = a->next)
        for (struct rt_device *d = a->devices; d; d = d->next)
            if ((HANDLE)d == h) {
                found = d;
                break;
            }
    kmtumd_lock_leave(&rt_registry_lock);
    return found;
}

struct rt_resource *rt_resource_find(struct rt_device *dev, HANDLE h)
{
    struct rt_resource *r;

    for (r = dev->resources; r && (HANDLE)r != h; r = r->next)
        ;
    return r;
}

struct rt_alloc *rt_alloc_find(struct rt_device *dev, D3DKMT_HANDLE h)
{
    struct rt_alloc *a;

    if (!h)
        return NULL;
    for (a = dev->standalone; a; a = a->next)
        if (a->handle == h)
            return a;
    for (struct rt_kres *k = dev->kres; k; k = k->next)
        for (a = k->allocs; a; a = a->next)
            if (a->handle == h)
                return a;
    return NULL;
}

struct rt_context *rt_context_find(struct rt_device *dev, HANDLE h)
{
    struct rt_context *c;

    for (c = dev->contexts; c && (HANDLE)(UINT_PTR)c->handle != h; c = c->next)
        ;
    return h ? c : NULL;
}

struct rt_kres *rt_kres_by_share(struct rt_device *dev, D3DKMT_HANDLE share)
{
    struct rt_kres *k;

    for (k = dev->kres; k && (!share || k->share != share); k = k->next)
        ;
    return k;
}

UINT rt_kres_count(const struct rt_kres *kres)
{
    UINT n = 0;

    for (const struct rt_alloc *a = kres ? kres->allocs : NULL; a; a = a->next)
        n++;
    return n;
}

void rt_alloc_free(struct rt_alloc *a)
{
    free(a->priv);
    free(a);
}

/* Removes `a` from the singly linked list at *head. */
static bool unlink_alloc(struct rt_alloc **head, struct rt_alloc *a)
{
    for (struct rt_alloc **p = head; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            return true;
        }
    return false;
}

void rt_forget_allocations(struct rt_device *dev, const D3DKMT_HANDLE *handles, UINT count)
{
    for (UINT i = 0; i < count; i++) {
        struct rt_alloc *a = rt_alloc_find(dev, handles[i]);

        if (!a)
            continue;
        if (!unlink_alloc(a->kres ? &a->kres->allocs : &dev->standalone, a))
            continue;
        rt_alloc_free(a);
        rt_stat_add(dev->adapter, &dev->adapter->stats.live_allocations, -1);
    }
}

void rt_kres_free(struct rt_device *dev, struct rt_kres *kres)
{
    while (kres->allocs) {
        struct rt_alloc *a = kres->allocs;

        kres->allocs = a->next;
        rt_alloc_free(a);
        rt_stat_add(dev->adapter, &dev->adapter->stats.live_allocations, -1);
    }
    for (struct rt_kres **p = &dev->kres; *p; p = &(*p)->next)
        if (*p == kres) {
            *p = kres->next;
            break;
        }
    free(kres->priv);
    free(kres);
}

void rt_resource_snapshot(struct rt_resource *res)
{
    UINT n = 0;

    if (!res->kres)
        return;
    res->last_handle = res->kres->handle;
    res->last_share = res->kres->share;
    for (const struct rt_alloc *a = res->kres->allocs; a && n < KMTUMD_MAX_SURFACES; a = a->next)
        res->last_allocs[n++] = a->handle;
    res->last_count = n;
}

void rt_device_free_objects(struct rt_device *dev)
{
    while (dev->kres)
        rt_kres_free(dev, dev->kres);
    while (dev->standalone) {
        struct rt_alloc *a = dev->standalone;

        dev->standalone = a->next;
        rt_alloc_free(a);
        rt_stat_add(dev->adapter, &dev->adapter->stats.live_allocations, -1);
    }
    while (dev->contexts) {
        struct rt_context *c = dev->contexts;

        dev->contexts = c->next;
        free(c);
    }
    while (dev->resources) {
        struct rt_resource *r = dev->resources;

        dev->resources = r->next;
        free(r);
    }
}

void rt_stat_add(struct rt_adapter *a, unsigned *counter, int delta)
{
    kmtumd_lock_enter(&a->lock);
    *counter += (unsigned)delta;
    kmtumd_lock_leave(&a->lock);
}

/* How a Direct3D runtime turns the kernel's answers into a callback's HRESULT. */
HRESULT rt_hresult(NTSTATUS status)
{
    switch ((ULONG)status) {
    case 0: return S_OK;
    case 0xC0000017: return E_OUTOFMEMORY;            /* STATUS_NO_MEMORY */
    case 0xC000009A: return E_OUTOFMEMORY;            /* STATUS_INSUFFICIENT_RESOURCES */
    case 0xC01E0100: return E_OUTOFMEMORY;            /* STATUS_GRAPHICS_NO_VIDEO_MEMORY */
    case 0xC000000D: return E_INVALIDARG;             /* STATUS_INVALID_PARAMETER */
    case 0xC0000008: return E_INVALIDARG;             /* STATUS_INVALID_HANDLE */
    case 0xC00002B6: return D3DDDIERR_DEVICEREMOVED;  /* STATUS_DEVICE_REMOVED */
    default: return KMTUMD_HRESULT_FROM_NT(status);
    }
}
