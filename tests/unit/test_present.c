/*
 * D3DKMTPresent on the software adapter and the VidPn source counters it
 * feeds (QueryStatistics): every bad input; a Blt's bytes seen by a Lock
 * of the destination, on a device and on a context after GPU work; a
 * Blt behind a GPU wait queued, not waited for, or dropped with its
 * context; flips on the 60 Hz source counted once vblanks passed
 * (WaitForVerticalBlankEvent), each interval counting from the flip
 * before; queued flips superseded by an immediate one counted as
 * cancelled; QueuedPresent up and back to 0; SetQueuedLimit's limit
 * blocking a flip until one reached the screen, or its device went;
 * DestroyDevice and process teardown with flips queued (no leak: the
 * leak check and ASan).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec_util.h"

#define SIZE (32u * 1024u)               /* holds 4 rows of the 1920-pixel mode */
#define PITCH (1920u * 4u)
#define GARBAGE_HANDLE 0x40001240u

static D3DKMT_HANDLE adapter, device, src, dst;
static LUID luid;

static void setup(void)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_HANDLE allocs[2];

    unsetenv("KMTSHIM_SOFT_SOURCES");
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    luid = info[0].AdapterLuid;
    ck_assert_status(kmt_test_create_allocations(device, 2, SIZE, allocs, NULL), STATUS_SUCCESS);
    src = allocs[0];
    dst = allocs[1];
}

static D3DKMT_PRESENT blt_args(D3DKMT_HANDLE h)
{
    D3DKMT_PRESENT p;

    memset(&p, 0, sizeof(p));
    p.hContext = h;
    p.hSource = src;
    p.hDestination = dst;
    p.Flags.Blt = 1;
    p.Flags.SrcRectValid = 1;
    p.Flags.DstRectValid = 1;
    p.SrcRect = (RECT){ 0, 0, 16, 4 };
    p.DstRect = (RECT){ 8, 0, 24, 4 };
    return p;
}

static D3DKMT_PRESENT flip_args(D3DKMT_HANDLE alloc, D3DDDI_FLIPINTERVAL_TYPE interval)
{
    D3DKMT_PRESENT p;

    memset(&p, 0, sizeof(p));
    p.hDevice = device;
    p.hSource = alloc;
    p.Flags.Flip = 1;
    p.FlipInterval = interval;
    return p;
}

static NTSTATUS present(D3DKMT_PRESENT p)
{
    return D3DKMTPresent(&p);
}

static D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE_INFORMATION counters(void)
{
    D3DKMT_QUERYSTATISTICS q, pq;

    memset(&q, 0, sizeof(q));
    q.Type = D3DKMT_QUERYSTATISTICS_VIDPNSOURCE;
    q.AdapterLuid = luid;
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_SUCCESS);
    pq = q;
    pq.Type = D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE;
    ck_assert_status(D3DKMTQueryStatistics(&pq), STATUS_SUCCESS);
    /* one process: its counts are the source's */
    ck_assert_uint_eq(pq.QueryResult.ProcessVidPnSourceInformation.Frame,
                      q.QueryResult.VidPnSourceInformation.GlobalInformation.Frame);
    return q.QueryResult.VidPnSourceInformation.GlobalInformation;
}

static void wait_vblanks(unsigned n)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT w = { .hAdapter = adapter, .hDevice = device };

    while (n--)
        ck_assert_status(D3DKMTWaitForVerticalBlankEvent(&w), STATUS_SUCCESS);
}

static void fill(D3DKMT_HANDLE alloc, unsigned char value)
{
    D3DKMT_LOCK2 l = { .hDevice = device, .hAllocation = alloc };
    D3DKMT_UNLOCK2 u = { .hDevice = device, .hAllocation = alloc };

    ck_assert_status(D3DKMTLock2(&l), STATUS_SUCCESS);
    memset(l.pData, value, SIZE);
    ck_assert_status(D3DKMTUnlock2(&u), STATUS_SUCCESS);
}

