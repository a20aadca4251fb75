/*
 * The new-WoW64 table of the Linux half (dlls/kmtshim/wine/unix/wow64*.c)
 * without Wine: i386-layout descriptors built byte by byte at the i386
 * offsets, in memory below 4 GiB as a 32-bit program's is, go through
 * kmt_unix_core_wow64_funcs to the core and the soft miniport; the outputs
 * are read back at the i386 offsets.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>

#include "test_util.h"
#include "unixlib.h"
#include "entries.h"
#include "wow64.h"

#define ARENA_SIZE (1u << 20)

/* the normal table (unixlib.c), for the statuses the wow64 one must match */
extern const kmt_w64_entry kmt_unix_core_funcs[];

static uint8_t *arena;
static size_t arena_used;

/* zeroed memory below 4 GiB, like a 32-bit program's */
static uint8_t *low_alloc(size_t size)
{
    uint8_t *p;

    if (!arena) {
        arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        ck_assert_ptr_ne(arena, MAP_FAILED);
        ck_assert_uint_lt((uintptr_t)arena + ARENA_SIZE, 0x100000000ull);
    }
    size = (size + 15) & ~(size_t)15;
    ck_assert_uint_le(arena_used + size, ARENA_SIZE);
    p = arena + arena_used;
    arena_used += size;
    memset(p, 0, size);
    return p;
}

static uint32_t addr32(const void *p)
{
    return (uint32_t)(uintptr_t)p;
}

static void put32(uint8_t *desc, size_t off, uint32_t v)
{
    memcpy(desc + off, &v, 4);
}

static uint32_t get32(const uint8_t *desc, size_t off)
{
    uint32_t v;

    memcpy(&v, desc + off, 4);
    return v;
}

static void put64(uint8_t *desc, size_t off, uint64_t v)
{
    memcpy(desc + off, &v, 8);
}

/* one D3DKMT call through the wow64 table, as a 32-bit kmtshim.dll makes it */
static NTSTATUS call32(enum kmt_unix_code code, const void *desc)
{
    struct kmt_desc_params params = { addr32(desc) };

    return kmt_unix_core_wow64_funcs[code](&params);
}

static NTSTATUS call32_event(enum kmt_unix_code code, const void *desc)
{
    struct kmt_event_params params = { addr32(desc), 0, 0, 0 };

    return kmt_unix_core_wow64_funcs[code](&params);
}

static const struct kmt_w64_layout *const all_layouts[] = {
#define KMT_FUNC(name, type) &kmt_w64_layout_##name,
#define KMT_FUNC_CUSTOM(name, type)
#include "functions.h"
    &kmt_w64_layout_D3DDDI_ALLOCATIONINFO,
    &kmt_w64_layout_D3DDDI_ALLOCATIONINFO2,
    &kmt_w64_layout_D3DDDI_OPENALLOCATIONINFO,
    &kmt_w64_layout_D3DDDI_OPENALLOCATIONINFO2,
    &kmt_w64_layout_OBJECT_ATTRIBUTES,
    &kmt_w64_layout_UNICODE_STRING,
    &kmt_w64_layout_HANDLE_ELEM,
};

START_TEST(table_has_every_code)
{
    for (unsigned code = 0; code < KMT_UNIX_LOAD_STATUS; code++)
        ck_assert_msg(kmt_unix_core_wow64_funcs[code] != NULL, "code %u has no wow64 entry", code);
}
END_TEST

/* Every layout: a patterned i386 descriptor converts field by field
 * (pointers zero-extended, handles sign-extended, bytes as they are) and
 * comes back unchanged. */
