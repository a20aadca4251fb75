/*
 * Races through the public API on the software adapter: many threads on one
 * device, destroys racing uses, DestroyDevice racing creation, and two
 * threads destroying the same thing.  Run it under the sanitizer build too:
 * a use after free here is a crash there.
 *
 * Worker threads never call ck_assert (Check's bookkeeping is not made for
 * threads): they record the first unexpected status and the main thread
 * asserts after joining.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#define ALLOC_SIZE 4096u

static D3DKMT_HANDLE adapter, device;

static void setup(void)
{
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

/* Everything reclaimed: the miniport holds nothing, the core holds only
 * the adapter and its handle, and a shutdown leaves zero objects. */
static void teardown(void)
{
    KMT_SOFT_ESCAPE st = kmt_test_soft_stats(adapter);

    ck_assert_uint_eq(st.Stats.Allocations, 0);
    ck_assert_uint_eq(st.Stats.Resources, 0);
    ck_assert_uint_eq(st.Stats.BytesAllocated, 0);
    ck_assert_uint_eq(st.Stats.OpenBindings, 0);
    KmtProcessShutdown();
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
}

/* ---- thread-safe helpers (no Check calls) -------------------------------------------------- */

struct result {
    const char *what;                    /* first unexpected thing, or NULL */
    NTSTATUS status;
};

static void report_failure(struct result *r, const char *what, NTSTATUS status)
{
    if (!r->what) {
        r->what = what;
        r->status = status;
    }
}

#define ASSERT_RESULT(r, name) \
    ck_assert_msg(!(r).what, "%s: %s (status 0x%08x)", name, (r).what, (unsigned)(r).status)

static NTSTATUS create_alloc(D3DKMT_HANDLE dev, D3DKMT_HANDLE *out)
{
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(ALLOC_SIZE);
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = dev;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    status = D3DKMTCreateAllocation(&ca);
    *out = status ? 0 : info.hAllocation;
    return status;
}

static NTSTATUS create_resource(D3DKMT_HANDLE dev, UINT n, D3DKMT_HANDLE *res, D3DKMT_HANDLE *allocs)
{
    KMT_SOFT_ALLOCATION_DESC desc[8];
    D3DDDI_ALLOCATIONINFO info[8];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;

    memset(info, 0, sizeof(info));
    for (UINT i = 0; i < n; i++) {
        desc[i] = kmt_test_soft_desc(ALLOC_SIZE);
        info[i].pPrivateDriverData = &desc[i];
        info[i].PrivateDriverDataSize = sizeof(desc[i]);
    }
    ca.hDevice = dev;
    ca.NumAllocations = n;
    ca.pAllocationInfo = info;
    ca.Flags.CreateResource = res != NULL;
    status = D3DKMTCreateAllocation(&ca);
    for (UINT i = 0; !status && i < n; i++)
        allocs[i] = info[i].hAllocation;
    if (!status && res)
        *res = ca.hResource;
    return status;
}

static NTSTATUS destroy_list(D3DKMT_HANDLE dev, const D3DKMT_HANDLE *list, UINT count, UINT flags)
{
    D3DKMT_DESTROYALLOCATION2 d = { 0 };

    d.hDevice = dev;
    d.phAllocationList = list;
    d.AllocationCount = count;
    d.Flags.Value = flags;
    return D3DKMTDestroyAllocation2(&d);
}

static NTSTATUS destroy_resource(D3DKMT_HANDLE dev, D3DKMT_HANDLE res)
{
    D3DKMT_DESTROYALLOCATION d = { 0 };

    d.hDevice = dev;
    d.hResource = res;
    return D3DKMTDestroyAllocation(&d);
}

static NTSTATUS lock2(D3DKMT_HANDLE dev, D3DKMT_HANDLE alloc, void **data)
{
    D3DKMT_LOCK2 l = { 0 };
    NTSTATUS status;

    l.hDevice = dev;
    l.hAllocation = alloc;
    status = D3DKMTLock2(&l);
    *data = l.pData;
    return status;
}

