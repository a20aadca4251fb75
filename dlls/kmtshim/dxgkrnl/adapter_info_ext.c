/*
 * QueryAdapterInfo's registry strings, later WDDM caps and performance
 * data (ADAPTERREGISTRYINFO, WDDM_2_9_CAPS, WDDM_3_0_CAPS, DRIVERCAPS_EXT,
 * NODEPERFDATA, ADAPTERPERFDATA, ADAPTERPERFDATA_CAPS).  adapter.c checks
 * the handle and the exact size before these run.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dxgkrnl.h"
#include "ddi.h"
#include "umd_config.h"

/* ---- ADAPTERREGISTRYINFO -------------------------------------------------- */

static void ascii_to_wide(WCHAR *out, const char *s)
{
    size_t i = 0;

    for (; s[i] && i < MAX_PATH - 1; i++)
        out[i] = (WCHAR)(unsigned char)s[i];
    out[i] = 0;
}

/* A configured REG_SZ "HardwareInformation.<field>" of the adapter key
 * replaces the miniport's string, as the INF's value would on Windows. */
static void override_string(const struct dxgk_adapter *adapter, const char *field, WCHAR *out)
{
    const struct dxgk_reg_value *value;
    WCHAR name[MAX_PATH];
    char ascii[64];

    snprintf(ascii, sizeof(ascii), "HardwareInformation.%s", field);
    ascii_to_wide(name, ascii);
    value = dxgk_config_find_registry(adapter->registry, D3DDDI_QUERYREGISTRY_ADAPTERKEY, name);
    if (!value || value->type != REG_SZ)
        return;
    memset(out, 0, MAX_PATH * sizeof(WCHAR));
    memcpy(out, value->data, value->size < (MAX_PATH - 1) * sizeof(WCHAR) ? value->size
                                                                             : (MAX_PATH - 1) * sizeof(WCHAR));
}

/* Once, when the adapter starts: the strings do not change.  A miniport
 * without DXGKQAITYPE_KMT_REGISTRYINFO gets its description as the adapter
 * string and its driver's name as the chip type. */
NTSTATUS dxgk_adapter_registry_info_init(struct dxgk_adapter *adapter)
{
    D3DKMT_ADAPTERREGISTRYINFO *info = &adapter->registry_info;
    NTSTATUS status;

    memset(info, 0, sizeof(*info));
    status = dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_KMT_REGISTRYINFO, NULL, 0, info, sizeof(*info));
    /* An optional type: a miniport that refuses it any way (an older one
     * may call it a bad parameter) gets the description's strings; only
     * running out of memory stops the adapter, as everywhere at start. */
    if (status && !dxgk_status_is_exhaustion(status)) {
        memset(info, 0, sizeof(*info));
        ascii_to_wide(info->AdapterString, adapter->desc.Description);
        ascii_to_wide(info->ChipType, adapter->desc.DriverName);
        status = STATUS_SUCCESS;
    }
    if (status)
        return status;
    info->AdapterString[MAX_PATH - 1] = info->BiosString[MAX_PATH - 1] = 0;
    info->DacType[MAX_PATH - 1] = info->ChipType[MAX_PATH - 1] = 0;
    override_string(adapter, "AdapterString", info->AdapterString);
    override_string(adapter, "BiosString", info->BiosString);
    override_string(adapter, "DacType", info->DacType);
    override_string(adapter, "ChipType", info->ChipType);
    return STATUS_SUCCESS;
}

/* ---- performance data --------------------------------------------------------- */

/* Each D3DKMT_*PERFDATA* is its input indexes and then, 8 bytes in, the
 * DXGK_* structure the miniport fills. */
#define PERF_OUT 8
_Static_assert(offsetof(D3DKMT_NODE_PERFDATA, Frequency) == PERF_OUT &&
               offsetof(D3DKMT_NODE_PERFDATA, MaxTransitionLatency) ==
                   PERF_OUT + offsetof(DXGK_NODE_PERFDATA, MaxTransitionLatency) &&
               offsetof(D3DKMT_NODE_PERFDATA, Reserved) == PERF_OUT + sizeof(DXGK_NODE_PERFDATA),
               "node perf data layout");
_Static_assert(offsetof(D3DKMT_ADAPTER_PERFDATA, MemoryFrequency) == PERF_OUT &&
               offsetof(D3DKMT_ADAPTER_PERFDATA, PowerStateOverride) ==
                   PERF_OUT + offsetof(DXGK_ADAPTER_PERFDATA, PowerStateOverride) &&
               sizeof(D3DKMT_ADAPTER_PERFDATA) == PERF_OUT + sizeof(DXGK_ADAPTER_PERFDATA),
               "adapter perf data layout");
_Static_assert(offsetof(D3DKMT_ADAPTER_PERFDATACAPS, MaxMemoryBandwidth) == PERF_OUT &&
               offsetof(D3DKMT_ADAPTER_PERFDATACAPS, TemperatureWarning) ==
                   PERF_OUT + offsetof(DXGK_ADAPTER_PERFDATACAPS, TemperatureWarning) &&
               sizeof(D3DKMT_ADAPTER_PERFDATACAPS) == PERF_OUT + sizeof(DXGK_ADAPTER_PERFDATACAPS),
               "adapter perf caps layout");

/* The miniport's answer for engine `node` of physical adapter `physical`,
 * or zeros where it has none (STATUS_NOT_SUPPORTED); the caller's input
 * stays, nothing is written on a failure. */
