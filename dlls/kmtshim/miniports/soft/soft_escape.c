/*
 * Software miniport: driver-private escapes (see kmtsoft.h).
 */
#include <string.h>

#include "soft.h"

NTSTATUS APIENTRY soft_escape(HANDLE hAdapter, const DXGKARG_ESCAPE *args)
{
    struct soft_adapter *a = hAdapter;
    KMT_SOFT_ESCAPE *e = args->pPrivateDriverData;

    if (args->PrivateDriverDataSize != sizeof(*e))
        return STATUS_INVALID_PARAMETER;
    switch (e->Code) {
    case KMT_SOFT_ESCAPE_GET_STATS:
        memset(e->Data, 0, sizeof(e->Data));
        e->Stats.Devices = atomic_load(&a->devices);
        e->Stats.Allocations = atomic_load(&a->allocations);
        e->Stats.Resources = atomic_load(&a->resources);
        e->Stats.BytesAllocated = atomic_load(&a->bytes);
        e->Stats.OpenBindings = atomic_load(&a->bindings);
        e->Stats.Contexts = atomic_load(&a->contexts);
        e->Stats.CommandsExecuted = atomic_load(&a->commands);
        return STATUS_SUCCESS;
    case KMT_SOFT_ESCAPE_GET_MIRACAST_STATS: {
        KMT_SOFT_MIRACAST_STATS stats;

        _Static_assert(sizeof(stats) <= sizeof(e->Data), "Miracast stats fit the escape");
        soft_miracast_stats(a, &stats);
        memset(e->Data, 0, sizeof(e->Data));
        memcpy(e->Data, &stats, sizeof(stats));
        return STATUS_SUCCESS;
    }
    default:
        return STATUS_INVALID_PARAMETER;
    }
}
