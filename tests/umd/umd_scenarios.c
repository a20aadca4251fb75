/*
 * The UMD scenarios (see umd_scenarios.h).  Every check names exact
 * values: handles, counts, HRESULTs, the report lines.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umd_scenarios.h"

#define SURFACE_WORDS(w, h) ((w) * (h))

/* ---- helpers -------------------------------------------------------------------------------- */

struct reports {
    unsigned n;
    char lines[32][320];
};

static struct reports reports;

static void collect(void *ctx, const char *line)
{
    struct reports *r = ctx;

    if (r->n < sizeof(r->lines) / sizeof(r->lines[0]))
        snprintf(r->lines[r->n++], sizeof(r->lines[0]), "%s", line);
}

static struct kmtumd_host *open_umd(KMTUMDVERSION version)
{
    struct kmtumd_host *host = NULL;
    HRESULT hr;

    memset(&reports, 0, sizeof(reports));
    hr = kmtumd_host_open(NULL, version, collect, &reports, &host);
    UMD_CHECK(hr == S_OK && host, "kmtumd_host_open(version %u): HRESULT 0x%08x", (unsigned)version,
              (unsigned)hr);
    return SUCCEEDED(hr) ? host : NULL;
}

static struct kmtumd_device *new_device(struct kmtumd_host *host)
{
    struct kmtumd_device *dev = NULL;
    HRESULT hr = kmtumd_create_device(host, &dev);

    UMD_CHECK(hr == S_OK && dev, "kmtumd_create_device: HRESULT 0x%08x", (unsigned)hr);
    return SUCCEEDED(hr) ? dev : NULL;
}

static struct kmtumd_resource *new_resource(struct kmtumd_device *dev, UINT surfaces, UINT w, UINT h, BOOL shared)
{
    struct kmtumd_resource_desc desc = { surfaces, w, h, shared };
    struct kmtumd_resource *res = NULL;
    HRESULT hr = kmtumd_create_resource(dev, &desc, &res);

    UMD_CHECK(hr == S_OK && res, "kmtumd_create_resource(%u x %ux%u): HRESULT 0x%08x", surfaces, w, h,
              (unsigned)hr);
    return SUCCEEDED(hr) ? res : NULL;
}

static struct kmtumd_stats stats_of(struct kmtumd_host *host)
{
    struct kmtumd_stats s;

    kmtumd_host_stats(host, &s);
    return s;
}

static unsigned violations_total(const struct kmtumd_stats *s)
{
    unsigned n = 0;

    for (unsigned r = 0; r < KMTUMD_RULE_COUNT; r++)
        n += s->violations[r];
    return n;
}

static int local_handle(D3DKMT_HANDLE h)
{
    return h && (h & 0xc0000000u) && !(h & 0x3f);
}

/* Every word of a surface read back through the UMD's Lock. */
static void check_surface(struct kmtumd_resource *res, UINT surface, UINT w, UINT h, UINT expect)
{
    UINT words = SURFACE_WORDS(w, h), bad = 0, first_bad = 0;
    UINT *data = calloc(words, sizeof(*data));
    HRESULT hr;

    UMD_CHECK(data != NULL, "out of memory");
    if (!data)
        return;
    hr = kmtumd_read(res, surface, data, words * 4);
    UMD_CHECK(hr == S_OK, "kmtumd_read(surface %u): HRESULT 0x%08x", surface, (unsigned)hr);
    for (UINT i = 0; i < words; i++)
        if (data[i] != expect && !bad++)
            first_bad = i;
    UMD_CHECK(!bad, "surface %u: %u of %u words differ from 0x%08x (word %u is 0x%08x)", surface, bad, words,
              expect, first_bad, data[first_bad]);
    free(data);
}

static int reported(const char *a, const char *b, const char *c)
{
    for (unsigned i = 0; i < reports.n; i++)
        if (strstr(reports.lines[i], a) && (!b || strstr(reports.lines[i], b)) && (!c || strstr(reports.lines[i], c)))
            return 1;
    return 0;
}

static void close_host(struct kmtumd_host *host)
{
    kmtumd_host_close(host);
}

