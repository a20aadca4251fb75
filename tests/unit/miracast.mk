# Unit tests of the Miracast sessions: the DDI class contract (a recording
# miniport wrapped around the soft one) and the soft adapter's virtual sink.

KMT_MIRACAST_TESTS = tests/unit/test_miracast

check_PROGRAMS += $(KMT_MIRACAST_TESTS)
TESTS += $(KMT_MIRACAST_TESTS)

tests_unit_test_miracast_SOURCES = tests/unit/test_miracast.c
tests_unit_test_miracast_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_miracast_LDADD = $(KMT_UNIT_LDADD)
