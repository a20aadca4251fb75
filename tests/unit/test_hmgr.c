/*
 * The handle table on its own (internal API, hmgr/hmgr.h): handle format,
 * FIFO reuse behind the reserve, generations, typed lookups, references,
 * a million live handles and the table's limit, indices above Wine's, and
 * the +hmgr trace channel.
 */
#include <pthread.h>
#include <unistd.h>

#include "test_util.h"
#include "base/kmt_debug.h"
#include "base/kmt_rcu.h"
#include "hmgr/hmgr.h"

#define FIRST_HANDLE (0x40000000u | HMGR_INDEX_BASE << 6)   /* 0x60000000 */
#define UNIQUE_MASK 0xc0000000u

static unsigned handle_index(D3DKMT_HANDLE h)
{
    return hmgr_slot_of(h);
}

/* A test object that counts its releases. */
struct tobj {
    struct kmt_object obj;
    int *released;
};

static void tobj_release(struct kmt_object *obj)
{
    struct tobj *t = (struct tobj *)obj;

    (*t->released)++;
}

static void tobj_init(struct tobj *t, enum hmgr_type type, int *released)
{
    kmt_object_init(&t->obj, type, tobj_release);
    t->released = released;
}

static struct hmgr_table *table_new(unsigned instance)
{
    struct hmgr_table *t = malloc(sizeof(*t));

    ck_assert_ptr_nonnull(t);
    hmgr_init(t, instance);
    return t;
}

static void table_free(struct hmgr_table *t)
{
    hmgr_destroy(t);
    free(t);
}

/* Allocates and publishes one object. */
static D3DKMT_HANDLE add(struct hmgr_table *t, struct kmt_object *obj)
{
    D3DKMT_HANDLE h = hmgr_alloc(t);

    /* no ck_assert here: each one is a write to Check's pipe, and the
     * scale tests call this a million times */
    if (!h)
        ck_abort_msg("hmgr_alloc failed");
    hmgr_publish(t, h, obj);
    return h;
}

static void nothing_to_release(struct kmt_object *obj)
{
    (void)obj;
}

/* Frees a reserved handle the way a destroy does: published, then removed,
 * so its slot goes to the tail of the free list at its next generation. */
static void discard(struct hmgr_table *t, D3DKMT_HANDLE h)
{
    static struct kmt_object dummy = { .type = HMGR_TYPE_ALLOCATION, .release = nothing_to_release };

    hmgr_publish(t, h, &dummy);
    if (hmgr_remove(t, h, HMGR_TYPE_ALLOCATION) != &dummy)
        ck_abort_msg("handle %#x not removed", h);
}

/* Takes handles (discarding each at once, so they queue up behind the
 * slot) until `index` comes back; returns that handle, reserved, and counts
 * the other handles issued before it. */
static D3DKMT_HANDLE alloc_until_index(struct hmgr_table *t, unsigned index, unsigned *others)
{
    *others = 0;
    for (;;) {
        D3DKMT_HANDLE h = hmgr_alloc(t);

        if (!h)
            ck_abort_msg("hmgr_alloc failed");
        if (handle_index(h) == index)
            return h;
        discard(t, h);
        if (++*others > 1u << 20)
            ck_abort_msg("slot %u never came back", index);
    }
}

/* ---- format ----------------------------------------------------------------- */

START_TEST(first_handle_is_0x60000000)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o;
    D3DKMT_HANDLE h;

    tobj_init(&o, HMGR_TYPE_DEVICE, &released);
    h = add(t, &o.obj);
    ck_assert_uint_eq(h, FIRST_HANDLE);
    ck_assert_ptr_eq(hmgr_lookup(t, h, HMGR_TYPE_DEVICE), &o.obj);
    kmt_object_put(&o.obj);
    ck_assert_ptr_eq(hmgr_remove(t, h, HMGR_TYPE_DEVICE), &o.obj);
    kmt_object_put(&o.obj);
    ck_assert_int_eq(released, 1);
    table_free(t);
}
END_TEST

START_TEST(fresh_handles_step_by_0x40)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    enum { N = 5000 };   /* crosses several table growths */

    for (unsigned i = 0; i < N; i++) {
        D3DKMT_HANDLE h = hmgr_alloc(t);
        ck_assert_uint_eq(h, FIRST_HANDLE | i << 6);
        ck_assert_local_handle(h);
    }
    ck_assert_uint_eq(hmgr_live_count(t), N);
    table_free(t);
}
END_TEST

START_TEST(global_table_handles_have_instance_2)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_GLOBAL);
    int released = 0;
    struct tobj o;
    D3DKMT_HANDLE h;

    tobj_init(&o, HMGR_TYPE_RESOURCE, &released);
    h = add(t, &o.obj);
    ck_assert_uint_eq(h, FIRST_HANDLE | 2);
    ck_assert(hmgr_is_global_handle(h));
    ck_assert(!hmgr_is_global_handle(FIRST_HANDLE));
    ck_assert_uint_eq(hmgr_alloc(t), FIRST_HANDLE | 1u << 6 | 2);
    /* the local form of the same slot is not ours */
    ck_assert_ptr_null(hmgr_lookup(t, FIRST_HANDLE, HMGR_TYPE_ANY));
    ck_assert_ptr_eq(hmgr_lookup(t, h, HMGR_TYPE_RESOURCE), &o.obj);
    kmt_object_put(&o.obj);
    ck_assert_ptr_eq(hmgr_remove(t, h, HMGR_TYPE_RESOURCE), &o.obj);
    table_free(t);
}
END_TEST

