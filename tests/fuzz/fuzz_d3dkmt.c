/*
 * The harness: an input is a program of D3DKMT calls.  Each step is one
 * byte choosing the call, then the bytes its arguments are drawn from
 * (fuzz_steps_*.c).  After the program, everything it may have left (sync
 * objects, devices with their cascade, adapter handles) is destroyed and
 * the library's live object count must be back where it was: a leak, a
 * crash, a sanitizer report or a hang is a finding.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_steps.h"

#define MAX_STEPS 64

LUID fuzz_luids[4];
unsigned fuzz_nluids;
int fuzz_eventfds[2] = { -1, -1 };

const fuzz_step fuzz_steps[] = {
    step_enum_adapters, step_open_adapter, step_close_adapter, step_query_adapter_info,
    step_query_video_memory, step_create_device, step_destroy_device, step_get_device_state,
    step_escape, step_create_allocation, step_destroy_allocation, step_lock, step_unlock,
    step_create_context, step_destroy_context, step_submit, step_render, step_create_sync,
    step_destroy_sync, step_signal_gpu, step_wait_gpu, step_signal_cpu, step_wait_cpu,
    /* the common creates again, so random programs build something to use */
    step_create_device, step_create_allocation, step_create_context, step_create_sync,
    step_open_adapter,
};
const unsigned fuzz_nsteps = sizeof(fuzz_steps) / sizeof(fuzz_steps[0]);

static unsigned baseline;

void fuzz_init(void)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    static bool done;

    if (done)
        return;
    done = true;
    /* hung GPU work (an unsatisfied wait) ends in milliseconds, not seconds */
    setenv("KMTSHIM_TDR_DELAY", "20", 0);
    fuzz_target.setup();
    for (int i = 0; i < 2; i++)
        fuzz_eventfds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (D3DKMTEnumAdapters2(&e) || !e.NumAdapters) {
        fprintf(stderr, "fuzz: no adapter on target %s\n", fuzz_target.name);
        abort();
    }
    for (ULONG i = 0; i < e.NumAdapters && i < 4; i++) {
        D3DKMT_CLOSEADAPTER c = { info[i].hAdapter };

        fuzz_luids[fuzz_nluids++] = info[i].AdapterLuid;
        D3DKMTCloseAdapter(&c);
    }
    baseline = KmtLiveObjectCount();
}

/* Destroys what the program may have left, newest first. */
static void cleanup(struct fuzz_pool *pool)
{
    for (unsigned i = pool->count; i-- > 0;) {
        struct fuzz_object *o = &pool->objects[i];

        if (o->kind == FK_SYNC && !o->dead) {
            D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { o->handle };
            D3DKMTDestroySynchronizationObject(&d);
        }
    }
    for (unsigned i = pool->count; i-- > 0;) {
        struct fuzz_object *o = &pool->objects[i];

        if (o->kind == FK_DEVICE && !o->dead) {
            D3DKMT_DESTROYDEVICE d = { o->handle };
            D3DKMTDestroyDevice(&d);
        }
    }
    for (unsigned i = pool->count; i-- > 0;) {
        struct fuzz_object *o = &pool->objects[i];

        if (o->kind == FK_ADAPTER && !o->dead) {
            D3DKMT_CLOSEADAPTER c = { o->handle };
            D3DKMTCloseAdapter(&c);
        }
    }
}

/* The target's reset needs an adapter handle of its own. */
static void reset_target(void)
{
    D3DKMT_OPENADAPTERFROMLUID o = { fuzz_luids[0] };
    D3DKMT_CLOSEADAPTER c;
    uint64_t v;

    if (fuzz_target.reset && !D3DKMTOpenAdapterFromLuid(&o)) {
        fuzz_target.reset(o.hAdapter);
        c.hAdapter = o.hAdapter;
        D3DKMTCloseAdapter(&c);
    }
    for (int i = 0; i < 2; i++)
        while (read(fuzz_eventfds[i], &v, sizeof(v)) == sizeof(v))
            ;
}

/* Objects are reclaimed when their last user leaves, which may be a
 * scheduler thread finishing up: give it a moment before calling it a leak. */
static unsigned settled_count(void)
{
    struct timespec tick = { 0, 1000000 };
    unsigned n = KmtLiveObjectCount();

    for (int i = 0; i < 2000 && n != baseline; i++) {
        nanosleep(&tick, NULL);
        n = KmtLiveObjectCount();
    }
    return n;
}

bool fuzz_run_one(const uint8_t *data, size_t size)
{
    static struct fuzz_prog prog;
    unsigned live;

    fuzz_init();
    memset(&prog.pool, 0, sizeof(prog.pool));
    prog.in = (struct fuzz_input){ data, size, 0 };
    fuzz_arena_reset();
    for (int step = 0; step < MAX_STEPS && !fuzz_done(&prog.in); step++)
        fuzz_steps[fuzz_u8(&prog.in) % fuzz_nsteps](&prog);
    cleanup(&prog.pool);
    reset_target();
    if ((live = settled_count()) != baseline) {
        fprintf(stderr, "fuzz: %u live objects after the input, %u before (%s)\n", live, baseline,
                fuzz_target.name);
        baseline = live;                /* one report per leak */
        return false;
    }
    return true;
}


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_run_one(data, size))
        abort();
    return 0;
}
