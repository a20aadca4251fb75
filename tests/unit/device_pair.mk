# CreateDevice + DestroyDevice: no system call per pair, and nothing left
# behind by pairs on several threads.

check_PROGRAMS += tests/unit/test_device_pair
TESTS += tests/unit/test_device_pair

tests_unit_test_device_pair_SOURCES = tests/unit/test_device_pair.c tests/unit/syscall_trap.c tests/unit/syscall_trap.h
tests_unit_test_device_pair_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_device_pair_LDADD = $(KMT_UNIT_LDADD)
