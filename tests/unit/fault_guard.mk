# The fault guard: heap buffers without system calls, bad ones refused,
# and the program's own SIGSEGV handling kept.

check_PROGRAMS += tests/unit/test_fault_guard
TESTS += tests/unit/test_fault_guard

tests_unit_test_fault_guard_SOURCES = tests/unit/test_fault_guard.c tests/unit/syscall_trap.c tests/unit/syscall_trap.h \
	tests/unit/qai_buffer.c tests/unit/qai_buffer.h
tests_unit_test_fault_guard_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_fault_guard_LDADD = $(KMT_UNIT_LDADD)
