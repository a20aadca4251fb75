# The session broker across processes: the tests and the peer program they
# start (tests/unit/broker_peer.c).

KMT_BROKER_TESTS = \
	tests/unit/test_broker \
	tests/unit/test_broker_nt \
	tests/unit/test_broker_failure \
	tests/unit/test_broker_limits \
	tests/unit/test_broker_death

check_PROGRAMS += $(KMT_BROKER_TESTS) tests/unit/broker_peer
TESTS += $(KMT_BROKER_TESTS)

KMT_BROKER_TEST_UTIL = tests/unit/broker_util.c tests/unit/broker_util.h tests/unit/fd_pass.h

tests_unit_test_broker_SOURCES = tests/unit/test_broker.c $(KMT_BROKER_TEST_UTIL)
tests_unit_test_broker_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_broker_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_broker_nt_SOURCES = tests/unit/test_broker_nt.c $(KMT_BROKER_TEST_UTIL)
tests_unit_test_broker_nt_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_broker_nt_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_broker_failure_SOURCES = tests/unit/test_broker_failure.c $(KMT_BROKER_TEST_UTIL)
tests_unit_test_broker_failure_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_broker_failure_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_broker_limits_SOURCES = tests/unit/test_broker_limits.c $(KMT_BROKER_TEST_UTIL)
tests_unit_test_broker_limits_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_broker_limits_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_broker_death_SOURCES = tests/unit/test_broker_death.c $(KMT_BROKER_TEST_UTIL) \
	$(KMT_SHARE_RESOURCE_UTIL) $(KMT_EXEC_UTIL) $(KMT_SHARED_STATE_PROBE)
tests_unit_test_broker_death_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_broker_death_LDADD = $(KMT_UNIT_LDADD)
# hooks in the library's mapping of a shared page and its look at a
# shared sync object's state (test_broker_death.c); its peer program is
# legacy_sync_peer (share_legacy_sync.mk)
tests_unit_test_broker_death_LDFLAGS = -Wl,--wrap=mmap -Wl,--wrap=dxgk_shared_state_ready

tests_unit_broker_peer_SOURCES = tests/unit/broker_peer.c
tests_unit_broker_peer_LDADD = libkmtcore.la $(PTHREAD_LIBS)
