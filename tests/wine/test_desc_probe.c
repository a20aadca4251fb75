/*
 * The Windows side's descriptor probe (dlls/kmtshim/wine/desc_probe.h) on
 * pages of every kind: i386 builds use it for every descriptor they read
 * before the core does; x86_64 builds check bounds only, and test the same
 * probe here so that it runs where 32-bit programs cannot.
 */
#include "kmtwtest.h"
#include "desc_probe.h"

#define PAGES 6

/* One reservation: RW, RO (separate regions), reserved, NOACCESS, RW with
 * PAGE_GUARD, then a released page. */
static BYTE *pages;
static SIZE_T page;

static BOOL map_pages(void)
{
    SYSTEM_INFO si;
    DWORD old;

    GetSystemInfo(&si);
    page = si.dwPageSize;
    pages = VirtualAlloc(NULL, PAGES * page, MEM_RESERVE, PAGE_NOACCESS);
    ok(pages != NULL, "VirtualAlloc reserve: %lu\n", GetLastError());
    if (!pages)
        return FALSE;
    ok(VirtualAlloc(pages, 2 * page, MEM_COMMIT, PAGE_READWRITE) == pages, "commit RW\n");
    ok(VirtualProtect(pages + page, page, PAGE_READONLY, &old), "VirtualProtect RO\n");
    ok(VirtualAlloc(pages + 3 * page, page, MEM_COMMIT, PAGE_NOACCESS) != NULL, "commit NOACCESS\n");
    ok(VirtualAlloc(pages + 4 * page, page, MEM_COMMIT, PAGE_READWRITE | PAGE_GUARD) != NULL, "commit guard\n");
    return TRUE;
}

static DWORD protection(const void *p)
{
    MEMORY_BASIC_INFORMATION mbi;

    return VirtualQuery(p, &mbi, sizeof(mbi)) == sizeof(mbi) ? mbi.Protect : 0;
}

static void test_readable(void)
{
    BYTE *rw, *ro, *reserved, *noaccess, *guard;
    BYTE stack_desc[64];

    if (!map_pages())
        return;
    rw = pages;
    ro = pages + page;
    reserved = pages + 2 * page;
    noaccess = pages + 3 * page;
    guard = pages + 4 * page;

    ok(kmt_win_range_readable(stack_desc, sizeof(stack_desc)), "a stack buffer\n");
    ok(kmt_win_range_readable(rw, page), "a RW page\n");
    ok(kmt_win_range_readable(rw + page - 1, 1), "the RW page's last byte\n");
    ok(kmt_win_range_readable(rw, 0), "size 0 in a RW page\n");
    ok(kmt_win_range_readable(ro, page), "a RO page\n");
    ok(kmt_win_range_readable(rw + page - 8, 16), "RW into RO: two regions, both readable\n");

    ok(!kmt_win_range_readable(reserved, 1), "a reserved, uncommitted page\n");
    ok(!kmt_win_range_readable(reserved + page - 8, 8), "the end of the reserved page\n");
    ok(!kmt_win_range_readable(ro + page - 8, 16), "RO into the reserved page\n");
    ok(!kmt_win_range_readable(rw, 3 * page), "RW, RO, then reserved\n");
    ok(!kmt_win_range_readable(noaccess, 4), "a PAGE_NOACCESS page\n");
    ok(!kmt_win_range_readable(guard, 4), "a guard page\n");
    ok(protection(guard) & PAGE_GUARD, "the probe took the guard page's guard: %#lx\n", protection(guard));

    ok(!kmt_win_range_readable(NULL, 4), "NULL\n");
    ok(!kmt_win_range_readable((void *)(ULONG_PTR)0x10, 4), "below 64 KiB\n");
    ok(!kmt_win_range_readable(rw, ~(SIZE_T)0), "a size that wraps the address space\n");
    ok(!kmt_win_range_readable((void *)~(ULONG_PTR)0xff, 0x100), "the last bytes of the address space\n");

    ok(VirtualFree(pages, 0, MEM_RELEASE), "VirtualFree\n");
    ok(!kmt_win_range_readable(rw, 4), "a released page\n");
}

/* x86_64 keeps the bounds (the core's, no system call); i386 probes. */
static void test_desc_ok(void)
{
    BYTE *reserved = VirtualAlloc(NULL, 0x10000, MEM_RESERVE, PAGE_NOACCESS);
    BYTE desc[32];

    ok(reserved != NULL, "VirtualAlloc reserve\n");
    if (!reserved)
        return;
    ok(kmt_win_desc_ok(desc, sizeof(desc)), "a stack descriptor\n");
    ok(!kmt_win_desc_ok((void *)(ULONG_PTR)0xfff0, 8), "below 64 KiB\n");
#ifdef _WIN64
    ok(kmt_win_desc_ok(reserved, 8), "x86_64: bounds only, a reserved page passes\n");
    ok(!kmt_win_desc_ok((void *)(ULONG_PTR)0x800000000000ull, 8), "x86_64: past 2^47\n");
#else
    ok(!kmt_win_desc_ok(reserved, 8), "i386: a reserved page is refused\n");
#endif
    VirtualFree(reserved, 0, MEM_RELEASE);
}

static const struct kmtw_test tests[] = {
    { "readable", test_readable },
    { "desc_ok", test_desc_ok },
};

int main(int argc, char **argv)
{
    return kmtw_run("test_desc_probe", tests, ARRAY_SIZE(tests), argc, argv);
}