static NTSTATUS unlock2(D3DKMT_HANDLE dev, D3DKMT_HANDLE alloc)
{
    D3DKMT_UNLOCK2 u = { dev, alloc };
    return D3DKMTUnlock2(&u);
}

static unsigned next_random(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 16;
}

static void start_threads(pthread_t *th, unsigned n, void *(*fn)(void *), void *args, size_t arg_size)
{
    for (unsigned i = 0; i < n; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, fn, (char *)args + i * arg_size), 0);
}

static void join_threads(pthread_t *th, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
}

/* ---- 1. create / lock / write / unlock / destroy on one device ---------------------------- */

static const unsigned churn_threads[] = { 2, 8 };

struct churn {
    struct result r;
    unsigned id, iterations, done;
};

static void *churn_main(void *p)
{
    struct churn *c = p;

    for (unsigned i = 0; i < c->iterations; i++) {
        D3DKMT_HANDLE h;
        unsigned char *data;
        NTSTATUS s;

        if ((s = create_alloc(device, &h)))
            return report_failure(&c->r, "create", s), NULL;
        if ((h & 0x3f) || !(h & 0xc0000000u))
            return report_failure(&c->r, "create gave a malformed handle", (NTSTATUS)h), NULL;
        if ((s = lock2(device, h, (void **)&data)))
            return report_failure(&c->r, "lock", s), NULL;
        /* the allocation is ours alone: its memory must hold what we write */
        memset(data, (int)(c->id + i), ALLOC_SIZE);
        if ((s = unlock2(device, h)))
            return report_failure(&c->r, "unlock", s), NULL;
        if ((s = lock2(device, h, (void **)&data)))
            return report_failure(&c->r, "relock", s), NULL;
        if (data[0] != (unsigned char)(c->id + i) || data[ALLOC_SIZE - 1] != data[0])
            return report_failure(&c->r, "memory changed under its owner", 0), NULL;
        if ((s = unlock2(device, h)))
            return report_failure(&c->r, "unlock 2", s), NULL;
        if ((s = destroy_list(device, &h, 1, 0)))
            return report_failure(&c->r, "destroy", s), NULL;
        if ((s = lock2(device, h, (void **)&data)) != STATUS_INVALID_PARAMETER)
            return report_failure(&c->r, "lock after destroy", s), NULL;
        c->done++;
    }
    return NULL;
}

START_TEST(threads_churn_one_device)
{
    const unsigned n = churn_threads[_i];
    struct churn c[8];
    pthread_t th[8];

    memset(c, 0, sizeof(c));
    for (unsigned i = 0; i < n; i++) {
        c[i].id = i * 31;
        c[i].iterations = 20000 / n;
    }
    start_threads(th, n, churn_main, c, sizeof(c[0]));
    join_threads(th, n);
    for (unsigned i = 0; i < n; i++) {
        ASSERT_RESULT(c[i].r, "churn");
        ck_assert_uint_eq(c[i].done, c[i].iterations);
    }
    ck_assert_uint_eq(KmtLiveObjectCount(), 3);       /* adapter, its handle, the device */
}
END_TEST

/* ---- 2. one thread destroys what the others use -------------------------------------------- */

#define SLOTS 32

struct shared_slots {
    _Atomic D3DKMT_HANDLE slot[SLOTS];
    atomic_bool stop;
};

struct user {
    struct result r;
    struct shared_slots *s;
    unsigned seed;
    unsigned locked, missed, stale_unlocks;
};

static void *user_main(void *p)
{
    struct user *u = p;

    while (!atomic_load(&u->s->stop)) {
        D3DKMT_HANDLE h = atomic_load(&u->s->slot[next_random(&u->seed) % SLOTS]);
        void *data;
        NTSTATUS s = lock2(device, h, &data);

        /* Never touch `data`: the allocation may be destroyed (and
         * unmapped) at any moment, which is the destroyer's right. */
        if (s == STATUS_INVALID_PARAMETER) {
            u->missed++;
            continue;
        }
        if (s)
            return report_failure(&u->r, "lock", s), NULL;
        u->locked++;
        s = unlock2(device, h);
        if (s == STATUS_INVALID_PARAMETER)
            u->stale_unlocks++;
        else if (s)
            return report_failure(&u->r, "unlock", s), NULL;
    }
    return NULL;
}

