# Unit tests of the UMD / OpenGL ICD configuration (dxgkrnl/umd_config.c) and of
# the QueryAdapterInfo answers it shapes.  Uses the recording miniport, whose
# own UMD names must stay the default.

check_PROGRAMS += tests/unit/test_config
TESTS += tests/unit/test_config

tests_unit_test_config_SOURCES = tests/unit/test_config.c
tests_unit_test_config_CPPFLAGS = $(KMT_CONTRACT_CPPFLAGS)
tests_unit_test_config_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_config_LDADD = $(KMT_CONTRACT_LDADD)
