# Keyed mutexes, in one process and across processes: the test and the
# peer program it starts (tests/unit/keyed_mutex_peer.c).

check_PROGRAMS += tests/unit/test_keyed_mutex tests/unit/keyed_mutex_peer
TESTS += tests/unit/test_keyed_mutex

tests_unit_test_keyed_mutex_SOURCES = tests/unit/test_keyed_mutex.c tests/unit/syscall_trap.c tests/unit/syscall_trap.h
tests_unit_test_keyed_mutex_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_keyed_mutex_LDADD = $(KMT_UNIT_LDADD)

tests_unit_keyed_mutex_peer_SOURCES = tests/unit/keyed_mutex_peer.c
tests_unit_keyed_mutex_peer_LDADD = libkmtcore.la $(PTHREAD_LIBS)