START_TEST(destroy_races_lock)
{
    enum { USERS = 3, ROUNDS = 4000 };
    static const UINT flag_sets[] = { 0, 1 /* AssumeNotInUse */, 2 /* SynchronousDestroy */, 3 };
    struct shared_slots s;
    struct user u[USERS];
    pthread_t th[USERS];
    unsigned seed = 99, locked = 0;

    memset(&s, 0, sizeof(s));
    memset(u, 0, sizeof(u));
    for (unsigned i = 0; i < SLOTS; i++) {
        D3DKMT_HANDLE h;
        ck_assert_status(create_alloc(device, &h), STATUS_SUCCESS);
        atomic_store(&s.slot[i], h);
    }
    for (unsigned i = 0; i < USERS; i++) {
        u[i].s = &s;
        u[i].seed = i + 1;
    }
    start_threads(th, USERS, user_main, u, sizeof(u[0]));
    for (unsigned r = 0; r < ROUNDS; r++) {
        unsigned k = next_random(&seed) % SLOTS;
        D3DKMT_HANDLE old = atomic_load(&s.slot[k]), fresh;
        NTSTATUS st;

        if ((st = create_alloc(device, &fresh)))
            break;
        atomic_store(&s.slot[k], fresh);
        if ((st = destroy_list(device, &old, 1, flag_sets[r % 4]))) {
            atomic_store(&s.stop, true);
            join_threads(th, USERS);
            ck_abort_msg("round %u: destroy gave 0x%08x", r, (unsigned)st);
        }
    }
    atomic_store(&s.stop, true);
    join_threads(th, USERS);
    for (unsigned i = 0; i < USERS; i++) {
        ASSERT_RESULT(u[i].r, "user");
        locked += u[i].locked;
    }
    ck_assert_uint_gt(locked, 0);
    for (unsigned i = 0; i < SLOTS; i++) {
        D3DKMT_HANDLE h = atomic_load(&s.slot[i]);
        /* some are still locked by users that lost no race: destroy anyway */
        ck_assert_status(destroy_list(device, &h, 1, 0), STATUS_SUCCESS);
    }
}
END_TEST

/* ---- 3. DestroyDevice while others allocate on it ------------------------------------------ */

struct allocator {
    struct result r;
    atomic_uint *created;
    unsigned made, refused;
    D3DKMT_HANDLE kept[64];
    unsigned nkept;
};

static void *allocator_main(void *p)
{
    struct allocator *a = p;

    for (;;) {
        D3DKMT_HANDLE h;
        void *data;
        NTSTATUS s = create_alloc(device, &h);

        if (s == STATUS_INVALID_PARAMETER)
            break;                          /* the device is gone */
        if (s)
            return report_failure(&a->r, "create", s), NULL;
        a->made++;
        atomic_fetch_add(a->created, 1);
        s = lock2(device, h, &data);
        if (s && s != STATUS_INVALID_PARAMETER)
            return report_failure(&a->r, "lock", s), NULL;
        /* keep some (the cascade must reclaim them), destroy the rest */
        if (a->nkept < 64 && (a->made & 1)) {
            a->kept[a->nkept++] = h;
            continue;
        }
        s = destroy_list(device, &h, 1, 0);
        if (s && s != STATUS_INVALID_PARAMETER)
            return report_failure(&a->r, "destroy", s), NULL;
    }
    /* from now on, every call on the dead device is refused */
    for (unsigned i = 0; i < a->nkept; i++) {
        void *data;
        NTSTATUS s = lock2(device, a->kept[i], &data);

        if (s != STATUS_INVALID_PARAMETER)
            return report_failure(&a->r, "lock on a destroyed device", s), NULL;
        if ((s = destroy_list(device, &a->kept[i], 1, 0)) != STATUS_INVALID_PARAMETER)
            return report_failure(&a->r, "destroy on a destroyed device", s), NULL;
        a->refused++;
    }
    return NULL;
}

