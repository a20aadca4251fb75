# The session broker across processes: the test and the peer program it
# starts (tests/unit/broker_peer.c).

check_PROGRAMS += tests/unit/test_broker tests/unit/broker_peer
TESTS += tests/unit/test_broker

tests_unit_test_broker_SOURCES = tests/unit/test_broker.c
tests_unit_test_broker_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_broker_LDADD = $(KMT_UNIT_LDADD)

tests_unit_broker_peer_SOURCES = tests/unit/broker_peer.c
tests_unit_broker_peer_LDADD = libkmtcore.la $(PTHREAD_LIBS)
