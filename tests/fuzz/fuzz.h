/*
 * The call-sequence fuzzer of the export layer (docs/fuzzing.md).
 *
 * One harness (fuzz_d3dkmt.c) reads an input as a program of D3DKMT calls;
 * a target (fuzz_target_soft.c, fuzz_target_drm.c) picks the miniport it
 * runs over; a driver runs it: libFuzzer (`make fuzz`) or the deterministic
 * corpus-and-PRNG program of `make check` (fuzz_main.c).
 */
#ifndef KMTSHIM_FUZZ_H
#define KMTSHIM_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kmtshim/kmtshim.h"

/* ---- the input, read as a stream (reads past the end give zeros) ---------- */

struct fuzz_input {
    const uint8_t *data;
    size_t size, pos;
};

uint8_t fuzz_u8(struct fuzz_input *in);
uint32_t fuzz_u32(struct fuzz_input *in);
uint64_t fuzz_u64(struct fuzz_input *in);
bool fuzz_done(const struct fuzz_input *in);
/* Copies up to n bytes of the input into dst, zero-filling the rest. */
void fuzz_bytes(struct fuzz_input *in, void *dst, size_t n);

/* ---- caller memory: an arena the library may read and write --------------- */

/* A zeroed block of n bytes (n <= FUZZ_BLOCK_MAX), or NULL when the arena
 * is full; blocks live until fuzz_arena_reset(). */
#define FUZZ_BLOCK_MAX (160u * 1024u)
void *fuzz_arena_alloc(size_t n);
void fuzz_arena_reset(void);
/* Whether p points into the arena (a block the harness may touch). */
bool fuzz_in_arena(const void *p);
/* A page the process has reserved but cannot read (PROT_NONE), for the
 * memory the library documents it probes (ExistingSysMem). */
void *fuzz_unreadable_page(void);
/* A read-only copy of n bytes (n <= FUZZ_BLOCK_MAX) on pages of their own,
 * like a program's static const data: input the library must never write
 * unless the driver answers in it.  NULL when full; it lives until
 * fuzz_arena_reset(), which makes the pages writable again. */
const void *fuzz_read_only_copy(const void *src, size_t n);

/* ---- the handles a program made -------------------------------------------- */

enum fuzz_kind {
    FK_ADAPTER, FK_DEVICE, FK_RESOURCE, FK_ALLOCATION, FK_CONTEXT, FK_SYNC, FK_KEYED_MUTEX, FK_KINDS
};

struct fuzz_object {
    D3DKMT_HANDLE handle;
    enum fuzz_kind kind;
    bool dead;                      /* destroyed (or its device was) */
    D3DKMT_HANDLE device;           /* the device whose destruction takes it along */
    D3DKMT_HANDLE resource;         /* allocations: the resource that does */
    UINT64 size;                    /* allocations: bytes the harness may touch after Lock */
    D3DGPU_VIRTUAL_ADDRESS gpu_va;  /* allocations (CreateAllocation2), monitored fences */
    /* contexts: the legacy buffers Render reads (CreateContext's outputs) */
    void *cmd;
    UINT cmd_size;
    D3DDDI_ALLOCATIONLIST *alist;
    UINT alist_size;
    D3DDDI_PATCHLOCATIONLIST *plist;
    UINT plist_size;
};

#define FUZZ_MAX_OBJECTS 256

struct fuzz_pool {
    struct fuzz_object objects[FUZZ_MAX_OBJECTS];
    unsigned count;
};

struct fuzz_object *fuzz_pool_add(struct fuzz_pool *pool, enum fuzz_kind kind, D3DKMT_HANDLE h,
                                  D3DKMT_HANDLE device);
/* A live object of that kind chosen by the input, or NULL. */
struct fuzz_object *fuzz_pool_pick_live(struct fuzz_pool *pool, enum fuzz_kind kind, struct fuzz_input *in);
/* A handle for a call that wants `kind`: live, stale, another type's, 0 or garbage. */
D3DKMT_HANDLE fuzz_pool_handle(struct fuzz_pool *pool, enum fuzz_kind kind, struct fuzz_input *in);
/* The object behind a handle the program made, or NULL. */
struct fuzz_object *fuzz_pool_find(struct fuzz_pool *pool, D3DKMT_HANDLE h);
/* After a call succeeded with handle h: a finding if h names an object the
 * program destroyed (and no live object has that value since). */
void fuzz_pool_expect_live(struct fuzz_pool *pool, D3DKMT_HANDLE h, const char *call);
/* Marks a destroyed object dead, with everything a destroyed device takes along. */
void fuzz_pool_kill(struct fuzz_pool *pool, D3DKMT_HANDLE h);

/* ---- targets ------------------------------------------------------------------ */

/* What must come back to where it was after an input, besides the core's
 * live objects: the miniport's own books, the process's fds. */
#define FUZZ_MAX_COUNTS 32
struct fuzz_counts {
    unsigned n;
    const char *name[FUZZ_MAX_COUNTS];
    UINT64 value[FUZZ_MAX_COUNTS];
};

void fuzz_count_add(struct fuzz_counts *c, const char *name, UINT64 value);

/* What a target's GPU runs: the command streams the harness writes. */
enum fuzz_isa {
    FUZZ_ISA_SOFT,                  /* the soft engine's commands (kmtsoft.h), on every target */
    FUZZ_ISA_MI,                    /* and Intel MI commands (i915, xe) */
    FUZZ_ISA_PM4,                   /* and AMD PM4 type-3 packets (amdgpu) */
};