START_TEST(layouts_round_trip)
{
    for (size_t l = 0; l < sizeof(all_layouts) / sizeof(all_layouts[0]); l++) {
        const struct kmt_w64_layout *layout = all_layouts[l];
        uint8_t *desc = low_alloc(layout->size32), *saved = low_alloc(layout->size32);
        struct kmt_w64_copy *copy;
        const uint8_t *d64;
        uint64_t p64;

        ck_assert_uint_le(layout->size32, KMT_W64_MAX_SIZE32);
        ck_assert_uint_gt(layout->size64, 0);
        for (uint16_t i = 0; i < layout->size32; i++)
            desc[i] = (uint8_t)(0x81 + 7 * i);
        for (uint16_t i = 0; i < layout->count; i++)
            if (layout->fields[i].kind == KMT_W64_KIND_ARRAY)
                put32(desc, layout->fields[i].off32, 0);
        memcpy(saved, desc, layout->size32);

        ck_assert_status(kmt_w64_to64(layout, addr32(desc), &copy, &p64), STATUS_SUCCESS);
        ck_assert_ptr_nonnull(copy);
        d64 = (const uint8_t *)(uintptr_t)p64;
        for (uint16_t i = 0; i < layout->count; i++) {
            const struct kmt_w64_field *f = &layout->fields[i];

            ck_assert_uint_le(f->off32 + (f->kind == KMT_W64_KIND_BYTES ? f->size : 4u * f->size), layout->size32);
            ck_assert_uint_le(f->off64 + (f->kind == KMT_W64_KIND_BYTES ? f->size : 8u * f->size), layout->size64);
            if (f->cond != KMT_W64_ALWAYS)
                continue;
            for (uint16_t n = 0; f->kind != KMT_W64_KIND_BYTES && n < f->size; n++) {
                uint64_t v64;
                uint32_t v32 = get32(desc, f->off32 + 4 * n);

                memcpy(&v64, d64 + f->off64 + 8 * n, 8);
                if (f->kind == KMT_W64_KIND_HANDLE)
                    ck_assert_msg(v64 == (uint64_t)(int64_t)(int32_t)v32, "%s field %u: handle not sign-extended",
                                  layout->name, i);
                else if (f->kind != KMT_W64_KIND_ARRAY)
                    ck_assert_msg(v64 == v32, "%s field %u: pointer not zero-extended", layout->name, i);
            }
            if (f->kind == KMT_W64_KIND_BYTES)
                ck_assert_msg(!memcmp(d64 + f->off64, desc + f->off32, f->size), "%s field %u: bytes differ",
                              layout->name, i);
        }
        ck_assert_status(kmt_w64_from64(copy, 1, STATUS_SUCCESS), STATUS_SUCCESS);
        ck_assert_msg(!memcmp(desc, saved, layout->size32), "%s: the round trip changed the descriptor",
                      layout->name);
    }
}
END_TEST

/* A pointer or handle the core writes that does not fit 32 bits is the
 * caller's error; one that fits is narrowed. */
START_TEST(narrowing)
{
    /* D3DKMT_LOCK2, i386: hDevice 0, hAllocation 4, Flags 8, pData 0x0c */
    uint8_t *lock = low_alloc(0x10);
    /* D3DKMT_OPENNTHANDLEFROMNAME, i386: dwDesiredAccess 0, pObjAttrib 4, hNtHandle 8 */
    uint8_t *open = low_alloc(0x0c);
    struct kmt_w64_copy *copy;
    uint64_t p64;
    D3DKMT_LOCK2 *l64;
    D3DKMT_OPENNTHANDLEFROMNAME *o64;

    ck_assert_status(kmt_w64_to64(&kmt_w64_layout_Lock2, addr32(lock), &copy, &p64), STATUS_SUCCESS);
    l64 = (D3DKMT_LOCK2 *)(uintptr_t)p64;
    l64->pData = (void *)(uintptr_t)0x7fff12340000ull;
    ck_assert_status(kmt_w64_from64(copy, 1, STATUS_SUCCESS), KMT_W64_STATUS_NO_FIT);

    ck_assert_status(kmt_w64_to64(&kmt_w64_layout_Lock2, addr32(lock), &copy, &p64), STATUS_SUCCESS);
    l64 = (D3DKMT_LOCK2 *)(uintptr_t)p64;
    l64->pData = (void *)(uintptr_t)0xfedc0000u;
    ck_assert_status(kmt_w64_from64(copy, 1, STATUS_SUCCESS), STATUS_SUCCESS);
    ck_assert_uint_eq(get32(lock, 0x0c), 0xfedc0000u);
    /* a failed call keeps its own status */
    ck_assert_status(kmt_w64_to64(&kmt_w64_layout_Lock2, addr32(lock), &copy, &p64), STATUS_SUCCESS);
    ((D3DKMT_LOCK2 *)(uintptr_t)p64)->pData = (void *)(uintptr_t)0x7fff12340000ull;
    ck_assert_status(kmt_w64_from64(copy, 1, STATUS_INVALID_HANDLE), STATUS_INVALID_HANDLE);

    /* handles: -1 (a pseudo-handle) sign-extends and narrows back */
    put32(open, 8, 0xffffffffu);
    ck_assert_status(kmt_w64_to64(&kmt_w64_layout_OpenNtHandleFromName, addr32(open), &copy, &p64), STATUS_SUCCESS);
    o64 = (D3DKMT_OPENNTHANDLEFROMNAME *)(uintptr_t)p64;
    ck_assert_uint_eq((uintptr_t)o64->hNtHandle, UINTPTR_MAX);
    o64->hNtHandle = (HANDLE)(uintptr_t)0x100000004ull;
    ck_assert_status(kmt_w64_from64(copy, 1, STATUS_SUCCESS), KMT_W64_STATUS_NO_FIT);
    ck_assert_status(kmt_w64_to64(&kmt_w64_layout_OpenNtHandleFromName, addr32(open), &copy, &p64), STATUS_SUCCESS);
    ((D3DKMT_OPENNTHANDLEFROMNAME *)(uintptr_t)p64)->hNtHandle = (HANDLE)(uintptr_t)0x124;
    ck_assert_status(kmt_w64_from64(copy, 1, STATUS_SUCCESS), STATUS_SUCCESS);
    ck_assert_uint_eq(get32(open, 8), 0x124);
}
END_TEST

