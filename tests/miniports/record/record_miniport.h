/*
 * The recording miniport: a test KMD that logs every DDI call the core makes,
 * with its full arguments, and checks the WDDM contract as it goes.
 *
 * Two ways to use it:
 *   - built into a test program: KmtRegisterMiniport("record",
 *     RecordMiniportDriverEntry), then KMTSHIM_MINIPORT=record.  The test reads
 *     the log and steers the miniport (fault injection, blocking, configured
 *     answers) through the functions below.
 *   - as a plugin (record_plugin.so, exporting KmtMiniportDriverEntry), loaded
 *     by path.  That copy has its own state; tests read it through the
 *     RECORD_ESCAPE driver-private escape.  It is configured from the
 *     environment: KMT_RECORD_DEVICES (physical devices, default 1).
 *
 * Contract checks (each failure is kept as a violation string): a DDI naming
 * an unknown or already destroyed object, DestroyAllocation of an allocation
 * with a binding still open or a CPU mapping still held, a device DDI after
 * DestroyDevice, DestroyDevice with the device's allocations or bindings
 * still alive, DestroyResource with allocations left, Open(Create) twice,
 * an adapter removed with objects alive.
 */
#ifndef KMTSHIM_RECORD_MINIPORT_H
#define KMTSHIM_RECORD_MINIPORT_H

#include <stdbool.h>

#include "kmtshim/d3dkmddi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum record_ddi {
    RECORD_ENUM_PHYSICAL_DEVICES,
    RECORD_ADD_DEVICE,
    RECORD_START_DEVICE,
    RECORD_STOP_DEVICE,
    RECORD_REMOVE_DEVICE,
    RECORD_UNLOAD,
    RECORD_QUERY_ADAPTER_INFO,
    RECORD_CREATE_DEVICE,
    RECORD_DESTROY_DEVICE,
    RECORD_CREATE_ALLOCATION,
    RECORD_DESTROY_ALLOCATION,
    RECORD_OPEN_ALLOCATION,
    RECORD_CLOSE_ALLOCATION,
    RECORD_LOCK,
    RECORD_UNLOCK,
    RECORD_ESCAPE,
    RECORD_DDI_COUNT
};

/* "no such entry" from the search functions */
#define RECORD_NONE (~0u)

/* One allocation as a DDI saw it. */
struct record_alloc {
    HANDLE handle;              /* Create: hAllocation out.  Destroy: list entry.
                                   Open: hDeviceSpecificAllocation out.  Close: list entry */
    D3DKMT_HANDLE core_handle;  /* Open: hAllocation (the core's handle) */
    HANDLE resolved;            /* Open: DxgkCbGetHandleData(hAllocation) during the call */
    SIZE_T size_in;             /* Create: Size on input */
    const void *sysmem;         /* Create: pKmtSystemMem */
    UINT flags_in;              /* Create: Flags.Value on input */
    UINT priv_size;             /* Create/Open: PrivateDriverDataSize */
    unsigned char *priv;        /* ...and a copy of the bytes as received */
};

/* One DDI call. */
struct record_call {
    unsigned seq;               /* position in the log */
    enum record_ddi ddi;
    NTSTATUS status;            /* what the miniport returned */
    HANDLE adapter;             /* hAdapter / MiniportDeviceContext, or NULL */
    HANDLE device;              /* driver device of device DDIs; CreateDevice: out;
                                   Escape: hDevice */
    HANDLE core_device;         /* CreateDevice: hDevice on input */
    UINT flags;                 /* the call's Flags.Value */
    UINT num;                   /* NumAllocations (Lock/Unlock: 1) */
    struct record_alloc *allocs;/* num entries */
    HANDLE resource_in;         /* Create/Destroy: hResource on input */
    HANDLE resource_out;        /* ...and on output */
    UINT priv_size;             /* resource-level private data (Create/Open);
                                   Escape: PrivateDriverDataSize */
    unsigned char *priv;
    UINT type;                  /* QueryAdapterInfo: Type.  Escape: RECORD_ESCAPE code or 0 */
    UINT in_size, out_size;     /* QueryAdapterInfo sizes */
    UINT input;                 /* QueryAdapterInfo: first UINT of the input, if any */
    void *data;                 /* Lock: pData out.  Unlock: pData in */
    UINT num_pages;             /* Lock: NumPages */
    UINT *pages;                /* ...and a copy of pPages */
    char location[64];          /* AddDevice: LocationId */
};