/* ---- reference_umd ---------------------------------------------------------------------------- */

static void reference_fill_read_deferred_destroy(void)
{
    struct kmtumd_host *host = open_umd(UMD_REFERENCE);
    struct kmtumd_resource_info info;
    struct kmtumd_resource *res;
    struct kmtumd_device *dev;
    struct kmtumd_stats s;
    HRESULT hr;

    if (!host)
        return;
    UMD_CHECK(!strcmp(kmtumd_host_umd_name(host), umd_reference_name), "UMD name %s, expected %s",
              kmtumd_host_umd_name(host), umd_reference_name);
    UMD_CHECK(kmtumd_host_driver_version(host) == D3D_UMD_INTERFACE_VERSION_WDDM2_0, "DriverVersion 0x%x",
              kmtumd_host_driver_version(host));
    if (!(dev = new_device(host)) || !(res = new_resource(dev, 1, 64, 64, FALSE))) {
        close_host(host);
        return;
    }
    kmtumd_resource_info(res, &info);
    UMD_CHECK(local_handle(info.resource), "hKMResource 0x%08x", info.resource);
    UMD_CHECK(info.count == 1 && local_handle(info.allocations[0]) && info.allocations[0] != info.resource,
              "%u allocations, first 0x%08x", info.count, info.allocations[0]);
    UMD_CHECK(info.share == 0 && !info.opened && !info.destroyed && info.kernel_alive, "share 0x%08x",
              info.share);
    s = stats_of(host);
    UMD_CHECK(s.allocate_calls == 1 && s.contexts_created == 1 && s.live_allocations == 1,
              "allocate %u, contexts %u, live %u", s.allocate_calls, s.contexts_created, s.live_allocations);

    hr = kmtumd_color_fill(res, 0, 0xff336699);
    UMD_CHECK(hr == S_OK, "ColorFill: 0x%08x", (unsigned)hr);
    UMD_CHECK(stats_of(host).render_calls == 0, "the fill is batched, not rendered yet");
    /* Lock flushes the batch; the soft engine's fill is what we read */
    check_surface(res, 0, 64, 64, 0xff336699);
    s = stats_of(host);
    UMD_CHECK(s.render_calls == 1 && s.lock_calls == 1 && s.unlock_calls == 1, "render %u lock %u unlock %u",
              s.render_calls, s.lock_calls, s.unlock_calls);

    /* DestroyResource defers the deallocation past its return */
    hr = kmtumd_destroy_resource(res);
    UMD_CHECK(hr == S_OK, "DestroyResource: 0x%08x", (unsigned)hr);
    kmtumd_resource_info(res, &info);
    UMD_CHECK(info.destroyed && !info.deallocated && info.kernel_alive, "after DestroyResource: destroyed %d, "
              "deallocated %d, alive %d", info.destroyed, info.deallocated, info.kernel_alive);
    UMD_CHECK(stats_of(host).deallocate_calls == 0, "deallocated before DestroyResource returned");
    UMD_CHECK(kmtumd_destroy_resource(res) == E_INVALIDARG, "a second DestroyResource is refused");

    /* ...and releases it at the next Flush */
    hr = kmtumd_flush(dev);
    UMD_CHECK(hr == S_OK, "Flush: 0x%08x", (unsigned)hr);
    kmtumd_resource_info(res, &info);
    UMD_CHECK(info.deallocated && !info.kernel_alive, "after Flush: deallocated %d, alive %d", info.deallocated,
              info.kernel_alive);
    s = stats_of(host);
    UMD_CHECK(s.deallocate_calls == 1 && s.deferred_deallocations == 1 && s.live_allocations == 0,
              "deallocate %u, deferred %u, live %u", s.deallocate_calls, s.deferred_deallocations,
              s.live_allocations);

    hr = kmtumd_destroy_device(dev);
    UMD_CHECK(hr == S_OK, "DestroyDevice: 0x%08x", (unsigned)hr);
    s = stats_of(host);
    UMD_CHECK(s.contexts_destroyed == 1, "contexts destroyed %u", s.contexts_destroyed);
    UMD_CHECK(violations_total(&s) == 0 && kmtumd_host_violations(host, NULL, 0) == 0 && reports.n == 0,
              "%u violations, %u report lines (first: %s)", violations_total(&s), reports.n, reports.lines[0]);
    close_host(host);
}