START_TEST(entry_is_16_bytes)
{
    /* state word + free link + object pointer: 16 bytes a slot (12 in a
     * 32-bit build), so a million live handles cost 16 MB of table. */
    ck_assert_uint_eq(hmgr_entry_size(), 8 + sizeof(void *));
}
END_TEST

/* ---- reuse ------------------------------------------------------------------------ */

START_TEST(open_close_open_gives_next_value)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj a, b;
    D3DKMT_HANDLE h1, h2;

    tobj_init(&a, HMGR_TYPE_ADAPTER, &released);
    tobj_init(&b, HMGR_TYPE_ADAPTER, &released);
    h1 = add(t, &a.obj);
    ck_assert_ptr_eq(hmgr_remove(t, h1, HMGR_TYPE_ADAPTER), &a.obj);
    h2 = add(t, &b.obj);
    ck_assert_uint_eq(h2, h1 + 0x40);
    ck_assert_ptr_null(hmgr_lookup(t, h1, HMGR_TYPE_ANY));
    ck_assert_uint_eq(hmgr_live_count(t), 1);
    hmgr_remove(t, h2, HMGR_TYPE_ADAPTER);
    table_free(t);
}
END_TEST

START_TEST(reuse_waits_for_reserve_tightest_case)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    D3DKMT_HANDLE first = hmgr_alloc(t), again;
    unsigned others;

    /* The first allocation grows the table to one chunk; take slots until
     * exactly HMGR_RESERVE are free, the least the table ever keeps. */
    for (unsigned i = 1; i < HMGR_CHUNK_SIZE - HMGR_RESERVE; i++)
        ck_assert_uint_eq(hmgr_alloc(t), FIRST_HANDLE | i << 6);
    discard(t, first);
    again = alloc_until_index(t, handle_index(first), &others);
    ck_assert_uint_eq(others, HMGR_RESERVE);
    ck_assert_uint_eq(again, first + 0x40000000u);   /* generation 2 */
    table_free(t);
}
END_TEST

START_TEST(reuse_is_fifo_after_many_frees)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    D3DKMT_HANDLE h[300];
    unsigned others;

    for (unsigned i = 0; i < 300; i++)
        h[i] = hmgr_alloc(t);
    /* free in a scrambled order: slots must come back in that order */
    for (unsigned i = 0; i < 300; i++)
        discard(t, h[(i * 7) % 300]);
    ck_assert_uint_eq(hmgr_live_count(t), 0);
    alloc_until_index(t, handle_index(h[0]), &others);
    /* the 724 never used slots of the first chunk queue before the freed ones */
    ck_assert_uint_eq(others, HMGR_CHUNK_SIZE - 300);
    for (unsigned i = 1; i < 300; i++) {
        D3DKMT_HANDLE n = hmgr_alloc(t);
        ck_assert_uint_eq(handle_index(n), handle_index(h[(i * 7) % 300]));
        ck_assert_uint_eq(n & UNIQUE_MASK, 0x80000000u);
    }
    table_free(t);
}
END_TEST

START_TEST(reuse_never_before_reserve_random_pattern)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    enum { LIVE = 64, ROUNDS = 20000 };
    D3DKMT_HANDLE live[LIVE];
    /* allocations issued so far, when each slot was last freed */
    unsigned *freed_at = calloc(HMGR_CHUNK_SIZE, sizeof(*freed_at));
    unsigned issued = 0, seed = 12345, reused = 0;

    ck_assert_ptr_nonnull(freed_at);
    for (unsigned i = 0; i < LIVE; i++, issued++)
        live[i] = hmgr_alloc(t);
    for (unsigned r = 0; r < ROUNDS; r++, issued++) {
        unsigned k, idx;

        seed = seed * 1103515245u + 12345u;
        k = (seed >> 16) % LIVE;
        freed_at[handle_index(live[k])] = issued + 1;   /* +1: 0 means never freed */
        discard(t, live[k]);
        live[k] = hmgr_alloc(t);
        idx = handle_index(live[k]);
        /* 64 live handles never make the table grow past its first chunk */
        if (idx >= HMGR_CHUNK_SIZE)
            ck_abort_msg("index %u past the first chunk", idx);
        /* a freed slot comes back only after HMGR_RESERVE other handles */
        if (freed_at[idx] && issued + 1 - freed_at[idx] < HMGR_RESERVE)
            ck_abort_msg("slot %u reused after %u allocations", idx, issued + 1 - freed_at[idx]);
        reused += freed_at[idx] != 0;
    }
    ck_assert_uint_gt(reused, ROUNDS / 2);    /* the check above did run */
    free(freed_at);
    table_free(t);
}
END_TEST