/* What the miniport reports and how it behaves; set before it loads. */
struct record_config {
    UINT devices;               /* physical devices, "rec0", "rec1"... (0..16) */
    ULONG interface_version;    /* DRIVER_INITIALIZATION_DATA.Version */
    ULONG init_size;            /* DRIVER_INITIALIZATION_DATA.Size */
    bool skip_initialize;       /* DriverEntry succeeds without DxgkInitialize */
    bool initialize_twice;      /* ...or calls it twice (see record_second_initialize_status) */
    bool omit_create_allocation;/* leave a required DDI NULL */
    KMT_ADAPTER_DESC desc;      /* Description gets " <LocationId>" appended */
    DXGK_DRIVERCAPS caps;
    DXGK_QUERYSEGMENTOUT segments;
    unsigned char umd_private[64];
    UINT umd_private_size;
    KMT_MEMORY_BUDGET budget[2];/* per D3DKMT_MEMORY_SEGMENT_GROUP */
    SIZE_T allocation_size;     /* size of driver-private allocations */
    D3DGPU_VIRTUAL_ADDRESS lock_gpu_va; /* what DxgkDdiLock reports */
    bool stamp_private_data;    /* CreateAllocation writes 0xC0 + index into byte 0 of
                                   each allocation's private data */
    bool rewrite_resource;      /* a partial DestroyAllocation hands back a new hResource */
};

/* The defaults: one device, version KMT_MINIPORT_INTERFACE_VERSION, UMD
 * names for DX11/DX12 only, an OpenGL ICD, WDDM 3.1 caps... */
void record_default_config(struct record_config *cfg);
/* Takes effect at the next DriverEntry (the process's next start). */
void record_configure(const struct record_config *cfg);
const struct record_config *record_current_config(void);

/* The DriverEntry to pass to KmtRegisterMiniport. */
NTSTATUS APIENTRY RecordMiniportDriverEntry(KMT_DRIVER_OBJECT *driver,
                                            const KMT_DXGKRNL_EXPORTS *dxgkrnl);
/* With initialize_twice: what the second DxgkInitialize returned. */
NTSTATUS record_second_initialize_status(void);

/* ---- the log ------------------------------------------------------------- */

unsigned record_log_count(void);
/* Entries stay valid until record_log_clear(). */
const struct record_call *record_log_get(unsigned index);
/* First entry of `ddi` at or after `from`, or RECORD_NONE. */
unsigned record_log_find(enum record_ddi ddi, unsigned from);
/* Last entry of `ddi`, or RECORD_NONE. */
unsigned record_log_find_last(enum record_ddi ddi);
unsigned record_log_count_ddi(enum record_ddi ddi);
void record_log_clear(void);
const char *record_ddi_name(enum record_ddi ddi);
/* Prints the log to stderr (for a failing test's diagnosis). */
void record_log_dump(void);

unsigned record_violation_count(void);
const char *record_violation(unsigned index);   /* NULL past the end */

/* ---- steering ------------------------------------------------------------ */

/* The nth next call (1: the very next) of `ddi` fails as a whole with
 * `status`: the miniport creates nothing and undoes what it began. */
void record_fail_call(enum record_ddi ddi, unsigned nth, NTSTATUS status);
/* The nth next call of `ddi` succeeds but leaves output handle `index` NULL
 * (CreateAllocation: hAllocation, OpenAllocation: hDeviceSpecificAllocation,
 * CreateDevice: hDevice). */
void record_null_handle(enum record_ddi ddi, unsigned nth, UINT index);

/* The next call of `ddi` stops inside the DDI (before doing anything) until
 * record_unblock(). */
void record_block(enum record_ddi ddi);
/* Waits until a call is stopped; false after `timeout_ms`. */
bool record_wait_blocked(unsigned timeout_ms);
void record_unblock(void);

/* Live objects the miniport holds (all adapters). */
struct record_live {
    unsigned adapters, devices, allocations, resources, bindings, mappings;
};
struct record_live record_live_objects(void);

/* ---- RECORD_ESCAPE: the same, through D3DKMTEscape (for the plugin) ----- */

#define RECORD_ESCAPE_MAGIC 0x44524352u          /* "RCRD" */

enum record_escape_code {
    RECORD_ESCAPE_ECHO = 1,     /* logged; inverts every byte after the 8-byte header */
    RECORD_ESCAPE_INFO = 2,     /* not logged: counts */
    RECORD_ESCAPE_ENTRY = 3,    /* not logged: log entry Index */
    RECORD_ESCAPE_RESOLVE = 4,  /* not logged: DxgkCbGetHandleData(Index, Arg) */
};

/* RESOLVE: Arg = DXGK_HANDLE_TYPE, plus this bit for Flags.DeviceSpecific */
#define RECORD_RESOLVE_DEVICE_SPECIFIC 0x100u

typedef struct _RECORD_ESCAPE_DATA {
    UINT Magic;
    UINT Code;
    UINT Index;                 /* ENTRY: log index.  RESOLVE: the core handle */
    UINT Arg;
    UINT64 Result;              /* RESOLVE: the handle data */
    union {
        struct {
            UINT IsPlugin;
            UINT LogCount;
            UINT Violations;
            UINT Devices;       /* live */
            UINT Allocations;
            UINT Resources;
            UINT Bindings;
            UINT Reserved;
        } Info;
        struct {
            UINT Ddi;
            NTSTATUS Status;
            UINT Num;
            UINT Flags;
            UINT64 Device;
            UINT64 ResourceIn;
            UINT64 ResourceOut;
            UINT64 Handles[8];
        } Entry;
    };
} RECORD_ESCAPE_DATA;

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_RECORD_MINIPORT_H */
