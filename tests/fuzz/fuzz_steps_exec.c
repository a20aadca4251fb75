/*
 * Steps on execution: CreateContext(Virtual), DestroyContext, SubmitCommand
 * (a command stream written into an allocation first), Render (into the
 * context's own buffers, with allocation and patch lists).
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "kmtshim/kmtsoft.h"
#include "fuzz_steps.h"

UINT fuzz_flags(struct fuzz_prog *p, unsigned bits)
{
    uint8_t how = fuzz_u8(&p->in);

    if (how % 8 == 7)
        return fuzz_u32(&p->in);
    if (how % 8 < 4)
        return 0;
    return fuzz_u32(&p->in) & ((1u << bits) - 1);
}

/* A GPU address for a command: an allocation's or a fence's, or any. */
static UINT64 pick_va(struct fuzz_prog *p)
{
    struct fuzz_object *o;

    switch (fuzz_u8(&p->in) % 4) {
    case 0: return fuzz_u64(&p->in);
    case 1:
        o = fuzz_pool_pick_live(&p->pool, FK_SYNC, &p->in);
        return o ? o->gpu_va : 0;
    default:
        o = fuzz_pool_pick_live(&p->pool, FK_ALLOCATION, &p->in);
        return o && o->gpu_va ? o->gpu_va + 8 * (fuzz_u8(&p->in) % 64) : fuzz_u64(&p->in);
    }
}

#define MI_NOOP 0u
#define MI_STORE_DATA_IMM(dwords) ((0x20u << 23) | ((dwords) - 2u))
#define MI_SDI_QWORD (1u << 21)
#define PKT3(op, body_dwords) ((3u << 30) | (((body_dwords) - 1u) << 16) | ((op) << 8))
#define PKT3_NOP 0x10u
#define PKT3_WRITE_DATA 0x37u
#define PKT3_WRITE_DATA_DST_MEM (5u << 8)
#define PKT3_WRITE_DATA_CONFIRM (1u << 20)

/* A soft-engine command in the target GPU's own commands, as the fake
 * kernel of its family runs them: a fill, a fence signal or a 64-bit write
 * is a store of its value at its address (MI_STORE_DATA_IMM on xe,
 * WRITE_DATA on amdgpu), a no-op, a copy, a delay or a wait (which the
 * fakes lack) is a no-op, a bad command its opcode dword, a command the
 * GPU does not know.  The same bytes of the input make either, so a
 * program reads the same on every target.  Returns the dwords written. */
static UINT native_command(const KMT_SOFT_CMD_HEADER *h, const void *cmd, UINT32 *w)
{
    UINT64 va = 0, value = 0;
    bool store = true, qword = true;
    UINT n = 0;

    switch (h->Opcode) {
    case KMT_SOFT_OP_FILL: {
        const KMT_SOFT_CMD_FILL *f = cmd;

        va = f->DstVa;
        value = f->Value;
        qword = false;
        break;
    }
    case KMT_SOFT_OP_SIGNAL_FENCE:
    case KMT_SOFT_OP_WRITE64: {
        const KMT_SOFT_CMD_FENCE *f = cmd;

        va = f->Va;
        value = f->Value;
        break;
    }
    default:
        store = false;
    }
    if (fuzz_target.isa == FUZZ_ISA_MI) {
        if (h->Opcode >= 8)
            w[n++] = h->Opcode;
        else if (!store)
            w[n++] = MI_NOOP;
        else {
            w[n++] = qword ? MI_STORE_DATA_IMM(5) | MI_SDI_QWORD : MI_STORE_DATA_IMM(4);
            w[n++] = (UINT32)va & (qword ? ~7u : ~3u);
            w[n++] = (UINT32)(va >> 32);
            w[n++] = (UINT32)value;
            if (qword)
                w[n++] = (UINT32)(value >> 32);
        }
        return n;
    }
    if (h->Opcode >= 8)
        w[n++] = h->Opcode;
    else if (!store) {
        w[n++] = PKT3(PKT3_NOP, 1);
        w[n++] = 0;
    } else {
        w[n++] = PKT3(PKT3_WRITE_DATA, qword ? 5 : 4);
        w[n++] = PKT3_WRITE_DATA_DST_MEM | PKT3_WRITE_DATA_CONFIRM;
        w[n++] = (UINT32)va & ~3u;
        w[n++] = (UINT32)(va >> 32);
        w[n++] = (UINT32)value;
        if (qword)
            w[n++] = (UINT32)(value >> 32);
    }
    return n;
}