START_TEST(stale_handle_misses_two_reuses)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o1, o2, o3;
    D3DKMT_HANDLE h1, h2, h3, h4;
    unsigned others;

    tobj_init(&o1, HMGR_TYPE_ALLOCATION, &released);
    tobj_init(&o2, HMGR_TYPE_ALLOCATION, &released);
    tobj_init(&o3, HMGR_TYPE_ALLOCATION, &released);
    h1 = add(t, &o1.obj);
    hmgr_remove(t, h1, HMGR_TYPE_ALLOCATION);

    h2 = alloc_until_index(t, handle_index(h1), &others);
    hmgr_publish(t, h2, &o2.obj);
    ck_assert_uint_eq(h2 & ~UNIQUE_MASK, h1 & ~UNIQUE_MASK);
    ck_assert_uint_ne(h2 & UNIQUE_MASK, h1 & UNIQUE_MASK);
    ck_assert_ptr_null(hmgr_lookup(t, h1, HMGR_TYPE_ANY));
    ck_assert_ptr_null(hmgr_remove(t, h1, HMGR_TYPE_ALLOCATION));
    ck_assert_ptr_eq(hmgr_remove(t, h2, HMGR_TYPE_ALLOCATION), &o2.obj);

    h3 = alloc_until_index(t, handle_index(h1), &others);
    hmgr_publish(t, h3, &o3.obj);
    ck_assert_uint_ne(h3 & UNIQUE_MASK, h1 & UNIQUE_MASK);
    ck_assert_uint_ne(h3 & UNIQUE_MASK, h2 & UNIQUE_MASK);
    ck_assert_ptr_null(hmgr_lookup(t, h1, HMGR_TYPE_ANY));
    ck_assert_ptr_null(hmgr_lookup(t, h2, HMGR_TYPE_ANY));
    ck_assert_ptr_eq(hmgr_lookup(t, h3, HMGR_TYPE_ANY), &o3.obj);
    kmt_object_put(&o3.obj);
    hmgr_remove(t, h3, HMGR_TYPE_ALLOCATION);

    /* Two bits of generation cycle 1, 2, 3: the third reuse gives the first
     * value again, as on Windows. */
    h4 = alloc_until_index(t, handle_index(h1), &others);
    ck_assert_uint_eq(h4, h1);
    ck_assert_uint_eq(h1 >> 30, 1);
    ck_assert_uint_eq(h2 >> 30, 2);
    ck_assert_uint_eq(h3 >> 30, 3);
    ck_assert_int_eq(released, 0);   /* the table never releases on its own */
    table_free(t);
}
END_TEST

/* ---- lookups ---------------------------------------------------------------------------- */

START_TEST(lookup_checks_type)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o;
    D3DKMT_HANDLE h;

    tobj_init(&o, HMGR_TYPE_DEVICE, &released);
    h = add(t, &o.obj);
    ck_assert_ptr_null(hmgr_lookup(t, h, HMGR_TYPE_ALLOCATION));
    ck_assert_ptr_null(hmgr_lookup(t, h, HMGR_TYPE_ADAPTER));
    ck_assert_ptr_null(hmgr_lookup(t, h, HMGR_TYPE_RESOURCE));
    ck_assert_uint_eq(atomic_load(&o.obj.refcount), 1);   /* misses take no reference */
    ck_assert_ptr_eq(hmgr_lookup(t, h, HMGR_TYPE_DEVICE), &o.obj);
    ck_assert_ptr_eq(hmgr_lookup(t, h, HMGR_TYPE_ANY), &o.obj);
    ck_assert_uint_eq(atomic_load(&o.obj.refcount), 3);
    kmt_object_put(&o.obj);
    kmt_object_put(&o.obj);
    /* a remove of the wrong type leaves the handle alone */
    ck_assert_ptr_null(hmgr_remove(t, h, HMGR_TYPE_ALLOCATION));
    ck_assert_ptr_eq(hmgr_lookup(t, h, HMGR_TYPE_DEVICE), &o.obj);
    kmt_object_put(&o.obj);
    ck_assert_ptr_eq(hmgr_remove(t, h, HMGR_TYPE_DEVICE), &o.obj);
    ck_assert_int_eq(released, 0);
    table_free(t);
}
END_TEST

START_TEST(lookup_rejects_malformed_handles)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o;
    D3DKMT_HANDLE h;
    static const D3DKMT_HANDLE bad[] = {
        0, 0xffffffffu, 0xdeadbeefu, 0x00000040u /* generation 0 */,
        FIRST_HANDLE | 1 /* instance 1 */, FIRST_HANDLE | 2 /* global form */,
        FIRST_HANDLE | 0x3f, 0xa0000000u /* slot 0, wrong generation */,
        0xe0000000u, FIRST_HANDLE | 5000u << 6 /* beyond the table */,
        0x40000000u, 0x40000040u, 0x5fffffc0u /* indices below the base: Wine's */,
        FIRST_HANDLE | HMGR_MAX_ENTRIES << 6,
    };

    tobj_init(&o, HMGR_TYPE_DEVICE, &released);
    h = add(t, &o.obj);
    ck_assert_uint_eq(h, FIRST_HANDLE);
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(!hmgr_lookup(t, bad[i], HMGR_TYPE_ANY), "0x%08x found", bad[i]);
        ck_assert_msg(!hmgr_remove(t, bad[i], HMGR_TYPE_ANY), "0x%08x removed", bad[i]);
        hmgr_cancel(t, bad[i]);      /* must be a no-op */
    }
    ck_assert_uint_eq(hmgr_live_count(t), 1);
    ck_assert_ptr_eq(hmgr_remove(t, h, HMGR_TYPE_ANY), &o.obj);
    table_free(t);
}
END_TEST

