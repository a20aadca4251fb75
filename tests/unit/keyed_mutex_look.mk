# A contended keyed-mutex acquire looks for the release before it sleeps
# when the owner runs on another CPU (tests/unit/test_keyed_mutex_look.c).

check_PROGRAMS += tests/unit/test_keyed_mutex_look
TESTS += tests/unit/test_keyed_mutex_look

tests_unit_test_keyed_mutex_look_SOURCES = tests/unit/test_keyed_mutex_look.c $(KMT_CPU_PIN)
tests_unit_test_keyed_mutex_look_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_keyed_mutex_look_LDADD = $(KMT_UNIT_LDADD)