UINT fuzz_commands(struct fuzz_prog *p, void *dst, UINT room)
{
    uint8_t *out = dst;
    UINT used = 0;

    while (room - used >= 32 && !fuzz_done(&p->in) && fuzz_u8(&p->in) % 8) {
        union {
            KMT_SOFT_CMD_HEADER h;
            KMT_SOFT_CMD_FILL fill;
            KMT_SOFT_CMD_COPY copy;
            KMT_SOFT_CMD_FENCE fence;
            KMT_SOFT_CMD_DELAY delay;
        } c;
        uint8_t op = fuzz_u8(&p->in) % 8;

        memset(&c, 0, sizeof(c));
        c.h.Opcode = op;
        switch (op) {
        case KMT_SOFT_OP_FILL:
            c.fill = (KMT_SOFT_CMD_FILL){ { op, sizeof(c.fill) }, pick_va(p), 4 * (fuzz_u8(&p->in) % 32),
                                          fuzz_u32(&p->in), 0 };
            break;
        case KMT_SOFT_OP_COPY:
            c.copy = (KMT_SOFT_CMD_COPY){ { op, sizeof(c.copy) }, pick_va(p), pick_va(p), fuzz_u8(&p->in) };
            break;
        case KMT_SOFT_OP_SIGNAL_FENCE:
        case KMT_SOFT_OP_WAIT_FENCE:           /* unsatisfied: the short TdrDelay ends it */
        case KMT_SOFT_OP_WRITE64:
            c.fence = (KMT_SOFT_CMD_FENCE){ { op, sizeof(c.fence) }, pick_va(p), fuzz_fence_value(p) };
            break;
        case KMT_SOFT_OP_DELAY:
            c.delay = (KMT_SOFT_CMD_DELAY){ { op, sizeof(c.delay) }, 40u * fuzz_u8(&p->in), 0 };   /* <= 10 ms */
            break;
        case 7:                                /* a bad opcode or size */
            c.h.Opcode = fuzz_u32(&p->in);
            c.h.Size = fuzz_u8(&p->in);
            break;
        default:
            c.h.Size = sizeof(c.h);
        }
        if (fuzz_target.isa != FUZZ_ISA_SOFT) {
            UINT32 w[8];
            UINT n = native_command(&c.h, &c, w);

            memcpy(out + used, w, n * 4);
            used += n * 4;
            continue;
        }
        memcpy(out + used, &c, 32);
        used += c.h.Size <= 32 && c.h.Size >= 8 ? (c.h.Size + 7) & ~7u : 32;
    }
    return used;
}

static void add_context(struct fuzz_prog *p, D3DKMT_HANDLE h, D3DKMT_HANDLE device, const D3DKMT_CREATECONTEXT *out)
{
    struct fuzz_object *o;

    fuzz_pool_expect_live(&p->pool, device, "CreateContext");
    o = fuzz_pool_add(&p->pool, FK_CONTEXT, h, device);

    if (o && out) {
        o->cmd = out->pCommandBuffer;
        o->cmd_size = out->CommandBufferSize;
        o->alist = out->pAllocationList;
        o->alist_size = out->AllocationListSize;
        o->plist = out->pPatchLocationList;
        o->plist_size = out->PatchLocationListSize;
    }
}

