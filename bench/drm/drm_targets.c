/* Finding the DRM benchmarks' adapters: see drm_targets.h. */
#include <string.h>

#include "common/bench_util.h"
#include "drm_targets.h"

unsigned drm_open_targets(struct drm_target *out, unsigned max, bool (*usable)(const KMT_DRM_UMD_PRIVATE *umd))
{
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };
    unsigned n = 0;
    NTSTATUS s;

    if ((s = D3DKMTEnumAdapters2(&e)))
        bench_die("D3DKMTEnumAdapters2", s);
    for (ULONG i = 0; i < e.NumAdapters && n < max; i++) {
        struct drm_target *t = &out[n];
        D3DKMT_QUERYADAPTERINFO q = { info[i].hAdapter, KMTQAITYPE_UMDRIVERPRIVATE, &t->umd, sizeof(t->umd) };
        D3DKMT_CREATEDEVICE cd = { .hAdapter = info[i].hAdapter };
        KMT_ADAPTER_DESCRIPTION d;

        if (KmtQueryAdapterDescription(info[i].hAdapter, &d) || strcmp(d.Miniport, "drm") ||
            D3DKMTQueryAdapterInfo(&q) || !usable(&t->umd))
            continue;
        if ((s = D3DKMTCreateDevice(&cd)))
            bench_die("D3DKMTCreateDevice", s);
        t->adapter = info[i].hAdapter;
        t->device = cd.hDevice;
        memcpy(t->location, d.LocationId, sizeof(t->location));
        n++;
    }
    return n;
}