static void reference_flushes_before_deallocating(void)
{
    struct kmtumd_host *host = open_umd(UMD_REFERENCE);
    struct kmtumd_resource *res;
    struct kmtumd_device *dev;
    struct kmtumd_stats s;

    if (!host)
        return;
    if (!(dev = new_device(host)) || !(res = new_resource(dev, 1, 32, 32, FALSE))) {
        close_host(host);
        return;
    }
    UMD_CHECK(kmtumd_color_fill(res, 0, 0x01020304) == S_OK, "ColorFill");
    UMD_CHECK(stats_of(host).render_calls == 0, "batched");
    UMD_CHECK(kmtumd_destroy_resource(res) == S_OK, "DestroyResource");
    s = stats_of(host);
    UMD_CHECK(s.render_calls == 1 && s.deallocate_calls == 0, "DestroyResource: render %u (want 1: the flush), "
              "deallocate %u (want 0: deferred)", s.render_calls, s.deallocate_calls);
    UMD_CHECK(kmtumd_destroy_device(dev) == S_OK, "DestroyDevice");
    s = stats_of(host);
    UMD_CHECK(s.deallocate_calls == 1 && s.deferred_deallocations == 1 && s.live_allocations == 0,
              "at DestroyDevice: deallocate %u, deferred %u, live %u", s.deallocate_calls,
              s.deferred_deallocations, s.live_allocations);
    UMD_CHECK(violations_total(&s) == 0, "%u violations: %s", violations_total(&s), reports.lines[0]);
    close_host(host);
}

static void reference_group_destroyed_whole(void)
{
    static const UINT colors[3] = { 0x11111111, 0x22222222, 0x33333333 };
    struct kmtumd_host *host = open_umd(UMD_REFERENCE);
    struct kmtumd_resource_info info;
    struct kmtumd_resource *res;
    struct kmtumd_device *dev;
    struct kmtumd_stats s;

    if (!host)
        return;
    if (!(dev = new_device(host)) || !(res = new_resource(dev, 3, 16, 16, FALSE))) {
        close_host(host);
        return;
    }
    kmtumd_resource_info(res, &info);
    UMD_CHECK(info.count == 3 && local_handle(info.allocations[0]) && local_handle(info.allocations[1]) &&
              local_handle(info.allocations[2]) && info.allocations[0] != info.allocations[1] &&
              info.allocations[1] != info.allocations[2], "allocations 0x%08x 0x%08x 0x%08x (%u)",
              info.allocations[0], info.allocations[1], info.allocations[2], info.count);
    UMD_CHECK(stats_of(host).allocate_calls == 1, "one pfnAllocateCb for the group, got %u",
              stats_of(host).allocate_calls);
    for (UINT i = 0; i < 3; i++)
        UMD_CHECK(kmtumd_color_fill(res, i, colors[i]) == S_OK, "ColorFill %u", i);
    for (UINT i = 0; i < 3; i++)
        check_surface(res, i, 16, 16, colors[i]);
    UMD_CHECK(kmtumd_color_fill(res, 3, 0) == E_INVALIDARG, "surface 3 of 3");
    UMD_CHECK(kmtumd_destroy_resource(res) == S_OK, "DestroyResource");
    UMD_CHECK(kmtumd_flush(dev) == S_OK, "Flush");
    kmtumd_resource_info(res, &info);
    s = stats_of(host);
    UMD_CHECK(s.deallocate_calls == 1 && !info.kernel_alive && s.live_allocations == 0,
              "one pfnDeallocateCb for the group: %u calls, alive %d, live %u", s.deallocate_calls,
              info.kernel_alive, s.live_allocations);
    UMD_CHECK(kmtumd_destroy_device(dev) == S_OK, "DestroyDevice");
    s = stats_of(host);
    UMD_CHECK(violations_total(&s) == 0, "%u violations: %s", violations_total(&s), reports.lines[0]);
    close_host(host);
}