/* The object attributes and their name are converted, and never written. */
START_TEST(nested_input_structures)
{
    uint8_t *open = low_alloc(0x0c), *attr = low_alloc(0x18), *name = low_alloc(8);
    WCHAR *text = (WCHAR *)low_alloc(16);
    struct kmt_w64_copy *copy;
    uint64_t p64;
    D3DKMT_OPENNTHANDLEFROMNAME *o64;

    put32(name, 0, 0x00100008u);       /* Length 8, MaximumLength 16 */
    put32(name, 4, addr32(text));
    put32(attr, 0, 0x18);
    put32(attr, 4, 0xfffffffcu);       /* RootDirectory: a negative handle value */
    put32(attr, 8, addr32(name));
    put32(attr, 0x0c, 0x40);
    put32(open, 4, addr32(attr));
    ck_assert_status(kmt_w64_to64(&kmt_w64_layout_OpenNtHandleFromName, addr32(open), &copy, &p64), STATUS_SUCCESS);
    o64 = (D3DKMT_OPENNTHANDLEFROMNAME *)(uintptr_t)p64;
    ck_assert_ptr_nonnull(o64->pObjAttrib);
    ck_assert_ptr_ne(o64->pObjAttrib, (void *)attr);
    ck_assert_uint_eq(o64->pObjAttrib->Length, 0x18);
    ck_assert_uint_eq((uintptr_t)o64->pObjAttrib->RootDirectory, (uintptr_t)(intptr_t)-4);
    ck_assert_uint_eq(o64->pObjAttrib->Attributes, 0x40);
    ck_assert_uint_eq(o64->pObjAttrib->ObjectName->Length, 8);
    ck_assert_uint_eq(o64->pObjAttrib->ObjectName->MaximumLength, 16);
    ck_assert_ptr_eq(o64->pObjAttrib->ObjectName->Buffer, text);
    /* in-only: what the core might change there never reaches the program */
    o64->pObjAttrib->Attributes = 0x999;
    ck_assert_status(kmt_w64_from64(copy, 1, STATUS_SUCCESS), STATUS_SUCCESS);
    ck_assert_uint_eq(get32(attr, 0x0c), 0x40);
}
END_TEST