START_TEST(destroy_device_while_allocating)
{
    enum { N = 4 };
    struct allocator a[N];
    pthread_t th[N];
    atomic_uint created = 0;
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_HANDLE h;
    unsigned made = 0;

    memset(a, 0, sizeof(a));
    for (unsigned i = 0; i < N; i++)
        a[i].created = &created;
    start_threads(th, N, allocator_main, a, sizeof(a[0]));
    while (atomic_load(&created) < 400)
        sched_yield();
    dd.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    join_threads(th, N);
    for (unsigned i = 0; i < N; i++) {
        ASSERT_RESULT(a[i].r, "allocator");
        made += a[i].made;
    }
    ck_assert_uint_ge(made, 400);
    ck_assert_status(create_alloc(device, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Devices, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), 2);       /* the adapter and its handle */
}
END_TEST

/* ---- 4. two threads destroying the same thing ----------------------------------------------- */

enum duel_kind { DUEL_LIST, DUEL_RESOURCE, DUEL_DEVICE };

struct duel {
    pthread_barrier_t *start, *done;
    enum duel_kind kind;
    const D3DKMT_HANDLE *list;            /* list, or [resource], or [device] */
    const _Atomic unsigned *rounds;
    NTSTATUS status;
};

static void *duel_main(void *p)
{
    struct duel *d = p;

    for (;;) {
        pthread_barrier_wait(d->start);
        if (!atomic_load(d->rounds))
            return NULL;
        if (d->kind == DUEL_LIST) {
            d->status = destroy_list(device, d->list, 8, 0);
        } else if (d->kind == DUEL_RESOURCE) {
            d->status = destroy_resource(device, d->list[0]);
        } else {
            D3DKMT_DESTROYDEVICE dd = { d->list[0] };
            d->status = D3DKMTDestroyDevice(&dd);
        }
        pthread_barrier_wait(d->done);
    }
}

static void run_duels(enum duel_kind kind, unsigned rounds)
{
    pthread_barrier_t start, done;
    D3DKMT_HANDLE list[8], res, dev;
    const D3DKMT_HANDLE *target = kind == DUEL_LIST ? list : kind == DUEL_RESOURCE ? &res : &dev;
    _Atomic unsigned left = rounds;
    struct duel d[2];
    pthread_t th[2];

    pthread_barrier_init(&start, NULL, 3);
    pthread_barrier_init(&done, NULL, 3);
    for (int i = 0; i < 2; i++)
        d[i] = (struct duel){ &start, &done, kind, target, &left, 0 };
    start_threads(th, 2, duel_main, d, sizeof(d[0]));
    for (unsigned r = 0; r < rounds; r++) {
        if (kind == DUEL_LIST) {
            ck_assert_status(create_resource(device, 8, NULL, list), STATUS_SUCCESS);
        } else if (kind == DUEL_RESOURCE) {
            ck_assert_status(create_resource(device, 8, &res, list), STATUS_SUCCESS);
        } else {
            D3DKMT_CREATEDEVICE cd = { 0 };
            cd.hAdapter = adapter;
            ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
            dev = cd.hDevice;
            ck_assert_status(create_resource(dev, 8, &res, list), STATUS_SUCCESS);
            ck_assert_status(create_resource(dev, 4, NULL, list), STATUS_SUCCESS);
        }
        pthread_barrier_wait(&start);
        pthread_barrier_wait(&done);
        /* exactly one wins; the other finds nothing left to destroy */
        ck_assert_msg((d[0].status == STATUS_SUCCESS) != (d[1].status == STATUS_SUCCESS),
                      "round %u: 0x%08x and 0x%08x", r, (unsigned)d[0].status, (unsigned)d[1].status);
        ck_assert_status(d[0].status | d[1].status, STATUS_INVALID_PARAMETER);
        ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 0);
    }
    atomic_store(&left, 0);
    pthread_barrier_wait(&start);
    join_threads(th, 2);
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&done);
}