void step_create_context(struct fuzz_prog *p)
{
    D3DKMT_CREATECONTEXT c = { .hDevice = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in) };

    c.NodeOrdinal = fuzz_u8(&p->in) % 8 ? 0 : fuzz_u32(&p->in);
    c.EngineAffinity = fuzz_u8(&p->in) % 4 ? 0 : fuzz_u32(&p->in);
    c.Flags.Value = fuzz_flags(p, 7);
    if (fuzz_u8(&p->in) % 4 == 0) {
        c.PrivateDriverDataSize = fuzz_size(p, 16);
        c.pPrivateDriverData = fuzz_ptr(p, c.PrivateDriverDataSize, true);
    }
    c.ClientHint = (D3DKMT_CLIENTHINT)(fuzz_u8(&p->in) % 16);
    if (fuzz_u8(&p->in) & 1) {
        D3DKMT_CREATECONTEXTVIRTUAL v = { c.hDevice, c.NodeOrdinal, c.EngineAffinity, c.Flags,
                                          c.pPrivateDriverData, c.PrivateDriverDataSize, c.ClientHint, 0 };
        if (!D3DKMTCreateContextVirtual(&v))
            add_context(p, v.hContext, v.hDevice, NULL);
    } else if (!D3DKMTCreateContext(&c)) {
        add_context(p, c.hContext, c.hDevice, &c);
    }
}

void step_destroy_context(struct fuzz_prog *p)
{
    D3DKMT_DESTROYCONTEXT d = { fuzz_pool_handle(&p->pool, FK_CONTEXT, &p->in) };

    if (D3DKMTDestroyContext(&d))
        return;
    fuzz_pool_expect_live(&p->pool, d.hContext, "DestroyContext");
    fuzz_pool_kill(&p->pool, d.hContext);
}

/* Writes a command stream into a live allocation through fuzz_lock2 and
 * Unlock2; its GPU address, or 0. */
static UINT64 stream_in_allocation(struct fuzz_prog *p, UINT *length)
{
    struct fuzz_object *o = fuzz_pool_pick_live(&p->pool, FK_ALLOCATION, &p->in);
    D3DKMT_LOCK2 l = { 0 };
    D3DKMT_UNLOCK2 u = { 0 };
    void *data;

    if (!o || !o->gpu_va || !o->size)
        return 0;
    l.hDevice = u.hDevice = o->device;
    l.hAllocation = u.hAllocation = o->handle;
    if (!(data = fuzz_lock2(p, &l)))
        return 0;
    *length = fuzz_commands(p, data, (UINT)o->size);
    D3DKMTUnlock2(&u);
    return o->gpu_va;
}

void step_submit(struct fuzz_prog *p)
{
    D3DKMT_SUBMITCOMMAND s = { 0 };
    UINT n = fuzz_count(p, 2);

    s.Commands = fuzz_u8(&p->in) % 4 ? stream_in_allocation(p, &s.CommandLength) : fuzz_u64(&p->in);
    if (fuzz_u8(&p->in) % 8 == 0)
        s.CommandLength = fuzz_u32(&p->in);
    FUZZ_SET_FLAGS(s.Flags, fuzz_flags(p, 2));
    s.BroadcastContextCount = n;
    for (UINT i = 0; i < n && i < D3DDDI_MAX_BROADCAST_CONTEXT; i++)
        s.BroadcastContext[i] = fuzz_pool_handle(&p->pool, FK_CONTEXT, &p->in);
    if (fuzz_u8(&p->in) % 4 == 0) {
        s.PrivateDriverDataSize = fuzz_size(p, 16);
        s.pPrivateDriverData = fuzz_ptr(p, s.PrivateDriverDataSize, true);
    }
    if (fuzz_u8(&p->in) % 8 == 0) {
        s.NumPrimaries = fuzz_count(p, D3DDDI_MAX_WRITTEN_PRIMARIES);
        s.WrittenPrimaries[0] = fuzz_pool_handle(&p->pool, FK_ALLOCATION, &p->in);
        s.NumHistoryBuffers = fuzz_u8(&p->in) % 4;
        s.HistoryBufferArray = fuzz_ptr(p, 4 * sizeof(D3DKMT_HANDLE), false);
    }
    D3DKMTSubmitCommand(&s);
}

