# Out of memory at every allocation of each D3DKMT call (fail_alloc.h): the
# program is linked with --wrap for each allocator the library calls.

# (KMT_FAIL_ALLOC, KMT_FAIL_ALLOC_LDFLAGS: tests/Makefile.inc, the fuzzer uses them too)

check_PROGRAMS += tests/unit/test_out_of_memory
TESTS += tests/unit/test_out_of_memory

tests_unit_test_out_of_memory_SOURCES = tests/unit/test_out_of_memory.c $(KMT_FAIL_ALLOC) $(KMT_EXEC_UTIL)
tests_unit_test_out_of_memory_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_out_of_memory_LDFLAGS = $(KMT_FAIL_ALLOC_LDFLAGS)
tests_unit_test_out_of_memory_LDADD = $(KMT_UNIT_LDADD)
