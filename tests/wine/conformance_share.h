/*
 * What the sharing rows (conformance_share*.c) have in common: shared
 * objects on the soft adapter, NT handles and names, keyed mutex and
 * fence steps bounded by CHILD_TIMEOUT_MS, the other process, and the
 * session broker's books.
 */
#ifndef KMTSHIM_CONFORMANCE_SHARE_H
#define KMTSHIM_CONFORMANCE_SHARE_H

#include "conformance.h"

#define SHARE_SIZE 4096
#define PATTERN_PARENT 0x5a5a0000u       /* the creator's words: PATTERN + index */
#define PATTERN_GLOBAL 0x61000000u       /* the globally shared resource's */
#define PATTERN_CHILD 0xc41d0000u        /* what the child writes back */
#define CHILD_TIMEOUT_MS 30000

/* \BaseNamedObjects\<name> as the OBJECT_ATTRIBUTES the calls take. */
struct nt_name {
    WCHAR buffer[96];
    UNICODE_STRING string;
    OBJECT_ATTRIBUTES attr;
};
OBJECT_ATTRIBUTES *nt_name_init(struct nt_name *n, const char *name, ULONG attributes);
/* Unnamed attributes, inheritable or not. */
OBJECT_ATTRIBUTES *nt_attr_init(OBJECT_ATTRIBUTES *attr, ULONG attributes);

/* A one-allocation resource of SHARE_SIZE bytes with 4 bytes of runtime
 * data: NT-shareable (nt), or with a global handle in *global. */
NTSTATUS create_shared_resource(D3DKMT_HANDLE device, BOOL nt, D3DKMT_HANDLE *resource, D3DKMT_HANDLE *alloc,
                                D3DKMT_HANDLE *global);
void destroy_resource(D3DKMT_HANDLE device, D3DKMT_HANDLE resource);
/* Writes `pattern` + index into every word, or counts the words that differ. */
unsigned touch_words(D3DKMT_HANDLE device, D3DKMT_HANDLE alloc, UINT32 pattern, BOOL write);
NTSTATUS share_one(D3DKMT_HANDLE object, OBJECT_ATTRIBUTES *attr, HANDLE *nt);

/* What OpenResourceFromNtHandle gives: the resource, its allocation, and
 * for a (resource, keyed mutex, sync object) share the other two, with
 * the keyed mutex's runtime data size. */
struct share_opened {
    D3DKMT_HANDLE resource, alloc, keyed_mutex, sync;
    UINT keyed_mutex_runtime_size;
};
NTSTATUS share_open_nt(D3DKMT_HANDLE device, HANDLE nt, struct share_opened *o);
/* The same for a resource-only share (checks that nothing else opened). */
NTSTATUS open_from_nt(D3DKMT_HANDLE device, HANDLE nt, D3DKMT_HANDLE *resource, D3DKMT_HANDLE *alloc);
NTSTATUS open_global(D3DKMT_HANDLE device, D3DKMT_HANDLE global, D3DKMT_HANDLE *resource, D3DKMT_HANDLE *alloc);
NTSTATUS open_name(const char *name, HANDLE *nt);

LARGE_INTEGER *relative_ms(LARGE_INTEGER *t, LONGLONG ms);
/* Acquire with a CHILD_TIMEOUT_MS timeout; the FenceValue in *fence. */
NTSTATUS acquire_key(D3DKMT_HANDLE mutex, UINT64 key, UINT64 *fence);
NTSTATUS acquire_key_ms(D3DKMT_HANDLE mutex, UINT64 key, LONGLONG ms, UINT64 *fence);
NTSTATUS release_key(D3DKMT_HANDLE mutex, UINT64 key, UINT64 fence);
void destroy_keyed_mutex(D3DKMT_HANDLE mutex);
void destroy_sync(D3DKMT_HANDLE sync);
/* An async wait on a Win32 event, bounded: TRUE when the fence got there. */
BOOL wait_fence(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value);

/* A status that follows another process's exit, asked again until it is
 * `want`, for at most CHILD_TIMEOUT_MS. */
NTSTATUS name_status_until(const char *name, NTSTATUS want);
NTSTATUS global_status_until(D3DKMT_HANDLE device, D3DKMT_HANDLE global, NTSTATUS want);

/* conformance_share_util.c: a resource, a keyed mutex (NtSecuritySharing,
 * BUNDLE_MUTEX_RUNTIME_SIZE bytes of runtime data) and a monitored fence
 * (Shared|NtSecuritySharing, at 0) on `device`, and one NT handle naming
 * the three (ShareObjects with `attr`). */
#define BUNDLE_MUTEX_RUNTIME_SIZE 6
struct share_bundle {
    D3DKMT_HANDLE resource, alloc, keyed_mutex, fence;
    volatile UINT64 *fence_value;        /* the fence's CPU address */
    HANDLE nt;
};
BOOL share_create_bundle(D3DKMT_HANDLE device, OBJECT_ATTRIBUTES *attr, struct share_bundle *b);
/* Destroys the three and closes the NT handle. */
void share_destroy_bundle(D3DKMT_HANDLE device, struct share_bundle *b);

/* The other process is this program again,
 * "PROG share-child ROLE ARGS..." (kmtc_share_child picks the role); its
 * exit status is its failure count.  inherit: it inherits the inheritable
 * handles. */
BOOL share_start_child(PROCESS_INFORMATION *pi, BOOL inherit, const char *role, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* In the child: its own handle for the parent's `value` (hex, as the
 * command line gives it), by DuplicateHandle from the parent `pid`; NULL
 * after a failed check. */
HANDLE share_take_from_parent(const char *pid, const char *value);
/* Waits (CHILD_TIMEOUT_MS) for the child's end and checks its exit status;
 * closes its handles. */
void share_end_child(PROCESS_INFORMATION *pi, DWORD want_code);

/* The session broker's books (tests/wine/broker_stats, a Linux program
 * Wine starts); FALSE, after a failed check, when they cannot be had.
 * The helper counts as one client while it asks. */
struct share_broker_stats {
    unsigned clients, objects, global_handles, nt_shares, names, fds;
};
BOOL share_broker_stats(struct share_broker_stats *s);
/* The books at the start of a row: this process connected first (a keyed
 * mutex made and destroyed), so that the count of clients includes it. */
BOOL share_broker_stats_before(struct share_broker_stats *s);
/* Checks that the books equal `before` (asked again for up to
 * CHILD_TIMEOUT_MS while the broker sees another process go). */
void share_expect_broker_stats(const struct share_broker_stats *before, const char *when);

/* The roles of the other process. */
int kmtc_share_processes_child(int argc, char **argv);
int kmtc_share_holder_child(int argc, char **argv);
int kmtc_share_objects_child(int argc, char **argv);

#endif /* KMTSHIM_CONFORMANCE_SHARE_H */
