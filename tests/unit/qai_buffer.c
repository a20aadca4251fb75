/*
 * QueryAdapterInfo into laid-out buffers (qai_buffer.h).
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "qai_buffer.h"

#define PAGE 4096

static D3DKMT_HANDLE adapter;

void qai_open_soft(void)
{
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
}

NTSTATUS qai_query(KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { adapter, type, data, size };

    return D3DKMTQueryAdapterInfo(&q);
}

D3DKMT_DRIVERVERSION qai_driver_version(void)
{
    D3DKMT_DRIVERVERSION v = 0;

    ck_assert_status(qai_query(KMTQAITYPE_DRIVERVERSION, &v, sizeof(v)), STATUS_SUCCESS);
    ck_assert_int_ne(v, 0);
    return v;
}

void *qai_page_with(int prot)
{
    char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    ck_assert_ptr_ne(p, MAP_FAILED);
    memset(p, 0, PAGE);
    ck_assert_int_eq(mprotect(p, PAGE, prot), 0);
    return p;
}