START_TEST(lookup_of_free_and_reserved_slots)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    D3DKMT_HANDLE reserved = hmgr_alloc(t);

    /* reserved: allocated but invisible until published */
    ck_assert_ptr_null(hmgr_lookup(t, reserved, HMGR_TYPE_ANY));
    ck_assert_ptr_null(hmgr_remove(t, reserved, HMGR_TYPE_ANY));
    /* never allocated, but inside the table */
    ck_assert_ptr_null(hmgr_lookup(t, reserved + 0x40, HMGR_TYPE_ANY));
    ck_assert_uint_eq(hmgr_live_count(t), 1);
    table_free(t);
}
END_TEST

START_TEST(empty_table_lookups)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);

    ck_assert_ptr_null(hmgr_lookup(t, FIRST_HANDLE, HMGR_TYPE_ANY));
    ck_assert_ptr_null(hmgr_remove(t, FIRST_HANDLE, HMGR_TYPE_ANY));
    hmgr_cancel(t, FIRST_HANDLE);
    ck_assert_uint_eq(hmgr_live_count(t), 0);
    table_free(t);
}
END_TEST

START_TEST(remove_twice)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o;
    D3DKMT_HANDLE h;

    tobj_init(&o, HMGR_TYPE_RESOURCE, &released);
    h = add(t, &o.obj);
    ck_assert_uint_eq(hmgr_live_count(t), 1);
    ck_assert_ptr_eq(hmgr_remove(t, h, HMGR_TYPE_RESOURCE), &o.obj);
    ck_assert_ptr_null(hmgr_remove(t, h, HMGR_TYPE_RESOURCE));
    ck_assert_ptr_null(hmgr_remove(t, h, HMGR_TYPE_ANY));
    ck_assert_uint_eq(hmgr_live_count(t), 0);
    kmt_object_put(&o.obj);
    ck_assert_int_eq(released, 1);
    table_free(t);
}
END_TEST

START_TEST(cancel_reserved_slot)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o;
    D3DKMT_HANDLE h = hmgr_alloc(t), next;

    tobj_init(&o, HMGR_TYPE_DEVICE, &released);
    ck_assert_uint_eq(hmgr_live_count(t), 1);
    hmgr_cancel(t, h);
    ck_assert_uint_eq(hmgr_live_count(t), 0);
    hmgr_cancel(t, h);                     /* twice: ignored, no double free */
    ck_assert_uint_eq(hmgr_live_count(t), 0);
    hmgr_publish(t, h, &o.obj);            /* publishing a cancelled slot: ignored */
    ck_assert_ptr_null(hmgr_lookup(t, h, HMGR_TYPE_ANY));
    next = hmgr_alloc(t);
    ck_assert_uint_eq(next, h);            /* nothing later was out: the value comes back */
    ck_assert_uint_eq(hmgr_live_count(t), 1);
    ck_assert_int_eq(released, 0);
    table_free(t);
}
END_TEST

/* ---- refused creates: cancel takes the value back ------------------------------ */

START_TEST(cancels_in_reverse_take_every_value_back)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    D3DKMT_HANDLE a = hmgr_alloc(t), b = hmgr_alloc(t), c = hmgr_alloc(t);

    /* a create that reserved three handles and was refused */
    hmgr_cancel(t, c);
    hmgr_cancel(t, b);
    hmgr_cancel(t, a);
    ck_assert_uint_eq(hmgr_live_count(t), 0);
    ck_assert_uint_eq(hmgr_alloc(t), a);
    ck_assert_uint_eq(hmgr_alloc(t), b);
    ck_assert_uint_eq(hmgr_alloc(t), c);
    ck_assert_uint_eq(hmgr_alloc(t), c + 0x40);
    table_free(t);
}
END_TEST

START_TEST(refused_and_successful_creates_step_by_0x40)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    enum { N = 5000 };   /* crosses several table growths */
    D3DKMT_HANDLE prev = 0;
    unsigned seed = 99;

    for (unsigned i = 0; i < N; i++) {
        D3DKMT_HANDLE h = hmgr_alloc(t), extra[3];
        unsigned refused;

        if (prev && h != prev + 0x40)
            ck_abort_msg("create %u got %#x after %#x", i, h, prev);
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % 3) {
            /* refused: up to three more reserved, all given back in reverse */
            refused = (seed >> 20) % 4;
            for (unsigned k = 0; k < refused; k++)
                extra[k] = hmgr_alloc(t);
            while (refused--)
                hmgr_cancel(t, extra[refused]);
            hmgr_cancel(t, h);
            continue;
        }
        prev = h;      /* a successful create keeps its handle */
    }
    ck_assert_uint_eq(handle_index(prev) + 1, hmgr_live_count(t));
    table_free(t);
}
END_TEST

START_TEST(cancel_behind_a_later_value_keeps_its_generation)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    D3DKMT_HANDLE a = hmgr_alloc(t), b = hmgr_alloc(t), again;
    unsigned others;

    /* another thread's b is out: a cannot come back next without the
     * sequence going down, so it queues at the tail, at generation 1 */
    hmgr_cancel(t, a);
    ck_assert_uint_eq(hmgr_alloc(t), b + 0x40);
    ck_assert_ptr_null(hmgr_lookup(t, a, HMGR_TYPE_ANY));
    again = alloc_until_index(t, handle_index(a), &others);
    ck_assert_uint_eq(again, a);
    ck_assert_uint_ge(others, HMGR_RESERVE);
    table_free(t);
}
END_TEST