START_TEST(two_threads_destroy_same_list)
{
    run_duels(DUEL_LIST, 1000);
}
END_TEST

START_TEST(two_threads_destroy_same_resource)
{
    run_duels(DUEL_RESOURCE, 1000);
}
END_TEST

START_TEST(two_threads_destroy_same_device)
{
    run_duels(DUEL_DEVICE, 500);
}
END_TEST

/* ---- 5. many threads locking one allocation ----------------------------------------------- */

struct locker {
    struct result r;
    D3DKMT_HANDLE h;
    unsigned id, iterations;
};

static void *locker_main(void *p)
{
    struct locker *l = p;

    for (unsigned i = 0; i < l->iterations; i++) {
        unsigned char *data;
        NTSTATUS s = lock2(device, l->h, (void **)&data);

        if (s)
            return report_failure(&l->r, "lock", s), NULL;
        /* our lock keeps the mapping alive, whoever else unlocks */
        data[l->id] = (unsigned char)(i + 1);
        if ((s = unlock2(device, l->h)))
            return report_failure(&l->r, "unlock", s), NULL;
    }
    return NULL;
}

START_TEST(many_threads_lock_one_allocation)
{
    enum { N = 8, ITER = 3000 };
    struct locker l[N];
    pthread_t th[N];
    unsigned char *data;
    D3DKMT_HANDLE h;

    ck_assert_status(create_alloc(device, &h), STATUS_SUCCESS);
    memset(l, 0, sizeof(l));
    for (unsigned i = 0; i < N; i++)
        l[i] = (struct locker){ { NULL, 0 }, h, i, ITER };
    start_threads(th, N, locker_main, l, sizeof(l[0]));
    join_threads(th, N);
    for (unsigned i = 0; i < N; i++)
        ASSERT_RESULT(l[i].r, "locker");
    /* every lock was matched: the count is back to zero */
    ck_assert_status(unlock2(device, h), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2(device, h, (void **)&data), STATUS_SUCCESS);
    for (unsigned i = 0; i < N; i++)
        ck_assert_uint_eq(data[i], (unsigned char)ITER);
    ck_assert_status(unlock2(device, h), STATUS_SUCCESS);
    ck_assert_status(destroy_list(device, &h, 1, 0), STATUS_SUCCESS);
}
END_TEST

/* ---- 6. handles stay unique across threads and devices ------------------------------------ */

struct maker {
    struct result r;
    D3DKMT_HANDLE dev;
    D3DKMT_HANDLE handles[500];
};

static void *maker_main(void *p)
{
    struct maker *m = p;
    D3DKMT_CREATEDEVICE cd = { 0 };
    NTSTATUS s;

    cd.hAdapter = adapter;
    if ((s = D3DKMTCreateDevice(&cd)))
        return report_failure(&m->r, "create device", s), NULL;
    m->dev = cd.hDevice;
    for (unsigned i = 0; i < 500; i++) {
        D3DKMT_HANDLE spare;
        if ((s = create_alloc(m->dev, &m->handles[i])))
            return report_failure(&m->r, "create", s), NULL;
        /* churn some handles too, so freed slots get recycled meanwhile */
        if ((s = create_alloc(m->dev, &spare)) || (s = destroy_list(m->dev, &spare, 1, 0)))
            return report_failure(&m->r, "churn", s), NULL;
    }
    return NULL;
}

static int cmp_handle(const void *a, const void *b)
{
    D3DKMT_HANDLE x = *(const D3DKMT_HANDLE *)a, y = *(const D3DKMT_HANDLE *)b;
    return x < y ? -1 : x > y;
}