/* The kmtdemo sequence of a 32-bit program, on the soft miniport. */
START_TEST(demo_sequence_on_soft_adapter)
{
    uint8_t *adapters = low_alloc(16 * 20), *enum2 = low_alloc(8), *luid = low_alloc(0x0c), *qai = low_alloc(0x10);
    uint8_t *version = low_alloc(4), *cd = low_alloc(0x24), *ca = low_alloc(0x2c);
    uint8_t *info = low_alloc(2 * 0x18), *lock = low_alloc(0x10), *unlock = low_alloc(8), *esc = low_alloc(0x1c);
    uint8_t *sync = low_alloc(0x60), *sig = low_alloc(0x14), *wait = low_alloc(0x18), *handles = low_alloc(8);
    uint8_t *fences = low_alloc(16), *ds = low_alloc(4), *da = low_alloc(0x10), *dd = low_alloc(4), *close = low_alloc(4);
    KMT_SOFT_ALLOCATION_DESC *soft = (KMT_SOFT_ALLOCATION_DESC *)low_alloc(2 * sizeof(*soft));
    KMT_SOFT_ESCAPE *stats = (KMT_SOFT_ESCAPE *)low_alloc(sizeof(*stats));
    uint32_t adapter, device, resource, syncobj;

    kmt_test_use_miniport("soft");

    /* EnumAdapters2: NumAdapters 0, pAdapters 4 (D3DKMT_ADAPTERINFO needs no conversion) */
    put32(enum2, 0, 16);
    put32(enum2, 4, addr32(adapters));
    ck_assert_status(call32(KMT_UNIX_EnumAdapters2, enum2), STATUS_SUCCESS);
    ck_assert_uint_ge(get32(enum2, 0), 1);
    ck_assert_uint_eq(get32(enum2, 4), addr32(adapters));
    adapter = get32(adapters, 0);
    ck_assert_local_handle(adapter);
    for (uint32_t i = 1; i < get32(enum2, 0); i++) {
        put32(close, 0, get32(adapters, 20 * i));
        ck_assert_status(call32(KMT_UNIX_CloseAdapter, close), STATUS_SUCCESS);
    }

    /* OpenAdapterFromLuid: AdapterLuid 0, hAdapter 8 */
    memcpy(luid, adapters + 4, 8);
    ck_assert_status(call32(KMT_UNIX_OpenAdapterFromLuid, luid), STATUS_SUCCESS);
    ck_assert_local_handle(get32(luid, 8));
    put32(close, 0, get32(luid, 8));
    ck_assert_status(call32(KMT_UNIX_CloseAdapter, close), STATUS_SUCCESS);

    /* QueryAdapterInfo: hAdapter 0, Type 4, pPrivateDriverData 8, size 0x0c */
    put32(qai, 0, adapter);
    put32(qai, 4, KMTQAITYPE_DRIVERVERSION);
    put32(qai, 8, addr32(version));
    put32(qai, 0x0c, 4);
    ck_assert_status(call32(KMT_UNIX_QueryAdapterInfo, qai), STATUS_SUCCESS);
    ck_assert_uint_ge(get32(version, 0), KMT_DRIVERVERSION_WDDM_2_0);
    ck_assert_uint_eq(get32(qai, 8), addr32(version));

    /* CreateDevice: hAdapter 0, Flags 4, hDevice 8 */
    put32(cd, 0, adapter);
    ck_assert_status(call32(KMT_UNIX_CreateDevice, cd), STATUS_SUCCESS);
    device = get32(cd, 8);
    ck_assert_local_handle(device);
    ck_assert_uint_eq(get32(cd, 0), adapter);

    /* CreateAllocation: D3DDDI_ALLOCATIONINFO of 0x18 bytes (hAllocation 0,
     * pPrivateDriverData 8, PrivateDriverDataSize 0x0c); the descriptor's
     * hResource 4, NumAllocations 0x1c, pAllocationInfo 0x20, Flags 0x24 */
    for (int i = 0; i < 2; i++) {
        soft[i] = kmt_test_soft_desc(4096);
        put32(info, 0x18 * i + 8, addr32(&soft[i]));
        put32(info, 0x18 * i + 0x0c, sizeof(soft[i]));
    }
    put32(ca, 0, device);
    put32(ca, 0x1c, 2);
    put32(ca, 0x20, addr32(info));
    put32(ca, 0x24, 1);                 /* Flags.CreateResource */
    ck_assert_status(call32(KMT_UNIX_CreateAllocation, ca), STATUS_SUCCESS);
    resource = get32(ca, 4);
    ck_assert_local_handle(resource);
    ck_assert_uint_eq(get32(info, 0), resource + 0x40);
    ck_assert_uint_eq(get32(info, 0x18), resource + 0x80);
    ck_assert_uint_eq(get32(info, 8), addr32(&soft[0]));
    ck_assert_uint_eq(get32(ca, 0x20), addr32(info));

    /* Escape: hAdapter 0, Type 8, pPrivateDriverData 0x10, size 0x14 */
    stats->Code = KMT_SOFT_ESCAPE_GET_STATS;
    put32(esc, 0, adapter);
    put32(esc, 8, D3DKMT_ESCAPE_DRIVERPRIVATE);
    put32(esc, 0x10, addr32(stats));
    put32(esc, 0x14, sizeof(*stats));
    ck_assert_status(call32(KMT_UNIX_Escape, esc), STATUS_SUCCESS);
    ck_assert_uint_eq(stats->Stats.Allocations, 2);

    /* Lock2: the core maps the allocation above 4 GiB, which a 32-bit
     * program cannot address: the caller sees the narrowing error */
    put32(lock, 0, device);
    put32(lock, 4, get32(info, 0x18));
    ck_assert_status(call32(KMT_UNIX_Lock2, lock), KMT_W64_STATUS_NO_FIT);
    put32(unlock, 0, device);
    put32(unlock, 4, get32(info, 0x18));
    ck_assert_status(call32(KMT_UNIX_Unlock2, unlock), STATUS_SUCCESS);

    /* CreateSynchronizationObject2, a monitored fence: hDevice 0, Info 8
     * (Type 8, Flags 0x0c, InitialFenceValue 0x10, FenceValueCPUVirtualAddress
     * 0x18), hSyncObject 0x58.  The fence value's CPU address lies above
     * 4 GiB: the narrowing error, with the handle written back. */
    put32(sync, 0, device);
    put32(sync, 8, D3DDDI_MONITORED_FENCE);
    put64(sync, 0x10, 5);
    ck_assert_status(call32_event(KMT_UNIX_CreateSynchronizationObject2, sync), KMT_W64_STATUS_NO_FIT);
    syncobj = get32(sync, 0x58);
    ck_assert_local_handle(syncobj);
    ck_assert_uint_eq(get32(sync, 0x08), D3DDDI_MONITORED_FENCE);

    /* SignalSynchronizationObjectFromCpu: hDevice 0, ObjectCount 4,
     * ObjectHandleArray 8, FenceValueArray 0x0c */
    put32(handles, 0, syncobj);
    put64(fences, 0, 7);
    put32(sig, 0, device);
    put32(sig, 4, 1);
    put32(sig, 8, addr32(handles));
    put32(sig, 0x0c, addr32(fences));
    ck_assert_status(call32(KMT_UNIX_SignalSynchronizationObjectFromCpu, sig), STATUS_SUCCESS);

    /* WaitForSynchronizationObjectFromCpu: the same, hAsyncEvent 0x10 */
    put32(wait, 0, device);
    put32(wait, 4, 1);
    put32(wait, 8, addr32(handles));
    put32(wait, 0x0c, addr32(fences));
    ck_assert_status(call32_event(KMT_UNIX_WaitForSynchronizationObjectFromCpu, wait), STATUS_SUCCESS);

    put32(ds, 0, syncobj);
    ck_assert_status(call32(KMT_UNIX_DestroySynchronizationObject, ds), STATUS_SUCCESS);

    /* DestroyAllocation: hDevice 0, hResource 4 */
    put32(da, 0, device);
    put32(da, 4, resource);
    ck_assert_status(call32(KMT_UNIX_DestroyAllocation, da), STATUS_SUCCESS);
    stats->Code = KMT_SOFT_ESCAPE_GET_STATS;
    ck_assert_status(call32(KMT_UNIX_Escape, esc), STATUS_SUCCESS);
    ck_assert_uint_eq(stats->Stats.Allocations, 0);

    put32(dd, 0, device);
    ck_assert_status(call32(KMT_UNIX_DestroyDevice, dd), STATUS_SUCCESS);
    put32(close, 0, adapter);
    ck_assert_status(call32(KMT_UNIX_CloseAdapter, close), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Bad 32-bit pointers and overflowing counts: the statuses the 64-bit
 * entries give, or STATUS_INVALID_PARAMETER; never a crash. */
START_TEST(malformed_input)
{
    uint8_t *ca = low_alloc(0x2c), *cd = low_alloc(0x24);
    D3DKMT_CREATEALLOCATION ca64 = { 0 };
    struct kmt_desc_params native = { 0 };
    D3DKMT_HANDLE adapter;
    uint32_t device;
    NTSTATUS expected;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    put32(cd, 0, adapter);
    ck_assert_status(call32(KMT_UNIX_CreateDevice, cd), STATUS_SUCCESS);
    device = get32(cd, 8);

    /* NULL and a low descriptor pointer: the 64-bit entry's answer */
    for (unsigned code = KMT_UNIX_EnumAdapters2; code <= KMT_UNIX_CreateAllocation; code++) {
        struct kmt_desc_params params = { 0 };

        if (code == KMT_UNIX_QueryVideoMemoryInfo || code == KMT_UNIX_QueryStatistics ||
            code == KMT_UNIX_DestroyDevice)
            continue;       /* PE-resolved fields: their 64-bit entries are tested elsewhere */
        for (uint64_t bad = 0; bad <= 0x1000; bad += 0x1000) {
            native.desc = params.desc = bad;
            expected = kmt_unix_core_funcs[code](&native);
            ck_assert_status(kmt_unix_core_wow64_funcs[code](&params), expected);
        }
        ck_assert_status(kmt_unix_core_wow64_funcs[code](NULL), STATUS_INVALID_PARAMETER);
    }

    /* an array pointer into the first 64 KiB reaches the core as it is */
    put32(ca, 0, device);
    put32(ca, 0x1c, 1);
    put32(ca, 0x20, 0x1000);
    ca64.hDevice = device;
    ca64.NumAllocations = 1;
    ca64.pAllocationInfo = (D3DDDI_ALLOCATIONINFO *)(uintptr_t)0x1000;
    expected = D3DKMTCreateAllocation(&ca64);
    ck_assert_int_ne(expected, STATUS_SUCCESS);
    ck_assert_status(call32(KMT_UNIX_CreateAllocation, ca), expected);

    /* a count whose array would pass 4 GiB, or the converter's bound */
    put32(ca, 0x20, addr32(low_alloc(0x18)));
    put32(ca, 0x1c, 0x40000000u);
    ck_assert_status(call32(KMT_UNIX_CreateAllocation, ca), STATUS_INVALID_PARAMETER);
    put32(ca, 0x1c, 0xffffffffu);
    ck_assert_status(call32(KMT_UNIX_CreateAllocation, ca), STATUS_INVALID_PARAMETER);
    put32(ca, 0x1c, 2);
    put32(ca, 0x20, 0xfffffff0u);
    ck_assert_status(call32(KMT_UNIX_CreateAllocation, ca), STATUS_INVALID_PARAMETER);

    /* an array pointer in range whose page is gone, and a read-only
     * descriptor of a call that fails: a status, no crash, nothing written */
    {
        uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        D3DKMT_CREATEDEVICE bad = { .hAdapter = 0x40000000u | 0x7fff00u };

        ck_assert_ptr_ne(page, MAP_FAILED);
        ck_assert_int_eq(munmap(page, 4096), 0);
        put32(ca, 0x1c, 1);
        put32(ca, 0x20, addr32(page));
        ck_assert_status(call32(KMT_UNIX_CreateAllocation, ca), STATUS_INVALID_PARAMETER);

        page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        ck_assert_ptr_ne(page, MAP_FAILED);
        put32(page, 0, bad.hAdapter);
        put32(page, 8, 0x12345678u);
        ck_assert_int_eq(mprotect(page, 4096, PROT_READ), 0);
        expected = D3DKMTCreateDevice(&bad);
        ck_assert_int_ne(expected, STATUS_SUCCESS);
        ck_assert_status(call32(KMT_UNIX_CreateDevice, page), expected);
        ck_assert_uint_eq(get32(page, 8), 0x12345678u);
        ck_assert_int_eq(munmap(page, 4096), 0);
    }

    {
        D3DKMT_DESTROYDEVICE dd = { device };
        D3DKMT_CLOSEADAPTER c = { adapter };

        ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
        ck_assert_status(D3DKMTCloseAdapter(&c), STATUS_SUCCESS);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wow64");
    TCase *tc = tcase_create("wow64");

    tcase_add_test(tc, table_has_every_code);
    tcase_add_test(tc, layouts_round_trip);
    tcase_add_test(tc, narrowing);
    tcase_add_test(tc, nested_input_structures);
    tcase_add_test(tc, demo_sequence_on_soft_adapter);
    tcase_add_test(tc, malformed_input);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
