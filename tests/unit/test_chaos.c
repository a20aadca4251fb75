/*
 * Chaos over the software miniport (the engine: chaos.c; what it checks:
 * chaos.h).  Its command streams fill, write, wait and fault.
 */
#include <stddef.h>

#include "chaos.h"

#define RING_SIZE 65536u
#define BAD_VA 0x10000ull                  /* below the soft adapter's first GPU address */

static UINT soft_desc(void *desc)
{
    KMT_SOFT_ALLOCATION_DESC d = kmt_test_soft_desc(CHAOS_ALLOC_SIZE);

    memcpy(desc, &d, sizeof(d));
    return sizeof(d);
}

static UINT soft_fill_patched(void *buffer, UINT bytes, UINT delay_us, UINT *patch_offset)
{
    struct kmt_cmds cmds;

    kmt_cmds_init(&cmds);
    kmt_cmd_fill(&cmds, 0, bytes, 0x5a5a5a5a);
    kmt_cmd_delay(&cmds, delay_us);
    memcpy(buffer, cmds.data, cmds.length);
    *patch_offset = offsetof(KMT_SOFT_CMD_FILL, DstVa);
    return cmds.length;
}

/* Written once and never again: queued work reads what was written. */
static void soft_streams_create(struct chaos_streams *s)
{
    struct kmt_cmds cmds;
    UINT offset = 0;

    kmt_buf_create(s->device, RING_SIZE, &s->ring);
    for (int i = 0; i < 4; i++) {
        /* one stream at a time, copied into the ring */
        kmt_cmds_init(&cmds);
        if (i == 0) {
            kmt_cmd_nop(&cmds);
        } else if (i == 1) {
            kmt_cmd_fence(&cmds, KMT_SOFT_OP_WRITE64, s->ring.va + RING_SIZE - 8, 1);
            kmt_cmd_fill(&cmds, s->ring.va + RING_SIZE - 4096, 2048, 0x5a);
        } else if (i == 2) {
            kmt_cmd_delay(&cmds, 200);
        } else {
            kmt_cmd_fence(&cmds, KMT_SOFT_OP_WRITE64, BAD_VA, 1);
        }
        memcpy((char *)s->ring.cpu + offset, cmds.data, cmds.length);
        s->va[i] = s->ring.va + offset;
        s->length[i] = cmds.length;
        offset += (cmds.length + 63u) & ~63u;
    }
}

static void soft_streams_destroy(struct chaos_streams *s)
{
    ck_assert_status(kmt_buf_destroy(s->device, &s->ring, 0), STATUS_SUCCESS);
}

static UINT soft_escape(void *data, D3DKMT_HANDLE allocation, D3DKMT_HANDLE syncobj, unsigned random)
{
    KMT_SOFT_ESCAPE e = { .Code = KMT_SOFT_ESCAPE_GET_STATS };

    (void)allocation, (void)syncobj, (void)random;
    _Static_assert(sizeof(e) <= CHAOS_ESCAPE_MAX, "fits the engine's buffer");
    memcpy(data, &e, sizeof(e));
    return sizeof(e);
}

/* The sink's requests: its info, a monitor arriving or leaving, a chunk. */
static UINT soft_miracast_io(void *in, UINT *out_size, unsigned random)
{
    KMT_SOFT_MIRACAST_HEADER *h = in;

    switch (random % 3) {
    case 0:
        h->Code = KMT_SOFT_MIRACAST_GET_SINK_INFO;
        h->Size = sizeof(*h);
        *out_size = sizeof(KMT_SOFT_MIRACAST_SINK_INFO);
        break;
    case 1: {
        KMT_SOFT_MIRACAST_SET_MONITOR_IN *m = in;

        h->Code = KMT_SOFT_MIRACAST_SET_MONITOR;
        h->Size = sizeof(*m);
        m->Connected = (random >> 8) & 1;
        m->MonitorType = 0;
        *out_size = 0;
        break;
    }
    default: {
        KMT_SOFT_MIRACAST_CHUNK_IN *c = in;

        memset(c, 0, sizeof(*c) + 64);
        h->Code = KMT_SOFT_MIRACAST_SEND_CHUNK;
        h->Size = sizeof(*c) + 64;
        c->FrameNumber = random >> 8;
        c->EncodeMicroseconds = random % 200;
        c->DataSize = 64;
        *out_size = sizeof(KMT_SOFT_MIRACAST_CHUNK_OUT);
        break;
    }
    }
    return h->Size;
}

static void soft_check_empty(D3DKMT_HANDLE adapter)
{
    KMT_SOFT_ESCAPE st = kmt_test_soft_stats(adapter);
    KMT_SOFT_ESCAPE e = kmt_test_soft_escape(adapter, KMT_SOFT_ESCAPE_GET_MIRACAST_STATS);
    KMT_SOFT_MIRACAST_STATS sink;

    ck_assert_uint_eq(st.Stats.Devices, 0);
    ck_assert_uint_eq(st.Stats.Allocations, 0);
    ck_assert_uint_eq(st.Stats.Resources, 0);
    ck_assert_uint_eq(st.Stats.BytesAllocated, 0);
    ck_assert_uint_eq(st.Stats.OpenBindings, 0);
    ck_assert_uint_eq(st.Stats.Contexts, 0);
    /* every session's context destroyed; none reached by a stale or overlapping call */
    memcpy(&sink, e.Data, sizeof(sink));
    ck_assert_uint_eq(sink.ContextsCreated, sink.ContextsDestroyed);
    ck_assert_uint_eq(sink.StaleIoControls, 0);
    ck_assert_uint_eq(sink.Overlaps, 0);
    fprintf(stderr, "chaos soft: %llu Miracast sessions, %llu IoControls\n", (unsigned long long)sink.ContextsCreated,
            (unsigned long long)sink.IoControls);
}

START_TEST(chaos_soft)
{
    static const struct chaos_backend soft = {
        .name = "soft",
        .alloc_desc = soft_desc,
        .streams_create = soft_streams_create,
        .streams_destroy = soft_streams_destroy,
        .fill_patched = soft_fill_patched,
        .escape = soft_escape,
        .miracast_io = soft_miracast_io,
        .share = true,
        .check_empty = soft_check_empty,
    };

    kmt_test_use_miniport("soft");
    chaos_run(&soft);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chaos");
    TCase *tc = tcase_create("chaos");

    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, chaos_soft);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
