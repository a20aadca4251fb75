# Shared mutexes, semaphores and legacy fences across processes: the test
# and the peer program it starts (tests/unit/test_share_legacy_sync.c).

check_PROGRAMS += tests/unit/test_share_legacy_sync tests/unit/legacy_sync_peer
TESTS += tests/unit/test_share_legacy_sync
KMT_SHARED_STATE_PROBE = tests/unit/shared_state_probe.c tests/unit/shared_state_probe.h

tests_unit_test_share_legacy_sync_SOURCES = tests/unit/test_share_legacy_sync.c $(KMT_EXEC_UTIL) \
	$(KMT_SHARED_STATE_PROBE)
tests_unit_test_share_legacy_sync_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_share_legacy_sync_LDADD = $(KMT_UNIT_LDADD)

tests_unit_legacy_sync_peer_SOURCES = tests/unit/legacy_sync_peer.c $(KMT_EXEC_UTIL) $(KMT_SHARED_STATE_PROBE)
tests_unit_legacy_sync_peer_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_legacy_sync_peer_LDADD = $(KMT_UNIT_LDADD)