START_TEST(live_handles_unique_across_threads)
{
    enum { N = 4 };
    static struct maker m[N];
    D3DKMT_HANDLE *all = malloc(sizeof(D3DKMT_HANDLE) * (N * 500 + N));
    unsigned n = 0;
    pthread_t th[N];

    ck_assert_ptr_nonnull(all);
    memset(m, 0, sizeof(m));
    start_threads(th, N, maker_main, m, sizeof(m[0]));
    join_threads(th, N);
    for (unsigned i = 0; i < N; i++) {
        ASSERT_RESULT(m[i].r, "maker");
        all[n++] = m[i].dev;
        for (unsigned j = 0; j < 500; j++)
            all[n++] = m[i].handles[j];
    }
    qsort(all, n, sizeof(*all), cmp_handle);
    for (unsigned i = 1; i < n; i++)
        ck_assert_msg(all[i] != all[i - 1], "handle 0x%08x issued twice", all[i]);
    /* each device sees only its own allocations */
    {
        void *data;
        ck_assert_status(lock2(m[0].dev, m[1].handles[0], &data), STATUS_INVALID_PARAMETER);
        ck_assert_status(lock2(m[1].dev, m[1].handles[0], &data), STATUS_SUCCESS);
        ck_assert_status(unlock2(m[1].dev, m[1].handles[0]), STATUS_SUCCESS);
    }
    for (unsigned i = 0; i < N; i++) {
        D3DKMT_DESTROYDEVICE dd = { m[i].dev };
        ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    }
    free(all);
}
END_TEST

/* ---- 7. destroying a resource while its allocations are used -------------------------------- */

struct res_user {
    struct result r;
    const _Atomic D3DKMT_HANDLE *allocs;
    atomic_bool *stop;
    unsigned seed, locked;
};

static void *res_user_main(void *p)
{
    struct res_user *u = p;

    while (!atomic_load(u->stop)) {
        D3DKMT_HANDLE h = atomic_load(&u->allocs[next_random(&u->seed) % 8]);
        void *data;
        NTSTATUS s = lock2(device, h, &data);

        if (s == STATUS_INVALID_PARAMETER)
            continue;
        if (s)
            return report_failure(&u->r, "lock", s), NULL;
        u->locked++;
        s = unlock2(device, h);
        if (s && s != STATUS_INVALID_PARAMETER)
            return report_failure(&u->r, "unlock", s), NULL;
    }
    return NULL;
}

START_TEST(destroy_resource_races_lock)
{
    enum { USERS = 3, ROUNDS = 1500 };
    _Atomic D3DKMT_HANDLE allocs[8];
    atomic_bool stop = false;
    struct res_user u[USERS];
    pthread_t th[USERS];
    D3DKMT_HANDLE res, fresh[8];

    ck_assert_status(create_resource(device, 8, &res, fresh), STATUS_SUCCESS);
    for (int i = 0; i < 8; i++)
        atomic_store(&allocs[i], fresh[i]);
    memset(u, 0, sizeof(u));
    for (unsigned i = 0; i < USERS; i++) {
        u[i].allocs = allocs;
        u[i].stop = &stop;
        u[i].seed = 7 * i + 3;
    }
    start_threads(th, USERS, res_user_main, u, sizeof(u[0]));
    for (unsigned r = 0; r < ROUNDS; r++) {
        D3DKMT_HANDLE old = res;
        NTSTATUS s;

        if ((s = create_resource(device, 8, &res, fresh)))
            break;
        for (int i = 0; i < 8; i++)
            atomic_store(&allocs[i], fresh[i]);
        if ((s = destroy_resource(device, old))) {
            atomic_store(&stop, true);
            join_threads(th, USERS);
            ck_abort_msg("round %u: destroy gave 0x%08x", r, (unsigned)s);
        }
    }
    atomic_store(&stop, true);
    join_threads(th, USERS);
    for (unsigned i = 0; i < USERS; i++)
        ASSERT_RESULT(u[i].r, "resource user");
    ck_assert_status(destroy_resource(device, res), STATUS_SUCCESS);
}
END_TEST