/* Asserts the Blt of blt_args(): 16 pixels of 4 rows moved 8 pixels right. */
static void assert_blt_arrived(unsigned char copied, unsigned char kept)
{
    D3DKMT_LOCK2 l = { .hDevice = device, .hAllocation = dst };
    D3DKMT_UNLOCK2 u = { .hDevice = device, .hAllocation = dst };
    const unsigned char *p;

    ck_assert_status(D3DKMTLock2(&l), STATUS_SUCCESS);
    p = l.pData;
    for (unsigned row = 0; row < 5; row++)
        for (unsigned x = 0; x < 32; x++) {
            unsigned char want = row < 4 && x >= 8 && x < 24 ? copied : kept;

            for (unsigned b = 0; b < 4; b++)
                ck_assert_msg(p[row * PITCH + x * 4 + b] == want, "row %u pixel %u byte %u: %u, not %u",
                              row, x, b, p[row * PITCH + x * 4 + b], want);
        }
    ck_assert_status(D3DKMTUnlock2(&u), STATUS_SUCCESS);
}

START_TEST(bad_input)
{
    D3DKMT_HANDLE other_device, other_alloc;
    D3DKMT_PRESENT p;

    setup();
    ck_assert_status(D3DKMTPresent(NULL), STATUS_INVALID_PARAMETER);
    memset(&p, 0, sizeof(p));
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);           /* zeroed */
    p = blt_args(GARBAGE_HANDLE);
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);           /* no such context */
    p = blt_args(src);
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);           /* an allocation, not a context */
    p = blt_args(device);
    p.Flags.Value = 0;
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);           /* neither Blt nor Flip */
    p.Flags.Blt = p.Flags.Flip = 1;
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);           /* both */
    p = blt_args(device);
    p.Flags.Value |= 0x80000000u;
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);           /* Reserved */
    p = blt_args(device);
    p.Flags.ColorFill = 1;
    ck_assert_status(present(p), STATUS_NOT_SUPPORTED);
    p = blt_args(device);
    p.Flags.FlipStereo = 1;
    ck_assert_status(present(p), STATUS_NOT_SUPPORTED);
    p = blt_args(device);
    p.SubRectCnt = 1;
    ck_assert_status(present(p), STATUS_NOT_SUPPORTED);
    p = blt_args(device);
    p.BroadcastContextCount = D3DDDI_MAX_BROADCAST_CONTEXT + 1;
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    p = flip_args(src, (D3DDDI_FLIPINTERVAL_TYPE)6);
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    p = blt_args(device);
    p.VidPnSourceId = 1;                                              /* one source */
    ck_assert_status(present(p), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    p = flip_args(src, D3DDDI_FLIP_INTERVAL_ONE);
    p.VidPnSourceId = 16;
    ck_assert_status(present(p), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    p = blt_args(device);
    p.hSource = 0;
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    p = blt_args(device);
    p.hDestination = GARBAGE_HANDLE;
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    p = flip_args(device, D3DDDI_FLIP_INTERVAL_ONE);                  /* a device as hSource */
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    /* an allocation of another device */
    other_device = kmt_test_create_device(NULL);
    ck_assert_status(kmt_test_create_allocations(other_device, 1, SIZE, &other_alloc, NULL), STATUS_SUCCESS);
    p = blt_args(device);
    p.hDestination = other_alloc;
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    p = flip_args(other_alloc, D3DDDI_FLIP_INTERVAL_IMMEDIATE);
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    /* rectangles: not one size, empty, outside the mode, past an allocation */
    p = blt_args(device);
    p.DstRect.right++;
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    p = blt_args(device);
    p.SrcRect = p.DstRect = (RECT){ 4, 4, 4, 8 };
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    p = blt_args(device);
    p.SrcRect = p.DstRect = (RECT){ -1, 0, 15, 4 };
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    p = blt_args(device);
    p.SrcRect = p.DstRect = (RECT){ 1910, 0, 1930, 1 };
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    p = blt_args(device);
    p.SrcRect = p.DstRect = (RECT){ 0, 4, 16, 8 };                   /* rows 4..7 lie past 32 KiB */
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    p = blt_args(device);
    p.Flags.SrcRectValid = p.Flags.DstRectValid = 0;                  /* the whole mode: too big */
    ck_assert_status(present(p), STATUS_INVALID_PARAMETER);
    /* nothing was counted */
    ck_assert_uint_eq(counters().Frame, 0);
    {
        D3DKMT_DESTROYDEVICE d = { .hDevice = other_device };

        ck_assert_status(D3DKMTDestroyDevice(&d), STATUS_SUCCESS);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(blt_bytes_arrive)
{
    setup();
    fill(src, 0x5a);
    fill(dst, 0x11);
    ck_assert_status(present(blt_args(device)), STATUS_SUCCESS);
    assert_blt_arrived(0x5a, 0x11);
    ck_assert_uint_eq(counters().Frame, 1);
    ck_assert_uint_eq(counters().QueuedPresent, 0);
    /* within one allocation, overlapping: rows move whole */
    {
        D3DKMT_PRESENT p = blt_args(device);

        p.hSource = dst;
        p.SrcRect = (RECT){ 8, 0, 24, 3 };
        p.DstRect = (RECT){ 8, 1, 24, 4 };
        ck_assert_status(present(p), STATUS_SUCCESS);
        assert_blt_arrived(0x5a, 0x11);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* On a context, the copy lands after the GPU work queued before it on
 * the source: a GPU fill that takes a while. */
START_TEST(blt_on_context_follows_gpu_work)
{
    struct kmt_ring ring;
    struct kmt_cmds c;
    D3DKMT_HANDLE ctx;
    struct kmt_buf buf;

    setup();
    ctx = kmt_exec_virtual_context(device);
    kmt_buf_create(device, SIZE, &buf);
    kmt_ring_create(device, 4096, &ring);
    fill(dst, 0x11);
    kmt_cmds_init(&c);
    kmt_cmd_delay(&c, 20000);
    kmt_cmd_fill(&c, buf.va, SIZE, 0x77777777u);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &c), STATUS_SUCCESS);
    {
        D3DKMT_PRESENT p = blt_args(ctx);

        p.hSource = buf.handle;
        ck_assert_status(present(p), STATUS_SUCCESS);
    }
    assert_blt_arrived(0x77, 0x11);
    kmt_ring_destroy(device, &ring);
    ck_assert_status(kmt_buf_destroy(device, &buf, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A new context waits on the GPU for `fence` to reach 1, and a Blt of
 * 0x5a bytes onto 0x11 ones is presented behind the wait. */
static D3DKMT_HANDLE queue_blt_behind_wait(struct kmt_fence *fence)
{
    D3DKMT_HANDLE ctx = kmt_exec_virtual_context(device);

    ck_assert_status(kmt_fence_create(device, 0, 0, fence), STATUS_SUCCESS);
    fill(src, 0x5a);
    fill(dst, 0x11);
    ck_assert_status(kmt_gpu_wait(ctx, fence->handle, 1), STATUS_SUCCESS);
    ck_assert_status(present(blt_args(ctx)), STATUS_SUCCESS);
    return ctx;
}

/* A Blt behind a GPU wait only a later CPU signal satisfies is queued:
 * the call returns, the destination stays busy until the signal, and a
 * Lock then sees the copy. */
START_TEST(blt_behind_gpu_wait_is_queued)
{
    D3DKMT_LOCK busy;
    struct kmt_fence fence;
    D3DKMT_HANDLE ctx;

    setup();
    memset(&busy, 0, sizeof(busy));
    busy.hDevice = device;
    busy.hAllocation = dst;
    busy.Flags.DonotWait = 1;
    ctx = queue_blt_behind_wait(&fence);
    ck_assert_status(D3DKMTLock(&busy), STATUS_GRAPHICS_ALLOCATION_BUSY);
    ck_assert_uint_eq(counters().Frame, 0);
    ck_assert_status(kmt_fence_signal(device, fence.handle, 1, 0), STATUS_SUCCESS);
    assert_blt_arrived(0x5a, 0x11);
    ck_assert_uint_eq(counters().Frame, 1);
    ck_assert_status(kmt_syncobj_destroy(fence.handle), STATUS_SUCCESS);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A Blt still queued when its context goes is dropped, uncounted. */
START_TEST(queued_blt_dropped_with_its_context)
{
    struct kmt_fence fence;
    D3DKMT_HANDLE ctx;

    setup();
    ctx = queue_blt_behind_wait(&fence);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    assert_blt_arrived(0x11, 0x11);
    ck_assert_uint_eq(counters().Frame, 0);
    ck_assert_status(kmt_syncobj_destroy(fence.handle), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(flips_reach_the_screen_at_vblank)
{
    D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE_INFORMATION c;

    setup();
    ck_assert_status(present(flip_args(src, D3DDDI_FLIP_INTERVAL_FOUR)), STATUS_SUCCESS);
    c = counters();
    ck_assert_uint_eq(c.QueuedPresent, 1);                            /* 4 vblanks away: 67 ms */
    ck_assert_uint_eq(c.Frame, 0);
    wait_vblanks(5);
    c = counters();
    ck_assert_uint_eq(c.QueuedPresent, 0);
    ck_assert_uint_eq(c.Frame, 1);
    ck_assert_uint_eq(c.CancelledFrame, 0);
    /* three flips a vblank apart each reach the screen */
    for (int i = 0; i < 3; i++) {
        ck_assert_status(present(flip_args(i & 1 ? dst : src, D3DDDI_FLIP_INTERVAL_ONE)), STATUS_SUCCESS);
        wait_vblanks(2);
    }
    c = counters();
    ck_assert_uint_eq(c.Frame, 4);
    ck_assert_uint_eq(c.CancelledFrame, 0);
    /* an immediate flip is on the screen when the call returns */
    ck_assert_status(present(flip_args(src, D3DDDI_FLIP_INTERVAL_IMMEDIATE)), STATUS_SUCCESS);
    ck_assert_uint_eq(counters().Frame, 5);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Each interval counts from the flip before it: flips queued in one
 * frame show one a vblank, none cancelled. */
START_TEST(flips_in_one_frame_each_show)
{
    D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE_INFORMATION c;

    setup();
    for (int i = 0; i < 3; i++)
        ck_assert_status(present(flip_args(i & 1 ? dst : src, D3DDDI_FLIP_INTERVAL_ONE)), STATUS_SUCCESS);
    ck_assert_uint_eq(counters().QueuedPresent, 3);
    for (unsigned shown = 1; shown <= 3; shown++) {
        wait_vblanks(1);
        c = counters();
        /* one vblank may have passed between the presents and the first wait */
        ck_assert_uint_ge(c.Frame, shown);
        ck_assert_uint_le(c.Frame, shown + 1);
        ck_assert_uint_eq(c.QueuedPresent, 3 - c.Frame);
    }
    wait_vblanks(1);
    c = counters();
    ck_assert_uint_eq(c.Frame, 3);
    ck_assert_uint_eq(c.QueuedPresent, 0);
    ck_assert_uint_eq(c.CancelledFrame, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(superseded_flip_is_cancelled)
{
    D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE_INFORMATION c;

    setup();
    /* an immediate flip supersedes the queued ones */
    ck_assert_status(present(flip_args(src, D3DDDI_FLIP_INTERVAL_FOUR)), STATUS_SUCCESS);
    ck_assert_status(present(flip_args(src, D3DDDI_FLIP_INTERVAL_FOUR)), STATUS_SUCCESS);
    ck_assert_uint_eq(counters().QueuedPresent, 2);
    ck_assert_status(present(flip_args(dst, D3DDDI_FLIP_INTERVAL_IMMEDIATE)), STATUS_SUCCESS);
    c = counters();
    ck_assert_uint_eq(c.QueuedPresent, 0);
    ck_assert_uint_eq(c.Frame, 1);
    ck_assert_uint_eq(c.CancelledFrame, 2);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Threads of this process named `name`. */
static unsigned threads_named(const char *name)
{
    char path[320], comm[32];
    unsigned n = 0;
    DIR *dir = opendir("/proc/self/task");
    struct dirent *e;

    ck_assert_ptr_nonnull(dir);
    while ((e = readdir(dir))) {
        FILE *f;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        if (!(f = fopen(path, "r")))
            continue;                    /* the thread ended meanwhile */
        if (fgets(comm, sizeof(comm), f) && !strncmp(comm, name, strlen(name)))
            n++;
        fclose(f);
    }
    closedir(dir);
    return n;
}

/* The vsync interrupt (the soft miniport's vsync thread) runs while a
 * flip waits and stops once the last one reached the screen, with no
 * further call. */
START_TEST(interrupt_stops_after_the_last_flip)
{
    setup();
    ck_assert_msg(!threads_named("kmt-soft-vsync"), "a vsync thread before the flip");
    ck_assert_status(present(flip_args(src, D3DDDI_FLIP_INTERVAL_ONE)), STATUS_SUCCESS);
    ck_assert_msg(threads_named("kmt-soft-vsync") == 1, "no vsync thread for the flip");
    wait_vblanks(2);                     /* its own join ends with the wait */
    /* stopping is asynchronous: poll, generously */
    for (int i = 0; i < 200 && threads_named("kmt-soft-vsync"); i++)
        usleep(10000);
    ck_assert_uint_eq(threads_named("kmt-soft-vsync"), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static void *flip_thread(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)present(flip_args(dst, D3DDDI_FLIP_INTERVAL_ONE));
}

/* With a present limit of 1 and a flip queued 4 vblanks away, a thread
 * presents a second one, which blocks. */
static pthread_t start_blocked_flip(void)
{
    D3DKMT_SETQUEUEDLIMIT limit;
    pthread_t t;

    memset(&limit, 0, sizeof(limit));
    limit.hDevice = device;
    limit.Type = D3DKMT_SET_QUEUEDLIMIT_PRESENT;
    limit.QueuedPresentLimit = 1;
    ck_assert_status(D3DKMTSetQueuedLimit(&limit), STATUS_SUCCESS);
    ck_assert_status(present(flip_args(src, D3DDDI_FLIP_INTERVAL_FOUR)), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_create(&t, NULL, flip_thread, NULL), 0);
    return t;
}

START_TEST(queued_limit_blocks_a_flip)
{
    pthread_t t;
    void *ret;

    setup();
    t = start_blocked_flip();
    /* the second flip waits for the first to reach the screen */
    usleep(20000);
    ck_assert_uint_eq(counters().QueuedPresent, 1);
    ck_assert_uint_eq(counters().Frame, 0);
    ck_assert_int_eq(pthread_join(t, &ret), 0);
    ck_assert_status((NTSTATUS)(intptr_t)ret, STATUS_SUCCESS);
    ck_assert_uint_eq(counters().Frame, 1);                           /* the first one, shown */
    wait_vblanks(2);
    ck_assert_uint_eq(counters().Frame, 2);
    ck_assert_uint_eq(counters().QueuedPresent, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A flip blocked by the limit when its device is destroyed fails and
 * queues nothing. */
START_TEST(blocked_flip_fails_when_its_device_goes)
{
    D3DKMT_DESTROYDEVICE d;
    pthread_t t;
    void *ret;

    setup();
    t = start_blocked_flip();        /* 4 vblanks away: still blocked when the device goes */
    usleep(10000);
    d.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&d), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_join(t, &ret), 0);
    /* blocked, or not yet there: either way its device is gone */
    ck_assert(ret == (void *)(intptr_t)STATUS_DEVICE_REMOVED || ret == (void *)(intptr_t)STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(counters().QueuedPresent, 0);
    ck_assert_uint_eq(counters().CancelledFrame, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(teardown_with_flips_queued)
{
    D3DKMT_DESTROYDEVICE d;

    setup();
    ck_assert_status(present(flip_args(src, D3DDDI_FLIP_INTERVAL_FOUR)), STATUS_SUCCESS);
    ck_assert_status(present(flip_args(dst, D3DDDI_FLIP_INTERVAL_FOUR)), STATUS_SUCCESS);
    ck_assert_uint_eq(counters().QueuedPresent, 2);
    /* DestroyDevice cancels its flips */
    d.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&d), STATUS_SUCCESS);
    ck_assert_uint_eq(counters().QueuedPresent, 0);
    ck_assert_uint_eq(counters().CancelledFrame, 2);
    /* and process teardown those still queued */
    device = kmt_test_create_device(NULL);
    ck_assert_status(kmt_test_create_allocations(device, 1, SIZE, &src, NULL), STATUS_SUCCESS);
    ck_assert_status(present(flip_args(src, D3DDDI_FLIP_INTERVAL_FOUR)), STATUS_SUCCESS);
    ck_assert_status(present(flip_args(src, D3DDDI_FLIP_INTERVAL_FOUR)), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("present");
    TCase *tc = tcase_create("present");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, blt_bytes_arrive);
    tcase_add_test(tc, blt_on_context_follows_gpu_work);
    tcase_add_test(tc, blt_behind_gpu_wait_is_queued);
    tcase_add_test(tc, queued_blt_dropped_with_its_context);
    tcase_add_test(tc, flips_reach_the_screen_at_vblank);
    tcase_add_test(tc, flips_in_one_frame_each_show);
    tcase_add_test(tc, interrupt_stops_after_the_last_flip);
    tcase_add_test(tc, superseded_flip_is_cancelled);
    tcase_add_test(tc, queued_limit_blocks_a_flip);
    tcase_add_test(tc, blocked_flip_fails_when_its_device_goes);
    tcase_add_test(tc, teardown_with_flips_queued);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