static NTSTATUS perf_query(struct dxgk_adapter *adapter, DXGK_QUERYADAPTERINFOTYPE type, UINT node,
                           UINT physical, void *data, UINT out_size)
{
    KMT_PERFDATA_IN in = { node, physical };
    union {
        DXGK_NODE_PERFDATA node;
        DXGK_ADAPTER_PERFDATA adapter;
        DXGK_ADAPTER_PERFDATACAPS caps;
    } out;
    NTSTATUS status;

    if ((type == DXGKQAITYPE_NODEPERFDATA && node >= adapter->caps.NodeCount) ||
        physical >= adapter->caps.PhysicalAdapterCount)
        return STATUS_INVALID_PARAMETER;
    memset(&out, 0, sizeof(out));
    status = dxgk_ddi_query_adapter_info(adapter, type, &in, sizeof(in), &out, out_size);
    if (status == STATUS_NOT_SUPPORTED) {
        memset(&out, 0, sizeof(out));
        status = STATUS_SUCCESS;
    }
    if (!status)
        memcpy((BYTE *)data + PERF_OUT, &out, out_size);
    return status;
}

static NTSTATUS node_perfdata(struct dxgk_adapter *adapter, D3DKMT_NODE_PERFDATA *data)
{
    NTSTATUS status = perf_query(adapter, DXGKQAITYPE_NODEPERFDATA, data->NodeOrdinal,
                                 data->PhysicalAdapterIndex, data, sizeof(DXGK_NODE_PERFDATA));

    if (!status)
        data->Reserved = 0;
    return status;
}

static NTSTATUS adapter_perfdata(struct dxgk_adapter *adapter, D3DKMT_ADAPTER_PERFDATA *data)
{
    NTSTATUS status = perf_query(adapter, DXGKQAITYPE_ADAPTERPERFDATA, 0, data->PhysicalAdapterIndex,
                                 data, sizeof(DXGK_ADAPTER_PERFDATA));

    if (!status)
        data->PowerStateOverride = data->PowerStateOverride ? 1 : 0;
    return status;
}

/* ---- the types ------------------------------------------------------------------ */

UINT dxgk_qai_ext_size(KMTQUERYADAPTERINFOTYPE type)
{
    switch (type) {
    case KMTQAITYPE_ADAPTERREGISTRYINFO:
    case KMTQAITYPE_ADAPTERREGISTRYINFO_RENDER: return sizeof(D3DKMT_ADAPTERREGISTRYINFO);
    case KMTQAITYPE_WDDM_2_9_CAPS:              return sizeof(D3DKMT_WDDM_2_9_CAPS);
    case KMTQAITYPE_WDDM_3_0_CAPS:              return sizeof(D3DKMT_WDDM_3_0_CAPS);
    case KMTQAITYPE_DRIVERCAPS_EXT:             return sizeof(D3DKMT_DRIVERCAPS_EXT);
    case KMTQAITYPE_NODEPERFDATA:               return sizeof(D3DKMT_NODE_PERFDATA);
    case KMTQAITYPE_ADAPTERPERFDATA:            return sizeof(D3DKMT_ADAPTER_PERFDATA);
    case KMTQAITYPE_ADAPTERPERFDATA_CAPS:       return sizeof(D3DKMT_ADAPTER_PERFDATACAPS);
    default:                                    return 0;
    }
}

NTSTATUS dxgk_qai_ext(struct dxgk_adapter *adapter, KMTQUERYADAPTERINFOTYPE type, void *data)
{
    switch (type) {
    case KMTQAITYPE_ADAPTERREGISTRYINFO:
    case KMTQAITYPE_ADAPTERREGISTRYINFO_RENDER:
        *(D3DKMT_ADAPTERREGISTRYINFO *)data = adapter->registry_info;
        return STATUS_SUCCESS;
    case KMTQAITYPE_WDDM_2_9_CAPS: {
        /* kmtshim's VidSch schedules in software: whatever WDDM_2_7_CAPS
         * says of hardware scheduling, said again in 2.9's words */
        D3DKMT_WDDM_2_9_CAPS caps = { .Value = 0 };

        caps.HwSchSupportState = adapter->caps.Wddm27Caps.HwSchSupported ? DXGK_FEATURE_SUPPORT_STABLE
                                                                         : DXGK_FEATURE_SUPPORT_ALWAYS_OFF;
        caps.HwSchEnabled = adapter->caps.Wddm27Caps.HwSchEnabled;
        *(D3DKMT_WDDM_2_9_CAPS *)data = caps;
        return STATUS_SUCCESS;
    }
    case KMTQAITYPE_WDDM_3_0_CAPS:
        /* no hardware flip queue, no displayable allocations */
        ((D3DKMT_WDDM_3_0_CAPS *)data)->Value = 0;
        return STATUS_SUCCESS;
    case KMTQAITYPE_DRIVERCAPS_EXT:
        /* no virtual modes, no USB4 monitors */
        ((D3DKMT_DRIVERCAPS_EXT *)data)->Value = 0;
        return STATUS_SUCCESS;
    case KMTQAITYPE_NODEPERFDATA:
        return node_perfdata(adapter, data);
    case KMTQAITYPE_ADAPTERPERFDATA:
        return adapter_perfdata(adapter, data);
    case KMTQAITYPE_ADAPTERPERFDATA_CAPS:
        return perf_query(adapter, DXGKQAITYPE_ADAPTERPERFDATA_CAPS, 0,
                          ((D3DKMT_ADAPTER_PERFDATACAPS *)data)->PhysicalAdapterIndex, data,
                          sizeof(DXGK_ADAPTER_PERFDATACAPS));
    default:
        return STATUS_NOT_SUPPORTED;
    }
}