struct fuzz_target {
    const char *name;
    enum fuzz_isa isa;
    /* Once per process, before the first D3DKMT call. */
    void (*setup)(void);
    /* Arms a failure of the Nth call of the miniport or allocation of the
     * library, from now on (NULL: none). */
    void (*arm_fault)(D3DKMT_HANDLE adapter, struct fuzz_input *in);
    /* Disarms what arm_fault armed on this thread, before the cleanup. */
    void (*disarm)(void);
    /* Leaves the miniport as the next input expects it (faults disarmed). */
    void (*reset)(D3DKMT_HANDLE adapter);
    /* The miniport's live objects (its stats escape). */
    void (*counts)(D3DKMT_HANDLE adapter, struct fuzz_counts *c);
    /* Writes the miniport's allocation private data for `size` bytes into
     * dst (room bytes); returns its size. */
    UINT (*alloc_desc)(void *dst, size_t room, UINT64 size, UINT flags);
    /* True for an fd a fake kernel holds as the kernel's own reference (an
     * exported dma-buf or syncobj file, an eventfd registration): no
     * process fd on a real system, so no leak (NULL: none). */
    bool (*kernel_fd)(int fd);
};

extern const struct fuzz_target fuzz_target;

/* ---- what a program shared: global handles and NT handles (fuzz_share.c) ---- */

#define FUZZ_MAX_SHARES 32

/* Global handles the creates gave (never closed: they die with their
 * objects), and the NT handles (natively fds) the program got, which the
 * harness closes: a step, or the end of the program. */
struct fuzz_shares {
    D3DKMT_HANDLE global[FUZZ_MAX_SHARES];
    unsigned nglobal;
    int nt[FUZZ_MAX_SHARES];
    bool nt_closed[FUZZ_MAX_SHARES];
    unsigned nnt;
};

/* ---- steps: one D3DKMT call each, its arguments drawn from the input ------- */

struct fuzz_prog {
    struct fuzz_input in;
    struct fuzz_pool pool;
    bool restarted;                 /* KmtProcessShutdown() ran */
    /* A context was given a GPU wait: it may be one nothing will satisfy,
     * and then the context never runs again and what it queued stays busy,
     * as on Windows.  From then on the program makes no call that waits for
     * an allocation to go idle (a Lock without DonotWait, a synchronous
     * destroy): it would wait for ever, the program's own deadlock. */
    bool gpu_waited;
    struct fuzz_shares shares;
};

/* The adapters' LUIDs and two eventfds, found at start-up. */
extern LUID fuzz_luids[4];
extern unsigned fuzz_nluids;
extern int fuzz_eventfds[2];

typedef void (*fuzz_step)(struct fuzz_prog *p);
extern const fuzz_step fuzz_steps[];
extern const unsigned fuzz_nsteps;

/* Argument helpers (fuzz_args.c). */
void *fuzz_ptr(struct fuzz_prog *p, size_t size, bool fill);
UINT fuzz_size(struct fuzz_prog *p, UINT natural);
UINT fuzz_count(struct fuzz_prog *p, UINT max);
HANDLE fuzz_event(struct fuzz_prog *p);
UINT64 fuzz_fence_value(struct fuzz_prog *p);

/* Sharing (fuzz_share.c).  A global handle a create gave (0: none). */
void fuzz_share_add_global(struct fuzz_prog *p, D3DKMT_HANDLE global);
/* An NT handle a call gave: kept until closed (a finding if it is no fd). */
void fuzz_share_add_nt(struct fuzz_prog *p, HANDLE nt, const char *call);
/* A global handle for an open: live, stale, a local handle, 0 or garbage. */
D3DKMT_HANDLE fuzz_share_global(struct fuzz_prog *p);
/* An NT handle for an open: one the program holds, one it closed, an fd
 * of another kind (an eventfd), or no fd at all. */
HANDLE fuzz_share_nt(struct fuzz_prog *p);
/* Closes one NT handle the program holds (CloseHandle). */
void fuzz_share_close_one(struct fuzz_prog *p);
/* Closes every NT handle the program still holds. */
void fuzz_share_close_all(struct fuzz_prog *p);
/* A name for ShareObjects and the opens by name: NULL attributes, no
 * name, one of a few names, or a malformed UNICODE_STRING. */
OBJECT_ATTRIBUTES *fuzz_share_name(struct fuzz_prog *p);
/* Gives the process a broker of its own (KMTSHIM_BROKER_DIR, a fresh
 * directory removed at exit), so a run never meets the user's session. */
void fuzz_share_private_broker(void);

/* The peer process (fuzz_peer.c): handed the program's global and NT
 * handles as they come, when fuzz_peer_enabled (the deterministic driver)
 * and KMT_FUZZ_PEER is not 0.  fuzz_peer_finish ends it at the end of an
 * input; false (a finding) if it failed.  fuzz_peer_main is the peer. */
extern bool fuzz_peer_enabled;
void fuzz_peer_offer_global(D3DKMT_HANDLE global);
void fuzz_peer_offer_nt(int fd);
bool fuzz_peer_finish(void);
int fuzz_peer_main(int argc, char **argv);

/* A broken rule the harness saw during the program (not a leak): printed,
 * and the input fails. */
void fuzz_finding(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the harness -------------------------------------------------------------- */

/* Runs one input; false (with a line on stderr) if it left objects alive. */
bool fuzz_run_one(const uint8_t *data, size_t size);
/* Brings the process up (the target's setup, the adapters started). */
void fuzz_init(void);

#endif
