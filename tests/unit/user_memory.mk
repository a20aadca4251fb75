# Caller memory: the live-stack way without system calls, the kernel's way
# for everything else, and bad buffers refused.

check_PROGRAMS += tests/unit/test_user_memory
TESTS += tests/unit/test_user_memory

tests_unit_test_user_memory_SOURCES = tests/unit/test_user_memory.c tests/unit/syscall_trap.c tests/unit/syscall_trap.h \
	tests/unit/qai_buffer.c tests/unit/qai_buffer.h
tests_unit_test_user_memory_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_user_memory_LDADD = $(KMT_UNIT_LDADD)
