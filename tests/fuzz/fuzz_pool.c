/*
 * The handles a fuzz program made, so a call can name a live one, a stale
 * one (destroyed earlier in the program) or one of another type, as the
 * input chooses.
 */
#include "config.h"

#include <string.h>

#include "fuzz.h"

struct fuzz_object *fuzz_pool_add(struct fuzz_pool *pool, enum fuzz_kind kind, D3DKMT_HANDLE h,
                                  D3DKMT_HANDLE device)
{
    struct fuzz_object *o;

    if (!h) {
        fuzz_finding("a create succeeded and returned handle 0");
        return NULL;
    }
    for (unsigned i = 0; i < pool->count; i++)
        if (pool->objects[i].handle == h && !pool->objects[i].dead && pool->objects[i].kind != FK_ADAPTER)
            fuzz_finding("handle %#x given out again while its object lives", h);
    if (pool->count == FUZZ_MAX_OBJECTS)
        return NULL;
    o = &pool->objects[pool->count++];
    memset(o, 0, sizeof(*o));
    o->handle = h;
    o->kind = kind;
    o->device = device;
    return o;
}

struct fuzz_object *fuzz_pool_pick_live(struct fuzz_pool *pool, enum fuzz_kind kind, struct fuzz_input *in)
{
    unsigned live = 0, nth = fuzz_u8(in);    /* read either way: inputs stay aligned */

    for (unsigned i = 0; i < pool->count; i++)
        live += pool->objects[i].kind == kind && !pool->objects[i].dead;
    if (!live)
        return NULL;
    nth %= live;
    for (unsigned i = 0; i < pool->count; i++)
        if (pool->objects[i].kind == kind && !pool->objects[i].dead && !nth--)
            return &pool->objects[i];
    return NULL;
}

/* An object of that kind (any kind: -1), dead or alive (a stale handle), or NULL. */
static struct fuzz_object *pick_any(struct fuzz_pool *pool, int kind, struct fuzz_input *in)
{
    unsigned n = 0, nth = fuzz_u8(in);

    for (unsigned i = 0; i < pool->count; i++)
        n += kind < 0 || pool->objects[i].kind == (enum fuzz_kind)kind;
    if (!n)
        return NULL;
    nth %= n;
    for (unsigned i = 0; i < pool->count; i++)
        if ((kind < 0 || pool->objects[i].kind == (enum fuzz_kind)kind) && !nth--)
            return &pool->objects[i];
    return NULL;
}

D3DKMT_HANDLE fuzz_pool_handle(struct fuzz_pool *pool, enum fuzz_kind kind, struct fuzz_input *in)
{
    struct fuzz_object *o;
    uint8_t how = fuzz_u8(in);

    switch (how % 8) {
    default:                        /* mostly what a correct program passes */
        o = fuzz_pool_pick_live(pool, kind, in);
        break;
    case 5:                         /* of that kind, perhaps destroyed */
        o = pick_any(pool, kind, in);
        break;
    case 6:                         /* any kind */
        o = pick_any(pool, -1, in);
        break;
    case 7:                         /* 0, garbage, or a live handle's neighbours */
        switch (fuzz_u8(in) % 4) {
        case 0: return 0;
        case 1: return fuzz_u32(in);
        case 2: return 0x60000000u | (fuzz_u8(in) << 6);   /* a local handle's shape (hmgr.h) */
        default:
            o = pick_any(pool, -1, in);
            return o ? o->handle ^ (1u << (fuzz_u8(in) % 32)) : 0;
        }
    }
    return o ? o->handle : 0;
}

struct fuzz_object *fuzz_pool_find(struct fuzz_pool *pool, D3DKMT_HANDLE h)
{
    /* newest first: a handle value may come back after its object died */
    for (unsigned i = pool->count; h && i-- > 0;)
        if (pool->objects[i].handle == h)
            return &pool->objects[i];
    return NULL;
}

void fuzz_pool_kill(struct fuzz_pool *pool, D3DKMT_HANDLE h)
{
    struct fuzz_object *o = fuzz_pool_find(pool, h);

    if (!o || o->dead)
        return;
    o->dead = true;
    for (unsigned i = 0; i < pool->count; i++) {
        struct fuzz_object *c = &pool->objects[i];

        if ((o->kind == FK_DEVICE && c->device == h) || (o->kind == FK_RESOURCE && c->resource == h))
            c->dead = true;
    }
}

void fuzz_pool_expect_live(struct fuzz_pool *pool, D3DKMT_HANDLE h, const char *call)
{
    struct fuzz_object *o = fuzz_pool_find(pool, h);

    /* a full pool no longer sees every create: a value may have come back */
    if (o && o->dead && pool->count < FUZZ_MAX_OBJECTS)
        fuzz_finding("%s succeeded with handle %#x of a destroyed object", call, h);
}