static void reference_shared_and_opened(void)
{
    struct kmtumd_host *host = open_umd(UMD_REFERENCE);
    struct kmtumd_resource_info info, oinfo;
    struct kmtumd_resource *res, *opened = NULL, *none = NULL;
    struct kmtumd_device *dev;
    struct kmtumd_stats s;
    HRESULT hr;

    if (!host)
        return;
    if (!(dev = new_device(host)) || !(res = new_resource(dev, 1, 16, 16, TRUE))) {
        close_host(host);
        return;
    }
    kmtumd_resource_info(res, &info);
    UMD_CHECK(info.share && (info.share & 3) == 2, "share handle 0x%08x (global: low bits 2)", info.share);
    hr = kmtumd_open_resource(dev, info.share, &opened);
    UMD_CHECK(hr == S_OK && opened, "OpenResource: 0x%08x", (unsigned)hr);
    UMD_CHECK(kmtumd_open_resource(dev, 0x7ffffffe, &none) == E_INVALIDARG && !none, "an unknown share handle");
    UMD_CHECK(reported("no shared resource with share handle 0x7ffffffe", NULL, NULL), "host error reported");
    if (!opened) {
        close_host(host);
        return;
    }
    kmtumd_resource_info(opened, &oinfo);
    UMD_CHECK(oinfo.opened && oinfo.resource == info.resource && oinfo.share == info.share && oinfo.count == 1 &&
              oinfo.allocations[0] == info.allocations[0], "opened: resource 0x%08x, allocation 0x%08x",
              oinfo.resource, oinfo.allocations[0]);
    /* one memory, two UMD resources */
    UMD_CHECK(kmtumd_color_fill(opened, 0, 0xcafe0001) == S_OK, "ColorFill through the opened resource");
    check_surface(res, 0, 16, 16, 0xcafe0001);

    /* the opener lets go: the creator still holds the D3DKMT resource */
    UMD_CHECK(kmtumd_destroy_resource(opened) == S_OK && kmtumd_flush(dev) == S_OK, "destroy the opened one");
    kmtumd_resource_info(opened, &oinfo);
    UMD_CHECK(oinfo.deallocated && oinfo.kernel_alive, "opened: deallocated %d, kernel alive %d",
              oinfo.deallocated, oinfo.kernel_alive);
    check_surface(res, 0, 16, 16, 0xcafe0001);
    UMD_CHECK(kmtumd_destroy_resource(res) == S_OK && kmtumd_flush(dev) == S_OK, "destroy the creator");
    kmtumd_resource_info(res, &info);
    s = stats_of(host);
    UMD_CHECK(info.deallocated && !info.kernel_alive && s.deallocate_calls == 2 && s.live_allocations == 0,
              "creator: deallocated %d, alive %d; %u pfnDeallocateCb", info.deallocated, info.kernel_alive,
              s.deallocate_calls);
    UMD_CHECK(kmtumd_destroy_device(dev) == S_OK, "DestroyDevice");
    s = stats_of(host);
    UMD_CHECK(violations_total(&s) == 0, "%u violations: %s", violations_total(&s), reports.lines[0]);
    close_host(host);
}

