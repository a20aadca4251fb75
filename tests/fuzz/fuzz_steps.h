/*
 * The steps of a fuzz program, one D3DKMT call each (fuzz_steps_*.c).
 */
#ifndef KMTSHIM_FUZZ_STEPS_H
#define KMTSHIM_FUZZ_STEPS_H

#include <string.h>

#include "fuzz.h"

/* Flags: mostly combinations of the low `bits` bits, sometimes any value. */
UINT fuzz_flags(struct fuzz_prog *p, unsigned bits);
/* Stores a UINT into a flags struct of bitfields (4 bytes, no .Value). */
#define FUZZ_SET_FLAGS(dst, v) do {                                  \
        UINT _v = (v);                                               \
        _Static_assert(sizeof(dst) == sizeof(_v), "flags are 4 bytes"); \
        memcpy(&(dst), &_v, sizeof(_v));                             \
    } while (0)
/* Lock2, or after a GPU wait (fuzz_prog.gpu_waited) a Lock with DonotWait
 * in its place: Lock2 has no such flag and always waits.  The mapping, or
 * NULL. */
void *fuzz_lock2(struct fuzz_prog *p, D3DKMT_LOCK2 *l);
/* Writes a command stream for the miniport's engine; returns its length. */
UINT fuzz_commands(struct fuzz_prog *p, void *dst, UINT room);

void step_enum_adapters(struct fuzz_prog *p);
void step_open_adapter(struct fuzz_prog *p);
void step_close_adapter(struct fuzz_prog *p);
void step_query_adapter_info(struct fuzz_prog *p);
void step_query_video_memory(struct fuzz_prog *p);
void step_create_device(struct fuzz_prog *p);
void step_destroy_device(struct fuzz_prog *p);
void step_get_device_state(struct fuzz_prog *p);
void step_escape(struct fuzz_prog *p);
void step_shutdown(struct fuzz_prog *p);
void step_bad_desc(struct fuzz_prog *p);

void step_create_allocation(struct fuzz_prog *p);
void step_destroy_allocation(struct fuzz_prog *p);
void step_lock(struct fuzz_prog *p);
void step_unlock(struct fuzz_prog *p);

void step_create_context(struct fuzz_prog *p);
void step_destroy_context(struct fuzz_prog *p);
void step_submit(struct fuzz_prog *p);
void step_render(struct fuzz_prog *p);

void step_create_sync(struct fuzz_prog *p);
void step_destroy_sync(struct fuzz_prog *p);
void step_signal_gpu(struct fuzz_prog *p);
void step_wait_gpu(struct fuzz_prog *p);
void step_signal_cpu(struct fuzz_prog *p);
void step_wait_cpu(struct fuzz_prog *p);

void step_share_objects(struct fuzz_prog *p);
void step_close_nt(struct fuzz_prog *p);
void step_query_resource(struct fuzz_prog *p);
void step_open_resource(struct fuzz_prog *p);
void step_open_nt_from_name(struct fuzz_prog *p);
void step_create_keyed_mutex(struct fuzz_prog *p);
void step_open_keyed_mutex(struct fuzz_prog *p);
void step_destroy_keyed_mutex(struct fuzz_prog *p);
void step_acquire_keyed_mutex(struct fuzz_prog *p);
void step_release_keyed_mutex(struct fuzz_prog *p);
void step_open_sync(struct fuzz_prog *p);
void step_escape_wine(struct fuzz_prog *p);

#endif
