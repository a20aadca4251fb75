/*
 * QueryAdapterInfo on the soft adapter into buffers a test lays out, for
 * the tests of how the library writes caller memory (test_user_memory,
 * test_fault_guard).
 */
#ifndef KMTSHIM_TEST_QAI_BUFFER_H
#define KMTSHIM_TEST_QAI_BUFFER_H

#include "test_util.h"

/* Opens the soft adapter the queries go to. */
void qai_open_soft(void);
NTSTATUS qai_query(KMTQUERYADAPTERINFOTYPE type, void *data, UINT size);
/* The adapter's DRIVERVERSION, asked with a zeroed stack buffer: the
 * answer differs from the buffer, so it is written back. */
D3DKMT_DRIVERVERSION qai_driver_version(void);
/* A zeroed page of its own, then given `prot`. */
void *qai_page_with(int prot);

#endif /* KMTSHIM_TEST_QAI_BUFFER_H */