static void reference_deferral_is_bounded(void)
{
    struct kmtumd_host *host = open_umd(UMD_REFERENCE);
    struct kmtumd_resource *res[10];
    struct kmtumd_device *dev;
    struct kmtumd_stats s;

    if (!host)
        return;
    if (!(dev = new_device(host))) {
        close_host(host);
        return;
    }
    for (unsigned i = 0; i < 10; i++)
        if (!(res[i] = new_resource(dev, 1, 8, 8, FALSE))) {
            close_host(host);
            return;
        }
    for (unsigned i = 0; i < 8; i++)
        UMD_CHECK(kmtumd_destroy_resource(res[i]) == S_OK, "DestroyResource %u", i);
    UMD_CHECK(stats_of(host).deallocate_calls == 0, "8 deferred");
    /* the ninth goes past the bound: all nine are released */
    UMD_CHECK(kmtumd_destroy_resource(res[8]) == S_OK, "DestroyResource 8");
    s = stats_of(host);
    UMD_CHECK(s.deallocate_calls == 9 && s.deferred_deallocations == 8 && s.live_allocations == 1,
              "deallocate %u (want 9), deferred %u (want 8: the ninth went inside its own DestroyResource), "
              "live %u", s.deallocate_calls, s.deferred_deallocations, s.live_allocations);
    UMD_CHECK(kmtumd_destroy_resource(res[9]) == S_OK, "DestroyResource 9");
    UMD_CHECK(kmtumd_destroy_device(dev) == S_OK, "DestroyDevice");
    s = stats_of(host);
    UMD_CHECK(s.deallocate_calls == 10 && s.deferred_deallocations == 9 && violations_total(&s) == 0,
              "deallocate %u, deferred %u, violations %u", s.deallocate_calls, s.deferred_deallocations,
              violations_total(&s));
    close_host(host);
}

/* ---- broken_umd ---------------------------------------------------------------------------------- */

static void broken_deallocates_before_flushing(void)
{
    struct kmtumd_host *host = open_umd(UMD_BROKEN);
    struct kmtumd_violation v[4];
    struct kmtumd_resource_info info;
    struct kmtumd_resource *res;
    struct kmtumd_device *dev;
    struct kmtumd_stats s;
    char handle[16];

    if (!host)
        return;
    UMD_CHECK(!strcmp(kmtumd_host_umd_name(host), umd_broken_name), "UMD name %s", kmtumd_host_umd_name(host));
    UMD_CHECK(kmtumd_host_driver_version(host) == D3D_UMD_INTERFACE_VERSION_WIN7, "DriverVersion 0x%x",
              kmtumd_host_driver_version(host));
    if (!(dev = new_device(host)) || !(res = new_resource(dev, 1, 16, 16, FALSE))) {
        close_host(host);
        return;
    }
    kmtumd_resource_info(res, &info);
    UMD_CHECK(kmtumd_color_fill(res, 0, 0xdeadbeef) == S_OK, "ColorFill");
    UMD_CHECK(kmtumd_destroy_resource(res) == S_OK, "DestroyResource");
    s = stats_of(host);
    UMD_CHECK(s.violations[KMTUMD_RULE_FLUSH_BEFORE_DEALLOCATE] == 1 && violations_total(&s) == 1,
              "flush rule %u, total %u", s.violations[KMTUMD_RULE_FLUSH_BEFORE_DEALLOCATE], violations_total(&s));
    UMD_CHECK(s.render_calls == 0 && s.deallocate_calls == 1, "render %u, deallocate %u", s.render_calls,
              s.deallocate_calls);
    UMD_CHECK(kmtumd_host_violations(host, v, 4) == 1, "one violation recorded");
    UMD_CHECK(v[0].rule == KMTUMD_RULE_FLUSH_BEFORE_DEALLOCATE && v[0].resource == info.resource &&
              v[0].allocation == info.allocations[0] && local_handle(v[0].context) &&
              v[0].device == kmtumd_device_handle(dev),
              "violation: rule %d, resource 0x%08x, allocation 0x%08x, context 0x%08x", v[0].rule, v[0].resource,
              v[0].allocation, v[0].context);
    snprintf(handle, sizeof(handle), "0x%08x", info.allocations[0]);
    UMD_CHECK(reports.n == 1 && reported("PROTOCOL VIOLATION", umd_broken_name, "flush-before-deallocate") &&
              reported(handle, "pfnDeallocateCb", NULL), "report: %s", reports.lines[0]);
    UMD_CHECK(!strcmp(reports.lines[0], v[0].line), "the record holds the reported line");

    /* its last batch names a freed allocation: the kernel refuses it, the device still goes */
    UMD_CHECK(kmtumd_destroy_device(dev) == S_OK, "DestroyDevice");
    s = stats_of(host);
    UMD_CHECK(violations_total(&s) == 1 && s.live_allocations == 0, "after DestroyDevice: %u violations, %u live",
              violations_total(&s), s.live_allocations);
    close_host(host);
}

