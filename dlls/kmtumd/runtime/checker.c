/*
 * The resource-protocol checker: the rules of kmtumd.h, checked from what
 * the UMD does through the callbacks, and the report lines.
 *
 * "Batched, not yet flushed" is read from the contexts' allocation lists.
 * A UMD names every allocation a batched command uses in its context's
 * allocation list (that is what pfnRenderCb hands the kernel); the runtime
 * clears the list when it creates the context and after every successful
 * pfnRenderCb, so a non-zero entry is a reference from commands that have
 * not been flushed yet.  The UMD must write the entry when it batches the
 * command, not later (docs/umd.md).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

const char *kmtumd_rule_name(enum kmtumd_rule rule)
{
    switch (rule) {
    case KMTUMD_RULE_FLUSH_BEFORE_DEALLOCATE: return "flush-before-deallocate";
    case KMTUMD_RULE_ATOMIC_GROUP: return "atomic-group";
    case KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE: return "leak-at-destroy-device";
    case KMTUMD_RULE_UNKNOWN_OBJECT: return "unknown-object";
    default: return "?";
    }
}

static void emit(struct rt_adapter *a, const char *line)
{
    if (a->report)
        a->report(a->report_ctx, line);
    else
        fprintf(stderr, "%s\n", line);
}

void rt_report(struct rt_adapter *a, const char *fmt, ...)
{
    char line[320];
    int n = snprintf(line, sizeof(line), "kmtumd: umd %s: ", a->umd_name);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    emit(a, line);
}

void rt_violation(struct rt_device *dev, const struct kmtumd_violation *v, const char *fmt, ...)
{
    struct rt_adapter *a = dev->adapter;
    struct kmtumd_violation rec = *v;
    int n = snprintf(rec.line, sizeof(rec.line), "kmtumd: PROTOCOL VIOLATION: umd %s: %s: ", a->umd_name,
                     kmtumd_rule_name(v->rule));
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(rec.line + n, sizeof(rec.line) - (size_t)n, fmt, ap);
    va_end(ap);
    rec.device = dev->hdevice;
    kmtumd_lock_enter(&a->lock);
    a->stats.violations[v->rule]++;
    if (a->nviolations < RT_MAX_VIOLATIONS)
        a->violations[a->nviolations++] = rec;
    kmtumd_lock_leave(&a->lock);
    emit(a, rec.line);
}

static bool listed(const D3DKMT_HANDLE *handles, UINT count, D3DKMT_HANDLE h)
{
    for (UINT i = 0; i < count; i++)
        if (handles[i] == h)
            return true;
    return false;
}

/* ---- flush-before-deallocate -------------------------------------------------------- */

void rt_check_flushed(struct rt_device *dev, const char *call, D3DKMT_HANDLE resource,
                      const D3DKMT_HANDLE *handles, UINT count)
{
    for (struct rt_context *c = dev->contexts; c; c = c->next) {
        for (UINT i = 0; i < c->list_size; i++) {
            D3DKMT_HANDLE h = c->list[i].hAllocation;
            struct kmtumd_violation v = { 0 };
            struct rt_alloc *a;
            bool earlier = false;

            if (!h || !listed(handles, count, h))
                continue;
            for (UINT j = 0; j < i && !earlier; j++)
                earlier = c->list[j].hAllocation == h;
            if (earlier)
                continue;                /* one report per allocation and context */
            a = rt_alloc_find(dev, h);
            v.rule = KMTUMD_RULE_FLUSH_BEFORE_DEALLOCATE;
            v.resource = a && a->kres ? a->kres->handle : resource;
            v.allocation = h;
            v.context = c->handle;
            rt_violation(dev, &v, "%s frees allocation 0x%08x (resource 0x%08x) while batched commands "
                         "not yet flushed with pfnRenderCb reference it (context 0x%08x, allocation list "
                         "slot %u)", call, h, v.resource, c->handle, i);
        }
    }
}

/* ---- atomic-group and unknown-object (handle lists) ---------------------------------- */

static void check_known(struct rt_device *dev, const char *call, const D3DKMT_HANDLE *handles, UINT count)
{
    for (UINT i = 0; i < count; i++) {
        struct kmtumd_violation v = { 0 };
        bool twice = listed(handles, i, handles[i]);

        if (rt_alloc_find(dev, handles[i]) && !twice)
            continue;
        v.rule = KMTUMD_RULE_UNKNOWN_OBJECT;
        v.allocation = handles[i];
        rt_violation(dev, &v, twice ? "%s names allocation 0x%08x twice"
                                    : "%s names allocation 0x%08x, which the UMD does not own on this "
                                      "device (never allocated, or already deallocated)",
                     call, handles[i]);
    }
}