/* ---- 8. allocations joining a resource while others of it are destroyed ---------------------- */

struct joiner {
    struct result r;
    D3DKMT_HANDLE res;
    unsigned iterations;
};

static void *joiner_main(void *p)
{
    struct joiner *j = p;

    for (unsigned i = 0; i < j->iterations; i++) {
        KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(ALLOC_SIZE);
        D3DDDI_ALLOCATIONINFO info = { 0 };
        D3DKMT_CREATEALLOCATION ca = { 0 };
        NTSTATUS s;

        info.pPrivateDriverData = &desc;
        info.PrivateDriverDataSize = sizeof(desc);
        ca.hDevice = device;
        ca.hResource = j->res;
        ca.NumAllocations = 1;
        ca.pAllocationInfo = &info;
        if ((s = D3DKMTCreateAllocation(&ca)))
            return report_failure(&j->r, "join", s), NULL;
        if ((s = destroy_list(device, &info.hAllocation, 1, i & 1)))
            return report_failure(&j->r, "destroy one", s), NULL;
    }
    return NULL;
}

START_TEST(join_resource_while_destroying_members)
{
    enum { N = 3 };
    struct joiner j[N];
    pthread_t th[N];
    D3DKMT_HANDLE res, first[2];

    ck_assert_status(create_resource(device, 2, &res, first), STATUS_SUCCESS);
    for (unsigned i = 0; i < N; i++)
        j[i] = (struct joiner){ { NULL, 0 }, res, 2000 };
    start_threads(th, N, joiner_main, j, sizeof(j[0]));
    join_threads(th, N);
    for (unsigned i = 0; i < N; i++)
        ASSERT_RESULT(j[i].r, "joiner");
    /* the resource kept its two first allocations through it all */
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 2);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Resources, 1);
    ck_assert_status(destroy_resource(device, res), STATUS_SUCCESS);
}
END_TEST

/* ---- 9. a destroy while CreateAllocation copies its outputs out --------------------------------- */

/* The first allocation's private data (in/out) lies alone on a read-only
 * page, so the core's copy-back to it faults; the handler holds the creating
 * thread there while another thread destroys the new resource by its
 * predictable handle and makes objects of the same sizes (malloc hands the
 * freed memory to them).  The creating call must still report its own
 * handles and read nothing that was freed. */
static sem_t fault_seen, fault_done;
static char *ro_page;
static size_t ro_size;
static atomic_bool faulted;

static void wait_sem(sem_t *s)
{
    while (sem_wait(s) && errno == EINTR)
        ;
}

static void copy_back_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if ((char *)si->si_addr < ro_page || (char *)si->si_addr >= ro_page + ro_size) {
        signal(sig, SIG_DFL);            /* not ours: crash as usual */
        return;
    }
    atomic_store(&faulted, true);
    sem_post(&fault_seen);
    wait_sem(&fault_done);
}

struct meddler {
    D3DKMT_HANDLE res;
    NTSTATUS destroy, create;
    D3DKMT_HANDLE new_res, new_allocs[2];
};

static void *meddler_main(void *p)
{
    struct meddler *m = p;

    wait_sem(&fault_seen);
    m->destroy = destroy_resource(device, m->res);
    m->create = create_resource(device, 2, &m->new_res, m->new_allocs);
    mprotect(ro_page, ro_size, PROT_READ | PROT_WRITE);
    sem_post(&fault_done);
    return NULL;
}