static void broken_partial_group_and_leak(void)
{
    struct kmtumd_host *host = open_umd(UMD_BROKEN);
    struct kmtumd_violation v[4];
    struct kmtumd_resource_info info, after;
    struct kmtumd_resource *res;
    struct kmtumd_device *dev;
    struct kmtumd_stats s;
    char h1[16], h2[16];

    if (!host)
        return;
    if (!(dev = new_device(host)) || !(res = new_resource(dev, 3, 16, 16, FALSE))) {
        close_host(host);
        return;
    }
    kmtumd_resource_info(res, &info);
    UMD_CHECK(kmtumd_destroy_resource(res) == S_OK, "DestroyResource");
    s = stats_of(host);
    UMD_CHECK(s.violations[KMTUMD_RULE_ATOMIC_GROUP] == 1 && violations_total(&s) == 1, "atomic %u, total %u",
              s.violations[KMTUMD_RULE_ATOMIC_GROUP], violations_total(&s));
    UMD_CHECK(kmtumd_host_violations(host, v, 4) == 1 && v[0].rule == KMTUMD_RULE_ATOMIC_GROUP &&
              v[0].resource == info.resource && v[0].allocation == info.allocations[0] && v[0].count == 3,
              "violation: rule %d, resource 0x%08x, allocation 0x%08x, group of %u", v[0].rule, v[0].resource,
              v[0].allocation, v[0].count);
    UMD_CHECK(reported("atomic-group", umd_broken_name, "deallocates 1 of the 3 allocations"), "report: %s",
              reports.lines[0]);
    kmtumd_resource_info(res, &after);
    UMD_CHECK(!after.deallocated && after.kernel_alive && after.count == 2 &&
              after.allocations[0] == info.allocations[1] && after.allocations[1] == info.allocations[2],
              "after: deallocated %d, alive %d, %u allocations left", after.deallocated, after.kernel_alive,
              after.count);

    UMD_CHECK(kmtumd_destroy_device(dev) == S_OK, "DestroyDevice");
    s = stats_of(host);
    UMD_CHECK(s.violations[KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE] == 1 && violations_total(&s) == 2,
              "leak %u, total %u", s.violations[KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE], violations_total(&s));
    UMD_CHECK(kmtumd_host_violations(host, v, 4) == 2 && v[1].rule == KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE &&
              v[1].resource == info.resource && v[1].allocation == info.allocations[1] && v[1].count == 2,
              "leak: resource 0x%08x, allocation 0x%08x, %u allocations", v[1].resource, v[1].allocation,
              v[1].count);
    snprintf(h1, sizeof(h1), "0x%08x", info.allocations[1]);
    snprintf(h2, sizeof(h2), "0x%08x", info.allocations[2]);
    UMD_CHECK(reported("leak-at-destroy-device", h1, h2) && reported("leak-at-destroy-device", umd_broken_name, NULL),
              "report: %s", reports.lines[1]);
    UMD_CHECK(s.live_allocations == 0, "the kernel reclaimed the leak: %u live", s.live_allocations);
    close_host(host);
}

static void broken_without_batched_work_is_not_blamed(void)
{
    struct kmtumd_host *host = open_umd(UMD_BROKEN);
    struct kmtumd_resource *res;
    struct kmtumd_device *dev;
    struct kmtumd_stats s;

    if (!host)
        return;
    if (!(dev = new_device(host)) || !(res = new_resource(dev, 1, 16, 16, FALSE))) {
        close_host(host);
        return;
    }
    /* written and flushed before the destroy: deallocating at once is fine */
    UMD_CHECK(kmtumd_color_fill(res, 0, 0x0badf00d) == S_OK && kmtumd_flush(dev) == S_OK, "fill and flush");
    UMD_CHECK(kmtumd_destroy_resource(res) == S_OK, "DestroyResource");
    UMD_CHECK(kmtumd_destroy_device(dev) == S_OK, "DestroyDevice");
    s = stats_of(host);
    UMD_CHECK(violations_total(&s) == 0 && s.deallocate_calls == 1 && s.deferred_deallocations == 0 &&
              reports.n == 0, "violations %u, deallocate %u, deferred %u: %s", violations_total(&s),
              s.deallocate_calls, s.deferred_deallocations, reports.lines[0]);
    close_host(host);
}

