/*
 * The Windows-side conformance suite: what a Windows program sees from the
 * D3DKMT functions, written once against a table of function pointers so
 * the same checks run through kmtshim.dll (static import), through the
 * gdi32 proxy (GetProcAddress, static import) and with user32 loaded at
 * run time.  Expectations: ../shared notes' windows-semantics.md and
 * Microsoft's documentation of each function.
 */
#ifndef KMTSHIM_CONFORMANCE_H
#define KMTSHIM_CONFORMANCE_H

#include "kmtshim/d3dkmthk.h"
#include "kmtshim/kmtsoft.h"
#include "kmtwtest.h"

/* One pointer per implemented function (functions.h), named as the
 * function without its D3DKMT prefix. */
struct kmt_api {
#define KMT_FUNC(name, type) NTSTATUS (APIENTRY *name)(type *desc);
#define KMT_FUNC_CUSTOM(name, type)
#include "functions.h"
    /* the KMT_FUNC_CUSTOM lines, with their own signatures */
    BOOLEAN (APIENTRY *CheckExclusiveOwnership)(void);
    NTSTATUS (APIENTRY *SetProcessSchedulingPriorityClass)(HANDLE, D3DKMT_SCHEDULINGPRIORITYCLASS);
    NTSTATUS (APIENTRY *GetProcessSchedulingPriorityClass)(HANDLE, D3DKMT_SCHEDULINGPRIORITYCLASS *);
    NTSTATUS (APIENTRY *ShareObjects)(UINT, const D3DKMT_HANDLE *, OBJECT_ATTRIBUTES *, DWORD, HANDLE *);
};

/* The table the conformance subtests call through; set by each program. */
extern struct kmt_api kmt_api;
/* Who answers (for messages): "kmtshim.dll", "gdi32 proxy"... */
extern const char *kmt_api_via;

/* Through the gdi32 proxy: Wine's own functions (gdi32_orig.dll), NULL
 * where Wine lacks one; all NULL when the suite calls kmtshim.dll.  A call
 * naming a non-zero handle kmtshim does not own is Wine's to answer there
 * (dlls/gdi32/routing.txt), so the suite expects Wine's answer for it. */
extern struct kmt_api kmt_wine_api;

/* Fills `api` with GetProcAddress(module, "D3DKMT<Name>"); returns how many
 * functions are missing (each reported as a failed check). */
unsigned kmt_api_from_module(struct kmt_api *api, HMODULE module, const char *what);
/* The same without reporting: for Wine's gdi32, which lacks most. */
void kmt_api_lookup(struct kmt_api *api, HMODULE module);

/* Status check with both values in hex. */
#define expect_status(expr, expected) do {                                          \
        NTSTATUS s_ = (expr), e_ = (expected);                                      \
        ok(s_ == e_, "%s: got %#lx, expected %#lx\n", #expr, (unsigned long)s_,     \
           (unsigned long)e_);                                                      \
    } while (0)

/* Windows' local handle format: bit 30 set, low 6 bits clear. */
#define is_local_handle(h) ((((h) & 0xc0000000u) == 0x40000000u) && !((h) & 0x3f))
/* Global (share) handles: the same with low bits 2. */
#define is_global_handle(h) ((((h) & 0xc0000000u) == 0x40000000u) && ((h) & 0x3f) == 2)

/* Helpers shared with the programs: open the software adapter (by its PCI
 * ids, whichever else is enumerated) and create a device on it. */
D3DKMT_HANDLE kmt_open_soft_adapter(LUID *luid);
D3DKMT_HANDLE kmt_create_device(D3DKMT_HANDLE adapter);
/* A driver-private soft allocation of `size` bytes (its GPU VA in *va). */
D3DKMT_HANDLE kmt_create_soft_allocation(D3DKMT_HANDLE device, UINT size, D3DGPU_VIRTUAL_ADDRESS *va);
void kmt_close_adapter(D3DKMT_HANDLE adapter);
void kmt_destroy_device(D3DKMT_HANDLE device);
/* A driver-private allocation of `size` bytes on a soft device. */
NTSTATUS create_soft_allocation(D3DKMT_HANDLE device, UINT64 size, D3DKMT_HANDLE *out);
/* The soft adapter's live objects (its private GET_STATS escape). */
KMT_SOFT_ESCAPE kmt_soft_stats(D3DKMT_HANDLE adapter);

/* The process's open handles (Wine 8's GetProcessHandleCount says 0). */
DWORD kmt_count_handles(void);

/* A monitored fence's CPU signal, and its CPU wait (event NULL: blocks
 * until the fence reaches `value`; else returns and sets the event then). */
NTSTATUS kmt_cpu_signal(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value);
NTSTATUS kmt_cpu_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, HANDLE event);