START_TEST(destroy_while_create_copies_out)
{
    KMT_SOFT_ALLOCATION_DESC *desc0, desc1 = kmt_test_soft_desc(ALLOC_SIZE);
    struct meddler m = { .res = KMT_FIRST_HANDLE + 0x80 };   /* the first handle after the device */
    D3DDDI_ALLOCATIONINFO info[2];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    struct sigaction sa, old;
    pthread_t th;
    NTSTATUS status;

    ck_assert_uint_eq(device, KMT_FIRST_HANDLE + 0x40);
    ro_size = (size_t)sysconf(_SC_PAGESIZE);
    ro_page = mmap(NULL, ro_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(ro_page, MAP_FAILED);
    desc0 = (KMT_SOFT_ALLOCATION_DESC *)ro_page;
    *desc0 = kmt_test_soft_desc(ALLOC_SIZE);
    ck_assert_int_eq(mprotect(ro_page, ro_size, PROT_READ), 0);
    ck_assert_int_eq(sem_init(&fault_seen, 0, 0), 0);
    ck_assert_int_eq(sem_init(&fault_done, 0, 0), 0);
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = copy_back_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGSEGV, &sa, &old), 0);
    ck_assert_int_eq(pthread_create(&th, NULL, meddler_main, &m), 0);

    memset(info, 0, sizeof(info));
    info[0].pPrivateDriverData = desc0;
    info[0].PrivateDriverDataSize = sizeof(*desc0);
    info[1].pPrivateDriverData = &desc1;
    info[1].PrivateDriverDataSize = sizeof(desc1);
    ca.hDevice = device;
    ca.NumAllocations = 2;
    ca.pAllocationInfo = info;
    ca.Flags.CreateResource = 1;
    status = D3DKMTCreateAllocation(&ca);
    if (!atomic_load(&faulted))
        sem_post(&fault_seen);           /* copied out before publishing: meddle afterwards */
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    sigaction(SIGSEGV, &old, NULL);
    munmap(ro_page, ro_size);

    ck_assert_status(status, STATUS_SUCCESS);
    ck_assert_uint_eq(ca.hResource, KMT_FIRST_HANDLE + 0x80);
    ck_assert_uint_eq(info[0].hAllocation, KMT_FIRST_HANDLE + 0xc0);
    ck_assert_uint_eq(info[1].hAllocation, KMT_FIRST_HANDLE + 0x100);
    ck_assert_status(m.destroy, STATUS_SUCCESS);
    ck_assert_status(m.create, STATUS_SUCCESS);
    ck_assert_uint_ne(m.new_res, ca.hResource);
    ck_assert_status(destroy_resource(device, ca.hResource), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy_resource(device, m.new_res), STATUS_SUCCESS);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("race");
    TCase *churn = tcase_create("churn");
    TCase *destroy = tcase_create("destroy_vs_use");
    TCase *duel = tcase_create("duel");
    TCase *misc = tcase_create("misc");

    tcase_add_checked_fixture(churn, setup, teardown);
    tcase_set_timeout(churn, 300);
    tcase_add_loop_test(churn, threads_churn_one_device, 0,
                        (int)(sizeof(churn_threads) / sizeof(churn_threads[0])));
    suite_add_tcase(s, churn);

    tcase_add_checked_fixture(destroy, setup, teardown);
    tcase_set_timeout(destroy, 300);
    tcase_add_test(destroy, destroy_races_lock);
    tcase_add_test(destroy, destroy_device_while_allocating);
    tcase_add_test(destroy, destroy_resource_races_lock);
    tcase_add_test(destroy, join_resource_while_destroying_members);
    tcase_add_test(destroy, destroy_while_create_copies_out);
    suite_add_tcase(s, destroy);

    tcase_add_checked_fixture(duel, setup, teardown);
    tcase_set_timeout(duel, 300);
    tcase_add_test(duel, two_threads_destroy_same_list);
    tcase_add_test(duel, two_threads_destroy_same_resource);
    tcase_add_test(duel, two_threads_destroy_same_device);
    suite_add_tcase(s, duel);

    tcase_add_checked_fixture(misc, setup, teardown);
    tcase_set_timeout(misc, 300);
    tcase_add_test(misc, many_threads_lock_one_allocation);
    tcase_add_test(misc, live_handles_unique_across_threads);
    suite_add_tcase(s, misc);
    return kmt_test_run(s);
}