/* ---- the host's own errors -------------------------------------------------------------------------- */

static void host_refuses_what_it_cannot_load(void)
{
    struct kmtumd_host *host = (struct kmtumd_host *)1;
    struct kmtumd_resource_desc bad = { 0, 16, 16, FALSE };
    struct kmtumd_resource *res = NULL;
    struct kmtumd_device *dev;
    LUID nowhere = { 0x12345678, 0x7abcdef0 };
    HRESULT hr;

    memset(&reports, 0, sizeof(reports));
    hr = kmtumd_host_open(NULL, UMD_MISSING, collect, &reports, &host);
    UMD_CHECK(hr == KMTUMD_E_MOD_NOT_FOUND && !host, "missing file: 0x%08x", (unsigned)hr);
    UMD_CHECK(reported("cannot load the user-mode driver", NULL, NULL), "report: %s", reports.lines[0]);
    hr = kmtumd_host_open(NULL, UMD_NO_EXPORT, collect, &reports, &host);
    UMD_CHECK(hr == KMTUMD_E_PROC_NOT_FOUND && !host, "no OpenAdapter: 0x%08x", (unsigned)hr);
    UMD_CHECK(reported("exports no OpenAdapter", NULL, NULL), "report: %s", reports.lines[1]);
    hr = kmtumd_host_open(&nowhere, UMD_REFERENCE, collect, &reports, &host);
    UMD_CHECK(hr == KMTUMD_HRESULT_FROM_NT(STATUS_INVALID_PARAMETER) && !host, "unknown LUID: 0x%08x",
              (unsigned)hr);
    hr = kmtumd_host_open(NULL, NUM_KMTUMDVERSIONS, collect, &reports, &host);
    UMD_CHECK(hr == KMTUMD_HRESULT_FROM_NT(STATUS_INVALID_PARAMETER) && !host, "bad version: 0x%08x",
              (unsigned)hr);

    if (!(host = open_umd(UMD_REFERENCE)) || !(dev = new_device(host))) {
        close_host(host);
        return;
    }
    UMD_CHECK(kmtumd_create_resource(dev, &bad, &res) == E_INVALIDARG && !res, "no surfaces");
    bad.surfaces = KMTUMD_MAX_SURFACES + 1;
    UMD_CHECK(kmtumd_create_resource(dev, &bad, &res) == E_INVALIDARG && !res, "too many surfaces");
    UMD_CHECK(kmtumd_create_resource(dev, NULL, &res) == E_INVALIDARG, "no description");
    UMD_CHECK(kmtumd_destroy_resource(NULL) == E_INVALIDARG, "no resource");
    /* the host closes what is left: the device and its live resource, cleanly */
    res = new_resource(dev, 2, 8, 8, FALSE);
    close_host(host);
    UMD_CHECK(reports.n == 0, "report: %s", reports.lines[0]);
}

const struct umd_scenario umd_scenarios[] = {
    { "reference_fill_read_deferred_destroy", reference_fill_read_deferred_destroy },
    { "reference_flushes_before_deallocating", reference_flushes_before_deallocating },
    { "reference_group_destroyed_whole", reference_group_destroyed_whole },
    { "reference_shared_and_opened", reference_shared_and_opened },
    { "reference_deferral_is_bounded", reference_deferral_is_bounded },
    { "broken_deallocates_before_flushing", broken_deallocates_before_flushing },
    { "broken_partial_group_and_leak", broken_partial_group_and_leak },
    { "broken_without_batched_work_is_not_blamed", broken_without_batched_work_is_not_blamed },
    { "host_refuses_what_it_cannot_load", host_refuses_what_it_cannot_load },
};
const unsigned umd_scenario_count = sizeof(umd_scenarios) / sizeof(umd_scenarios[0]);