void step_render(struct fuzz_prog *p)
{
    struct fuzz_object *o = fuzz_pool_pick_live(&p->pool, FK_CONTEXT, &p->in);
    D3DKMT_RENDER r = { 0 };
    UINT written = 0, nalloc = 0, npatch = 0;

    if (o && o->cmd && o->cmd_size) {
        written = fuzz_commands(p, o->cmd, o->cmd_size < 512 ? o->cmd_size : 512);
        nalloc = o->alist ? fuzz_u8(&p->in) % 4 : 0;
        nalloc = nalloc < o->alist_size ? nalloc : o->alist_size;
        for (UINT i = 0; i < nalloc; i++) {
            o->alist[i].hAllocation = fuzz_pool_handle(&p->pool, FK_ALLOCATION, &p->in);
            o->alist[i].Value = fuzz_flags(p, 2);
        }
        npatch = o->plist ? fuzz_u8(&p->in) % 4 : 0;
        npatch = npatch < o->plist_size ? npatch : o->plist_size;
        for (UINT i = 0; i < npatch; i++) {
            D3DDDI_PATCHLOCATIONLIST *pl = &o->plist[i];
            memset(pl, 0, sizeof(*pl));
            pl->AllocationIndex = fuzz_u8(&p->in) % 8 ? fuzz_u8(&p->in) % 4 : fuzz_u32(&p->in);
            pl->AllocationOffset = fuzz_u8(&p->in) % 4 ? 8 * fuzz_u8(&p->in) : fuzz_u32(&p->in);
            pl->PatchOffset = fuzz_u8(&p->in) % 4 ? 8 * (fuzz_u8(&p->in) % 64) : fuzz_u32(&p->in);
        }
    }
    r.hContext = o && fuzz_u8(&p->in) % 8 ? o->handle : fuzz_pool_handle(&p->pool, FK_CONTEXT, &p->in);
    r.CommandOffset = fuzz_u8(&p->in) % 8 ? 0 : fuzz_u32(&p->in);
    r.CommandLength = fuzz_u8(&p->in) % 8 ? written : fuzz_u32(&p->in);
    r.AllocationCount = fuzz_u8(&p->in) % 8 ? nalloc : fuzz_u32(&p->in);
    r.PatchLocationCount = fuzz_u8(&p->in) % 8 ? npatch : fuzz_u32(&p->in);
    r.NewCommandBufferSize = o && fuzz_u8(&p->in) % 4 ? o->cmd_size : fuzz_u32(&p->in) % (1u << 20);
    r.NewAllocationListSize = o && fuzz_u8(&p->in) % 4 ? o->alist_size : fuzz_u8(&p->in);
    r.NewPatchLocationListSize = o && fuzz_u8(&p->in) % 4 ? o->plist_size : fuzz_u8(&p->in);
    FUZZ_SET_FLAGS(r.Flags, fuzz_flags(p, 4));
    r.BroadcastContextCount = fuzz_u8(&p->in) % 8 ? 0 : fuzz_count(p, 2);
    for (UINT i = 0; i < r.BroadcastContextCount && i < D3DDDI_MAX_BROADCAST_CONTEXT; i++)
        r.BroadcastContext[i] = fuzz_pool_handle(&p->pool, FK_CONTEXT, &p->in);
    if (fuzz_u8(&p->in) % 4 == 0) {
        r.PrivateDriverDataSize = fuzz_size(p, 16);
        r.pPrivateDriverData = fuzz_ptr(p, r.PrivateDriverDataSize, true);
    }
    if (D3DKMTRender(&r))
        return;
    /* the buffers the next Render fills are the new ones */
    if ((o = fuzz_pool_find(&p->pool, r.hContext)) && o->kind == FK_CONTEXT && !o->dead) {
        o->cmd = r.pNewCommandBuffer;
        o->cmd_size = r.NewCommandBufferSize;
        o->alist = r.pNewAllocationList;
        o->alist_size = r.NewAllocationListSize;
        o->plist = r.pNewPatchLocationList;
        o->plist_size = r.NewPatchLocationListSize;
    }
}