/* Allocations of group `group` of `kres` still alive, and how many of them are listed. */
static void group_members(const struct rt_kres *kres, UINT group, const D3DKMT_HANDLE *handles,
                          UINT count, UINT *alive, UINT *in_list)
{
    *alive = *in_list = 0;
    for (const struct rt_alloc *a = kres->allocs; a; a = a->next) {
        if (a->group != group)
            continue;
        (*alive)++;
        *in_list += listed(handles, count, a->handle);
    }
}

/* Reports each group (or shared resource) the list touches only in part,
 * once: `seen` remembers what was reported. */
static void check_groups(struct rt_device *dev, const char *call, const D3DKMT_HANDLE *handles, UINT count)
{
    for (UINT i = 0; i < count; i++) {
        struct rt_alloc *a = rt_alloc_find(dev, handles[i]);
        struct kmtumd_violation v = { 0 };
        bool reported = false;
        UINT alive, in_list;

        if (!a || !a->kres)
            continue;                    /* device-owned allocations go one by one */
        for (UINT j = 0; j < i && !reported; j++) {
            struct rt_alloc *b = rt_alloc_find(dev, handles[j]);
            reported = b && b->kres == a->kres && (a->kres->shared || b->group == a->group);
        }
        if (reported)
            continue;
        v.rule = KMTUMD_RULE_ATOMIC_GROUP;
        v.resource = a->kres->handle;
        v.allocation = a->handle;
        if (a->kres->shared) {
            rt_violation(dev, &v, "%s deallocates allocation 0x%08x of shared resource 0x%08x through a "
                         "handle list: a shared resource is deallocated whole, once, with hResource",
                         call, a->handle, a->kres->handle);
            continue;
        }
        group_members(a->kres, a->group, handles, count, &alive, &in_list);
        if (in_list == alive)
            continue;
        v.count = alive;
        rt_violation(dev, &v, "%s deallocates %u of the %u allocations resource 0x%08x got from one "
                     "pfnAllocateCb (first listed: 0x%08x): surfaces created as a group are destroyed "
                     "as a group", call, in_list, alive, a->kres->handle, a->handle);
    }
}

void rt_check_list(struct rt_device *dev, const char *call, const D3DKMT_HANDLE *handles, UINT count)
{
    check_known(dev, call, handles, count);
    check_groups(dev, call, handles, count);
}

/* ---- leak-at-destroy-device ------------------------------------------------------------- */

static void leak_resource(struct rt_device *dev, struct rt_resource *r)
{
    struct kmtumd_violation v = { 0 };
    char list[160] = "";
    size_t used = 0;

    for (const struct rt_alloc *a = r->kres->allocs; a && used + 16 < sizeof(list); a = a->next)
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s0x%08x", used ? ", " : "", a->handle);
    v.rule = KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE;
    v.resource = r->kres->handle;
    v.allocation = r->kres->allocs ? r->kres->allocs->handle : 0;
    v.count = rt_kres_count(r->kres);
    rt_violation(dev, &v, "DestroyDevice returned while %sresource 0x%08x (%u allocations%s%s) was never "
                 "released with pfnDeallocateCb(hResource)", r->opened ? "opened " : "", r->kres->handle,
                 v.count, v.count ? ": " : "", list);
}

void rt_check_leaks(struct rt_device *dev)
{
    for (struct rt_resource *r = dev->resources; r; r = r->next)
        if (r->kres && !r->released)
            leak_resource(dev, r);
    for (struct rt_alloc *a = dev->standalone; a; a = a->next) {
        struct kmtumd_violation v = { 0 };

        v.rule = KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE;
        v.allocation = a->handle;
        v.count = 1;
        rt_violation(dev, &v, "DestroyDevice returned while device-owned allocation 0x%08x was never "
                     "deallocated", a->handle);
    }
    for (struct rt_context *c = dev->contexts; c; c = c->next) {
        struct kmtumd_violation v = { 0 };

        v.rule = KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE;
        v.context = c->handle;
        rt_violation(dev, &v, "DestroyDevice returned while context 0x%08x from pfnCreateContextCb was "
                     "never destroyed", c->handle);
    }
}