START_TEST(cancel_of_published_slot_is_ignored)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o, other;
    D3DKMT_HANDLE h;

    tobj_init(&o, HMGR_TYPE_DEVICE, &released);
    tobj_init(&other, HMGR_TYPE_ALLOCATION, &released);
    h = add(t, &o.obj);
    hmgr_cancel(t, h);
    hmgr_publish(t, h, &other.obj);        /* re-publishing a live slot: ignored */
    ck_assert_ptr_eq(hmgr_lookup(t, h, HMGR_TYPE_DEVICE), &o.obj);
    kmt_object_put(&o.obj);
    ck_assert_uint_eq(hmgr_live_count(t), 1);
    ck_assert_ptr_eq(hmgr_remove(t, h, HMGR_TYPE_DEVICE), &o.obj);
    table_free(t);
}
END_TEST

START_TEST(references_outlive_remove)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o;
    struct kmt_object *r1, *r2, *owned;
    D3DKMT_HANDLE h;

    tobj_init(&o, HMGR_TYPE_ALLOCATION, &released);
    h = add(t, &o.obj);
    r1 = hmgr_lookup(t, h, HMGR_TYPE_ALLOCATION);
    r2 = hmgr_lookup(t, h, HMGR_TYPE_ALLOCATION);
    ck_assert_ptr_eq(r1, &o.obj);
    ck_assert_ptr_eq(r2, &o.obj);
    owned = hmgr_remove(t, h, HMGR_TYPE_ALLOCATION);
    ck_assert_ptr_eq(owned, &o.obj);
    ck_assert_ptr_null(hmgr_lookup(t, h, HMGR_TYPE_ALLOCATION));
    kmt_object_put(owned);                 /* the table's reference */
    ck_assert_int_eq(released, 0);
    kmt_object_put(r1);
    ck_assert_int_eq(released, 0);
    kmt_object_put(r2);                    /* the last user releases */
    ck_assert_int_eq(released, 1);
    table_free(t);
}
END_TEST

/* ---- scale ------------------------------------------------------------------------------- */

START_TEST(million_live_handles)
{
    enum { N = 1000000 };
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    struct tobj *objs = calloc(N, sizeof(*objs));
    D3DKMT_HANDLE *h = calloc(N, sizeof(*h));
    int released = 0;

    ck_assert_ptr_nonnull(objs);
    ck_assert_ptr_nonnull(h);
    for (unsigned i = 0; i < N; i++) {
        tobj_init(&objs[i], (i & 1) ? HMGR_TYPE_ALLOCATION : HMGR_TYPE_RESOURCE, &released);
        h[i] = add(t, &objs[i].obj);
        if (h[i] != (FIRST_HANDLE | i << 6))
            ck_abort_msg("handle %u is 0x%08x", i, h[i]);
    }
    ck_assert_uint_eq(hmgr_live_count(t), N);
    for (unsigned i = 0; i < N; i++) {
        struct kmt_object *o = hmgr_lookup(t, h[i], (i & 1) ? HMGR_TYPE_ALLOCATION : HMGR_TYPE_RESOURCE);
        if (o != &objs[i].obj)
            ck_abort_msg("lookup %u (0x%08x) gave %p", i, h[i], (void *)o);
        kmt_object_put(o);
    }
    for (unsigned i = 0; i < N; i++) {
        struct kmt_object *o = hmgr_remove(t, h[i], HMGR_TYPE_ANY);
        if (o != &objs[i].obj)
            ck_abort_msg("remove %u gave %p", i, (void *)o);
        kmt_object_put(o);
    }
    ck_assert_uint_eq(hmgr_live_count(t), 0);
    ck_assert_int_eq(released, N);
    ck_assert_ptr_null(hmgr_lookup(t, h[N / 2], HMGR_TYPE_ANY));
    /* 16 bytes a slot: the whole million costs 16 MB of table */
    ck_assert_uint_le((size_t)N * hmgr_entry_size(), 16u * 1000 * 1000);
    free(objs);
    free(h);
    table_free(t);
}
END_TEST

START_TEST(table_limit_is_2_pow_23_minus_1)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    D3DKMT_HANDLE h, last = 0;
    unsigned n = 0;

    /* Reserve every slot: 2^23 - 1 of them, indices 2^23 to 2^24 - 2. */
    while ((h = hmgr_alloc(t))) {
        last = h;
        n++;
    }
    ck_assert_uint_eq(n, HMGR_MAX_ENTRIES);
    ck_assert_uint_eq(hmgr_live_count(t), HMGR_MAX_ENTRIES);
    ck_assert_uint_eq(last, FIRST_HANDLE | (HMGR_MAX_ENTRIES - 1) << 6);
    ck_assert_uint_eq(hmgr_alloc(t), 0);     /* still full */
    /* Full, the reserve cannot be kept: a freed slot is reused at once,
     * with the next generation... */
    discard(t, FIRST_HANDLE | 77u << 6);
    ck_assert_uint_eq(hmgr_alloc(t), ((FIRST_HANDLE & ~UNIQUE_MASK) | 0x80000000u) | 77u << 6);
    ck_assert_uint_eq(hmgr_alloc(t), 0);
    /* ...and a cancelled one, never published, at its own. */
    hmgr_cancel(t, FIRST_HANDLE | 78u << 6);
    ck_assert_uint_eq(hmgr_alloc(t), FIRST_HANDLE | 78u << 6);
    hmgr_cancel(t, last);
    ck_assert_uint_eq(hmgr_alloc(t), last);
    ck_assert_uint_eq(hmgr_alloc(t), 0);
    table_free(t);
}
END_TEST

