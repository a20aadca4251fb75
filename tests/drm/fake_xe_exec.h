/*
 * The xe fake's execution books (fake_xe_exec.c): VMs, bindings, exec
 * queues, execs and what the "GPU" made of them.  fake_xe_reset() starts
 * them anew (with each test's fake device).
 */
#ifndef KMTSHIM_FAKE_XE_EXEC_H
#define KMTSHIM_FAKE_XE_EXEC_H

#include <stdint.h>

#define FAKE_XE_VA_BITS 48

struct fake_xe {
    unsigned vms;                        /* live VMs */
    unsigned mappings;                   /* live bindings */
    unsigned queues;                     /* live exec queues */
    unsigned execs;                      /* XE_EXEC calls taken */
    unsigned faults;                     /* GPU faults while running them */
    uint64_t fault_address;              /* the last one's */
    uint64_t last_batch;                 /* the last exec's address */
    unsigned last_num_syncs;
    unsigned binds_unsynced;             /* binds with no out-sync to wait on */
    unsigned bind_waits;                 /* timeline waits answered */
    unsigned map_over_existing;          /* MAPs that replaced part of another binding */
    unsigned unmap_nothing;              /* UNMAPs where nothing was bound */
    unsigned closed_while_bound;         /* GEM_CLOSE of an object still bound */
    unsigned vm_destroyed_bound;         /* VM_DESTROY with bindings left */
    uint16_t last_pat_index;
    uint16_t last_engine_class;
};

extern struct fake_xe fake_xe;

void fake_xe_reset(void);

#endif
