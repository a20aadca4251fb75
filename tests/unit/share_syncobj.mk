# Sync objects shared across processes: the test and the second program it
# spawns (tests/unit/test_share_syncobj.c).

check_PROGRAMS += tests/unit/test_share_syncobj tests/unit/share_syncobj_peer
TESTS += tests/unit/test_share_syncobj

tests_unit_test_share_syncobj_SOURCES = tests/unit/test_share_syncobj.c $(KMT_EXEC_UTIL)
tests_unit_test_share_syncobj_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_share_syncobj_LDADD = $(KMT_UNIT_LDADD)

tests_unit_share_syncobj_peer_SOURCES = tests/unit/share_syncobj_peer.c $(KMT_EXEC_UTIL)
tests_unit_share_syncobj_peer_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_share_syncobj_peer_LDADD = $(KMT_UNIT_LDADD)
