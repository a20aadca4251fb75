# A flip present racing with DestroyDevice of its device: the program is
# linked with --wrap=dxgk_flip_devices_gone, where the destroy runs.

check_PROGRAMS += tests/unit/test_present_destroy
TESTS += tests/unit/test_present_destroy

tests_unit_test_present_destroy_SOURCES = tests/unit/test_present_destroy.c $(KMT_EXEC_UTIL)
tests_unit_test_present_destroy_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_present_destroy_LDFLAGS = -Wl,--wrap=dxgk_flip_devices_gone
tests_unit_test_present_destroy_LDADD = $(KMT_UNIT_LDADD)