/* ---- concurrency ---------------------------------------------------------------------- */

struct churn_arg {
    struct hmgr_table *t;
    int released;
    unsigned iterations;
};

static void *churn(void *p)
{
    struct churn_arg *a = p;
    struct tobj *o = malloc(sizeof(*o));
    int released = 0;

    for (unsigned i = 0; i < a->iterations; i++) {
        D3DKMT_HANDLE h;
        struct kmt_object *got;

        tobj_init(o, HMGR_TYPE_ALLOCATION, &released);
        h = hmgr_alloc(a->t);
        if (!h)
            return (void *)"alloc failed";
        hmgr_publish(a->t, h, &o->obj);
        got = hmgr_lookup(a->t, h, HMGR_TYPE_ALLOCATION);
        if (got != &o->obj)
            return (void *)"lookup of own handle failed";
        kmt_object_put(got);
        if (hmgr_remove(a->t, h, HMGR_TYPE_ALLOCATION) != &o->obj)
            return (void *)"remove of own handle failed";
        kmt_object_put(&o->obj);
    }
    a->released = released;
    free(o);
    return NULL;
}

START_TEST(concurrent_churn_keeps_handles_private)
{
    enum { THREADS = 4, ITER = 20000 };
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    struct churn_arg args[THREADS];
    pthread_t th[THREADS];

    for (unsigned i = 0; i < THREADS; i++) {
        args[i] = (struct churn_arg){ t, 0, ITER };
        ck_assert_int_eq(pthread_create(&th[i], NULL, churn, &args[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++) {
        void *err;
        pthread_join(th[i], &err);
        ck_assert_msg(!err, "thread %u: %s", i, (const char *)err);
        ck_assert_int_eq(args[i].released, ITER);
    }
    ck_assert_uint_eq(hmgr_live_count(t), 0);
    table_free(t);
}
END_TEST

struct remove_race {
    struct hmgr_table *t;
    D3DKMT_HANDLE h;
    pthread_barrier_t *barrier;
    struct kmt_object *got;
};

static void *race_remove(void *p)
{
    struct remove_race *r = p;

    pthread_barrier_wait(r->barrier);
    r->got = hmgr_remove(r->t, r->h, HMGR_TYPE_ANY);
    return NULL;
}

/* Several threads reserving, cancelling and publishing at once: a value is
 * never out twice, whatever the cancels took back. */
struct cancel_arg {
    struct hmgr_table *t;
    atomic_uchar *out;              /* per slot: its value is out */
    unsigned seed;
};

static void *cancel_churn(void *p)
{
    struct cancel_arg *a = p;
    struct tobj o;
    int released = 0;

    for (unsigned i = 0; i < 20000; i++) {
        D3DKMT_HANDLE h[3];
        unsigned n;

        a->seed = a->seed * 1103515245u + 12345u;
        n = 1 + (a->seed >> 16) % 3;
        for (unsigned k = 0; k < n; k++) {
            if (!(h[k] = hmgr_alloc(a->t)))
                return (void *)"alloc failed";
            if (atomic_exchange(&a->out[handle_index(h[k])], 1))
                return (void *)"a value handed out twice";
        }
        if ((a->seed >> 24) & 1) {           /* published, then destroyed */
            tobj_init(&o, HMGR_TYPE_DEVICE, &released);
            hmgr_publish(a->t, h[0], &o.obj);
            atomic_store(&a->out[handle_index(h[0])], 0);
            if (hmgr_remove(a->t, h[0], HMGR_TYPE_DEVICE) != &o.obj)
                return (void *)"remove of own handle failed";
            h[0] = 0;
        }
        while (n--) {
            if (!h[n])
                continue;
            atomic_store(&a->out[handle_index(h[n])], 0);
            hmgr_cancel(a->t, h[n]);
        }
    }
    return NULL;
}

START_TEST(concurrent_cancels_never_hand_a_value_out_twice)
{
    enum { THREADS = 4 };
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    atomic_uchar *out = calloc(1u << 20, sizeof(*out));
    struct cancel_arg args[THREADS];
    pthread_t th[THREADS];

    ck_assert_ptr_nonnull(out);
    for (unsigned i = 0; i < THREADS; i++) {
        args[i] = (struct cancel_arg){ t, out, 7 * i + 1 };
        ck_assert_int_eq(pthread_create(&th[i], NULL, cancel_churn, &args[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++) {
        void *err;
        pthread_join(th[i], &err);
        ck_assert_msg(!err, "thread %u: %s", i, (const char *)err);
    }
    ck_assert_uint_eq(hmgr_live_count(t), 0);
    free(out);
    table_free(t);
}
END_TEST

/* A reader of the lock-free lookup (the keyed mutex's inline path, which
 * does not look whether the process is up) while the table is destroyed
 * and set up again, as KmtProcessShutdown and the next start do: it finds
 * the object or nothing, and (under ThreadSanitizer) the restart writes
 * nothing it reads with a plain store. */
struct restart_reader {
    struct hmgr_table *t;
    struct kmt_object *obj;
    atomic_bool stop;
    unsigned found, wrong;
};

static void *restart_reader_thread(void *arg)
{
    struct restart_reader *r = arg;

    while (!atomic_load(&r->stop)) {
        struct kmt_rcu_reader *rcu = kmt_rcu_read_lock();
        struct kmt_object *obj = hmgr_find_rcu(r->t, HMGR_INSTANCE_LOCAL, FIRST_HANDLE, HMGR_TYPE_KEYEDMUTEX);

        if (obj == r->obj)
            r->found++;
        else if (obj)
            r->wrong++;
        kmt_rcu_read_unlock(rcu);
    }
    return NULL;
}

START_TEST(lock_free_lookup_across_a_table_restart)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    struct restart_reader r = { .t = t };
    int released = 0;
    struct tobj o;
    pthread_t thread;

    kmt_rcu_init();
    tobj_init(&o, HMGR_TYPE_KEYEDMUTEX, &released);
    r.obj = &o.obj;
    ck_assert_uint_eq(add(t, &o.obj), FIRST_HANDLE);
    ck_assert_int_eq(pthread_create(&thread, NULL, restart_reader_thread, &r), 0);
    for (unsigned i = 0; i < 2000; i++) {
        ck_assert_ptr_eq(hmgr_remove(t, FIRST_HANDLE, HMGR_TYPE_KEYEDMUTEX), &o.obj);
        hmgr_destroy(t);
        hmgr_init(t, HMGR_INSTANCE_LOCAL);
        ck_assert_uint_eq(add(t, &o.obj), FIRST_HANDLE);
    }
    atomic_store(&r.stop, true);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_uint_eq(r.wrong, 0);
    ck_assert_ptr_eq(hmgr_remove(t, FIRST_HANDLE, HMGR_TYPE_KEYEDMUTEX), &o.obj);
    table_free(t);
}
END_TEST

START_TEST(racing_removes_exactly_one_wins)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    pthread_barrier_t barrier;
    int released = 0;

    pthread_barrier_init(&barrier, NULL, 2);
    for (unsigned round = 0; round < 2000; round++) {
        struct tobj o;
        struct remove_race r[2];
        pthread_t th[2];

        tobj_init(&o, HMGR_TYPE_DEVICE, &released);
        r[0] = (struct remove_race){ t, add(t, &o.obj), &barrier, NULL };
        r[1] = r[0];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, race_remove, &r[i]);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        ck_assert_msg(!r[0].got != !r[1].got, "round %u: %p %p", round, (void *)r[0].got,
                      (void *)r[1].got);
        kmt_object_put(&o.obj);
    }
    ck_assert_int_eq(released, 2000);
    ck_assert_uint_eq(hmgr_live_count(t), 0);
    pthread_barrier_destroy(&barrier);
    table_free(t);
}
END_TEST

/* ---- the +hmgr trace channel ------------------------------------------------------------ */

static const char *captured;

/* Sets the debug variables (NULL unsets one), has the channels re-read
 * them, and captures stderr until capture_end(). */
static void capture_begin(const char *winedebug, const char *kmtshim_debug)
{
    if (winedebug)
        setenv("WINEDEBUG", winedebug, 1);
    else
        unsetenv("WINEDEBUG");
    if (kmtshim_debug)
        setenv("KMTSHIM_DEBUG", kmtshim_debug, 1);
    else
        unsetenv("KMTSHIM_DEBUG");
    kmt_debug_reset();
    kmt_test_capture_begin();
}

/* Puts stderr and the channels' defaults back; the text is in `captured`. */
static void capture_end(void)
{
    captured = kmt_test_capture_end();
    unsetenv("WINEDEBUG");
    unsetenv("KMTSHIM_DEBUG");
    kmt_debug_reset();
}

/* Whether a captured line contains `what` about handle h. */
static bool traced(D3DKMT_HANDLE h, const char *what)
{
    char hs[16];

    snprintf(hs, sizeof(hs), "0x%08x", h);
    return kmt_test_count_lines(captured, hs, what) > 0;
}

START_TEST(trace_names_a_refused_stale_handle)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o;
    D3DKMT_HANDLE h;

    tobj_init(&o, HMGR_TYPE_ALLOCATION, &released);
    capture_begin("+hmgr", NULL);
    h = add(t, &o.obj);
    ck_assert_ptr_eq(hmgr_remove(t, h, HMGR_TYPE_ALLOCATION), &o.obj);
    ck_assert_ptr_null(hmgr_lookup(t, h, HMGR_TYPE_ALLOCATION));
    capture_end();
    ck_assert_msg(traced(h, "trace:hmgr:hmgr_publish local handle"), "no issue trace in:\n%s", captured);
    ck_assert_msg(traced(h, "issued: allocation"), "no issue trace in:\n%s", captured);
    ck_assert_msg(traced(h, "freed: allocation"), "no free trace in:\n%s", captured);
    ck_assert_msg(traced(h, "trace:hmgr:hmgr_lookup local handle"), "no lookup trace in:\n%s", captured);
    ck_assert_msg(traced(h, "as allocation refused: stale: slot 0 is at generation 2, the handle's is 1"),
                  "no trace of the stale lookup in:\n%s", captured);
    table_free(t);
}
END_TEST

START_TEST(trace_names_wrong_type_and_garbage)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o;
    D3DKMT_HANDLE h;

    tobj_init(&o, HMGR_TYPE_DEVICE, &released);
    h = add(t, &o.obj);
    /* KMTSHIM_DEBUG, in Wine's syntax too */
    capture_begin(NULL, "trace+hmgr");
    ck_assert_ptr_null(hmgr_lookup(t, h, HMGR_TYPE_ALLOCATION));
    ck_assert_ptr_null(hmgr_lookup(t, 0x12345679, HMGR_TYPE_ALLOCATION));
    ck_assert_ptr_null(hmgr_lookup(t, 0, HMGR_TYPE_DEVICE));
    ck_assert_ptr_null(hmgr_remove(t, h + 0x40000000u, HMGR_TYPE_DEVICE));
    capture_end();
    ck_assert_msg(traced(h, "as allocation refused: wrong type: it is a device"), "no wrong-type trace in:\n%s",
                  captured);
    ck_assert_msg(traced(0x12345679, "refused: garbage"), "no garbage trace in:\n%s", captured);
    ck_assert_msg(traced(0, "refused: null handle"), "no null-handle trace in:\n%s", captured);
    ck_assert_msg(traced(h + 0x40000000u, "trace:hmgr:hmgr_remove"), "no remove trace in:\n%s", captured);
    ck_assert_ptr_eq(hmgr_remove(t, h, HMGR_TYPE_DEVICE), &o.obj);
    table_free(t);
}
END_TEST

START_TEST(no_trace_by_default)
{
    struct hmgr_table *t = table_new(HMGR_INSTANCE_LOCAL);
    int released = 0;
    struct tobj o;
    D3DKMT_HANDLE h;

    tobj_init(&o, HMGR_TYPE_ALLOCATION, &released);
    capture_begin(NULL, NULL);
    h = add(t, &o.obj);
    ck_assert_ptr_eq(hmgr_remove(t, h, HMGR_TYPE_ALLOCATION), &o.obj);
    ck_assert_ptr_null(hmgr_lookup(t, h, HMGR_TYPE_ALLOCATION));
    capture_end();
    ck_assert_str_eq(captured, "");
    table_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hmgr");
    TCase *format = tcase_create("format");
    TCase *reuse = tcase_create("reuse");
    TCase *lookup = tcase_create("lookup");
    TCase *scale = tcase_create("scale");
    TCase *threads = tcase_create("threads");
    TCase *trace = tcase_create("trace");

    tcase_add_test(format, first_handle_is_0x60000000);
    tcase_add_test(format, fresh_handles_step_by_0x40);
    tcase_add_test(format, global_table_handles_have_instance_2);
    tcase_add_test(format, entry_is_16_bytes);
    suite_add_tcase(s, format);

    tcase_add_test(reuse, open_close_open_gives_next_value);
    tcase_add_test(reuse, reuse_waits_for_reserve_tightest_case);
    tcase_add_test(reuse, reuse_is_fifo_after_many_frees);
    tcase_add_test(reuse, reuse_never_before_reserve_random_pattern);
    tcase_add_test(reuse, stale_handle_misses_two_reuses);
    suite_add_tcase(s, reuse);

    tcase_add_test(lookup, lookup_checks_type);
    tcase_add_test(lookup, lookup_rejects_malformed_handles);
    tcase_add_test(lookup, lookup_of_free_and_reserved_slots);
    tcase_add_test(lookup, empty_table_lookups);
    tcase_add_test(lookup, remove_twice);
    tcase_add_test(lookup, cancel_reserved_slot);
    tcase_add_test(lookup, cancel_of_published_slot_is_ignored);
    tcase_add_test(lookup, cancels_in_reverse_take_every_value_back);
    tcase_add_test(lookup, refused_and_successful_creates_step_by_0x40);
    tcase_add_test(lookup, cancel_behind_a_later_value_keeps_its_generation);
    tcase_add_test(lookup, references_outlive_remove);
    suite_add_tcase(s, lookup);

    tcase_set_timeout(scale, 120);
    tcase_add_test(scale, million_live_handles);
    tcase_add_test(scale, table_limit_is_2_pow_23_minus_1);
    suite_add_tcase(s, scale);

    tcase_set_timeout(threads, 120);
    tcase_add_test(threads, concurrent_churn_keeps_handles_private);
    tcase_add_test(threads, racing_removes_exactly_one_wins);
    tcase_add_test(threads, concurrent_cancels_never_hand_a_value_out_twice);
    tcase_add_test(threads, lock_free_lookup_across_a_table_restart);
    suite_add_tcase(s, threads);

    tcase_add_test(trace, trace_names_a_refused_stale_handle);
    tcase_add_test(trace, trace_names_wrong_type_and_garbage);
    tcase_add_test(trace, no_trace_by_default);
    suite_add_tcase(s, trace);
    return kmt_test_run(s);
}