/* The subtests. */
void kmtc_enum_adapters2(void);
void kmtc_enum_adapters_legacy(void);
void kmtc_open_close(void);
void kmtc_handle_formats(void);
void kmtc_query_adapter_info(void);
void kmtc_query_adapter_info_ext(void);
void kmtc_query_registry(void);
void kmtc_video_memory(void);
void kmtc_devices(void);
void kmtc_create_allocation(void);
void kmtc_create_resource(void);
void kmtc_destroy_allocation(void);
void kmtc_lock(void);
void kmtc_escape(void);
void kmtc_null_descriptors(void);
/* conformance_unreadable.c */
void kmtc_unreadable_descriptors(void);
/* conformance_display.c: VidPn ownership, occlusion, priority class */
void kmtc_vidpn_ownership(void);
void kmtc_vidpn_two_devices(void);
void kmtc_vidpn_bad_input(void);
void kmtc_priority_class(void);
void kmtc_vblank(void);
void kmtc_vblank_bad_input(void);
void kmtc_present(void);
/* conformance_stats.c: QueryStatistics, QueryClockCalibration */
void kmtc_statistics(void);
void kmtc_clock_calibration(void);
/* conformance_display_open.c: opens by Wine's display names, DCs, GPU path */
void kmtc_display_names(void);
void kmtc_display_dcs(void);
void kmtc_display_device_names(void);
/* conformance_window_dc.c: opens by window DCs, and DCs of no display */
void kmtc_window_dcs(void);
void kmtc_non_display_dcs(void);
/* conformance_monitor_rule.c: window DCs with two monitors */
void kmtc_monitor_rule(void);
/* conformance_exec.c: execution and synchronization */
void kmtc_contexts(void);
void kmtc_device_state(void);
void kmtc_device_hang(void);
void kmtc_submit(void);
void kmtc_render(void);
void kmtc_syncobj_rows(void);
void kmtc_cpu_wait_blocking(void);
void kmtc_cpu_wait_async(void);
void kmtc_cpu_notification(void);
void kmtc_enqueue_cpu_event(void);
void kmtc_destroy_sets_event(void);
void kmtc_event_closed_early(void);
void kmtc_producer_consumer(void);
/* conformance_event_reuse.c: one event in many async waits */
void kmtc_event_reuse(void);
void kmtc_event_rounds(void);
#define KMT_EVENT_ROUNDS 20
/* conformance_share*.c: sharing between Windows processes (the programs
 * that list these run kmtc_share_child() for "PROG share-child ...") */
void kmtc_share_nt_handles(void);
void kmtc_share_processes(void);
void kmtc_share_holder_killed(void);
void kmtc_share_holder_exits(void);
void kmtc_share_objects(void);
int kmtc_share_child(int argc, char **argv);
#define KMT_SHARE_CHILD_ARG "share-child"

#define KMT_CONFORMANCE_TESTS                                   \
    { "enum_adapters2", kmtc_enum_adapters2 },                  \
    { "enum_adapters_legacy", kmtc_enum_adapters_legacy },      \
    { "open_close", kmtc_open_close },                          \
    { "handle_formats", kmtc_handle_formats },                  \
    { "query_adapter_info", kmtc_query_adapter_info },          \
    { "query_adapter_info_ext", kmtc_query_adapter_info_ext },  \
    { "query_registry", kmtc_query_registry },                  \
    { "video_memory", kmtc_video_memory },                      \
    { "devices", kmtc_devices },                                \
    { "create_allocation", kmtc_create_allocation },            \
    { "create_resource", kmtc_create_resource },                \
    { "destroy_allocation", kmtc_destroy_allocation },          \
    { "lock", kmtc_lock },                                      \
    { "escape", kmtc_escape },                                  \
    { "null_descriptors", kmtc_null_descriptors },              \
    { "unreadable_descriptors", kmtc_unreadable_descriptors },  \
    { "vidpn_ownership", kmtc_vidpn_ownership },                \
    { "vidpn_two_devices", kmtc_vidpn_two_devices },            \
    { "vidpn_bad_input", kmtc_vidpn_bad_input },                \
    { "priority_class", kmtc_priority_class },                  \
    { "vblank", kmtc_vblank },                                  \
    { "vblank_bad_input", kmtc_vblank_bad_input },              \
    { "present", kmtc_present },                                \
    { "statistics", kmtc_statistics },                          \
    { "clock_calibration", kmtc_clock_calibration },            \
    { "display_names", kmtc_display_names },                    \
    { "display_dcs", kmtc_display_dcs },                        \
    { "display_device_names", kmtc_display_device_names },      \
    { "window_dcs", kmtc_window_dcs },                          \
    { "non_display_dcs", kmtc_non_display_dcs },                \
    { "monitor_rule", kmtc_monitor_rule },                      \
    KMT_CONFORMANCE_EXEC_TESTS

#define KMT_CONFORMANCE_EXEC_TESTS                              \
    { "contexts", kmtc_contexts },                              \
    { "device_state", kmtc_device_state },                      \
    { "device_hang", kmtc_device_hang },                        \
    { "submit", kmtc_submit },                                  \
    { "render", kmtc_render },                                  \
    { "syncobj_rows", kmtc_syncobj_rows },                      \
    { "cpu_wait_blocking", kmtc_cpu_wait_blocking },            \
    { "cpu_wait_async", kmtc_cpu_wait_async },                  \
    { "cpu_notification", kmtc_cpu_notification },              \
    { "enqueue_cpu_event", kmtc_enqueue_cpu_event },            \
    { "destroy_sets_event", kmtc_destroy_sets_event },          \
    { "event_closed_early", kmtc_event_closed_early },          \
    { "event_reuse", kmtc_event_reuse },                        \
    { "event_rounds", kmtc_event_rounds },                      \
    { "producer_consumer", kmtc_producer_consumer }

#define KMT_CONFORMANCE_SHARE_TESTS                             \
    { "share_nt_handles", kmtc_share_nt_handles },              \
    { "share_processes", kmtc_share_processes },                \
    { "share_holder_killed", kmtc_share_holder_killed },        \
    { "share_holder_exits", kmtc_share_holder_exits },          \
    { "share_objects", kmtc_share_objects }

#endif /* KMTSHIM_CONFORMANCE_H */
