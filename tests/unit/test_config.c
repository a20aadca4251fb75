/*
 * The UMD / OpenGL ICD configuration (dlls/kmtshim/dxgkrnl/umd_config.c): the
 * parser on its own, then QueryAdapterInfo(UMDRIVERNAME / UMOPENGLINFO)
 * answering from a file and the environment on the software adapter and
 * on the recording miniport (whose own names are the default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "contract_util.h"
#include "dxgkrnl/umd_config.h"
#include "base/kmt_debug.h"

static const struct dxgk_config_match soft_match = {
    .miniport = "soft", .vendor_id = 0x1414, .device_id = 0x008c,
    .luid = { .LowPart = 0x23e0c9f7, .HighPart = 0x0f4b7d98 },  /* the software adapter's */
};

static unsigned apply(const char *text, KMT_ADAPTER_DESC *desc)
{
    return dxgk_config_apply_text(text, strlen(text), "test.conf", &soft_match, desc);
}

static KMT_ADAPTER_DESC empty_desc(void)
{
    KMT_ADAPTER_DESC d;

    memset(&d, 0, sizeof(d));
    return d;
}

/* Parse errors are expected in these cases: keep stderr readable. */
static void quiet(void)
{
    setenv("KMTSHIM_DEBUG", "-all", 1);
    kmt_debug_reset();
}

static void set_wide(WCHAR *dst, const char *src)
{
    size_t i = 0;

    for (; src[i]; i++)
        dst[i] = (unsigned char)src[i];
    dst[i] = 0;
}

/* ---- the parser ------------------------------------------------------------------ */

START_TEST(parse_adapter_section_applies_to_every_adapter)
{
    KMT_ADAPTER_DESC d = empty_desc();

    ck_assert_uint_eq(apply("[adapter]\numd_dx9 = C:\\drivers\\umd9.dll\n", &d), 0);
    ck_assert(rec_wide_equals(d.UmdFileName[KMTUMDVERSION_DX9], "C:\\drivers\\umd9.dll"));
    ck_assert_uint_eq(d.UmdFileName[KMTUMDVERSION_DX10][0], 0);
    ck_assert_uint_eq(d.UmdFileName[KMTUMDVERSION_DX11][0], 0);
    ck_assert_uint_eq(d.UmdFileName[KMTUMDVERSION_DX12][0], 0);
    ck_assert_uint_eq(d.OpenGlIcdFileName[0], 0);
}
END_TEST

START_TEST(parse_every_key)
{
    KMT_ADAPTER_DESC d = empty_desc();
    const char *text =
        "[adapter]\n"
        "umd_dx9 = a9.dll\n"
        "umd_dx10 = a10.dll\n"
        "umd_dx11 = a11.dll\n"
        "umd_dx12 = a12.dll\n"
        "opengl_icd = C:\\gl\\icd64.dll\n"
        "opengl_version = 0x1100\n"
        "opengl_flags = 3\n";

    ck_assert_uint_eq(apply(text, &d), 0);
    ck_assert(rec_wide_equals(d.UmdFileName[0], "a9.dll"));
    ck_assert(rec_wide_equals(d.UmdFileName[1], "a10.dll"));
    ck_assert(rec_wide_equals(d.UmdFileName[2], "a11.dll"));
    ck_assert(rec_wide_equals(d.UmdFileName[3], "a12.dll"));
    ck_assert(rec_wide_equals(d.OpenGlIcdFileName, "C:\\gl\\icd64.dll"));
    ck_assert_uint_eq(d.OpenGlVersion, 0x1100);
    ck_assert_uint_eq(d.OpenGlFlags, 3);
}
END_TEST

START_TEST(parse_umd_sets_all_versions_and_empty_clears)
{
    KMT_ADAPTER_DESC d = empty_desc();

    ck_assert_uint_eq(apply("[adapter]\numd = all.dll\numd_dx12 =\n", &d), 0);
    for (unsigned v = 0; v < KMTUMDVERSION_DX12; v++)
        ck_assert(rec_wide_equals(d.UmdFileName[v], "all.dll"));
    ck_assert_uint_eq(d.UmdFileName[KMTUMDVERSION_DX12][0], 0);
}
END_TEST

START_TEST(parse_selectors)
{
    static const struct {
        const char *header;
        bool applies;
    } cases[] = {
        { "[adapter miniport=soft]", true },
        { "[adapter miniport=SOFT]", true },              /* names compare without case */
        { "[adapter miniport=drm]", false },
        { "[adapter pci=1414:008c]", true },
        { "[adapter pci=1414:008C]", true },
        { "[adapter pci=1414:*]", true },
        { "[adapter pci=8086:*]", false },
        { "[adapter pci=1414:008d]", false },
        { "[adapter luid=0f4b7d98:23e0c9f7]", true },
        { "[adapter luid=23e0c9f7:0f4b7d98]", false },    /* HighPart first */
        { "[adapter miniport=soft pci=1414:008c]", true },
        { "[adapter miniport=soft pci=10de:*]", false },  /* every selector must match */
        { "[ adapter   miniport=soft ]", true },
        { "[Adapter]", true },
    };

    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        KMT_ADAPTER_DESC d = empty_desc();
        char text[256];

        snprintf(text, sizeof(text), "%s\numd_dx11 = x.dll\n", cases[i].header);
        ck_assert_msg(apply(text, &d) == 0, "%s: problems", cases[i].header);
        ck_assert_msg(rec_wide_equals(d.UmdFileName[KMTUMDVERSION_DX11], cases[i].applies ? "x.dll" : ""),
                      "%s: applied %d, expected %d", cases[i].header,
                      d.UmdFileName[KMTUMDVERSION_DX11][0] != 0, cases[i].applies);
    }
}
END_TEST

START_TEST(parse_later_sections_override_earlier)
{
    KMT_ADAPTER_DESC d = empty_desc();
    const char *text =
        "[adapter]\n"
        "umd_dx9 = general.dll\n"
        "opengl_version = 1\n"
        "[adapter miniport=soft]\n"
        "umd_dx9 = soft.dll\n"
        "[adapter miniport=drm]\n"
        "umd_dx9 = drm.dll\n"
        "opengl_version = 7\n";

    ck_assert_uint_eq(apply(text, &d), 0);
    ck_assert(rec_wide_equals(d.UmdFileName[0], "soft.dll"));
    ck_assert_uint_eq(d.OpenGlVersion, 1);
}
END_TEST

START_TEST(parse_blanks_comments_quotes_crlf)
{
    KMT_ADAPTER_DESC d = empty_desc();
    const char *text =
        "# a comment\r\n"
        "   ; another = not a key\r\n"
        "\r\n"
        "\t[adapter]\t\r\n"
        "  umd_dx9\t=   \"  C:\\Program Files\\umd.dll  \"  \r\n"
        "opengl_icd=C:\\a#b;c.dll\r\n"
        "opengl_flags = 010";                             /* octal, no final newline */

    ck_assert_uint_eq(apply(text, &d), 0);
    ck_assert(rec_wide_equals(d.UmdFileName[0], "  C:\\Program Files\\umd.dll  "));
    ck_assert(rec_wide_equals(d.OpenGlIcdFileName, "C:\\a#b;c.dll"));
    ck_assert_uint_eq(d.OpenGlFlags, 8);
}
END_TEST

START_TEST(parse_utf8_paths_become_utf16)
{
    KMT_ADAPTER_DESC d = empty_desc();
    /* ö (2 bytes), € (3 bytes), U+1D11E (4 bytes: a surrogate pair) */
    static const WCHAR want[] = { 'C', ':', '\\', 0x00f6, 0x20ac, 0xd834, 0xdd1e, '.', 'd', 'l', 'l', 0 };

    ck_assert_uint_eq(apply("[adapter]\nopengl_icd = C:\\\xc3\xb6\xe2\x82\xac\xf0\x9d\x84\x9e.dll\n", &d), 0);
    ck_assert_int_eq(memcmp(d.OpenGlIcdFileName, want, sizeof(want)), 0);
}
END_TEST

START_TEST(parse_bad_lines_are_counted_and_skipped)
{
    static const struct {
        const char *text;
        unsigned problems;
    } cases[] = {
        { "umd_dx9 = early.dll\n", 1 },                             /* before any section */
        { "[adapter]\nunknown_key = 1\n", 1 },
        { "[adapter]\njust words\n", 1 },
        { "[adapter]\nopengl_version = twelve\n", 1 },
        { "[adapter]\nopengl_version = 0x100000000\n", 1 },         /* past 32 bits */
        { "[adapter]\nopengl_version = -1\n", 1 },
        { "[adapter]\nopengl_version =\n", 1 },
        { "[adaptor]\numd_dx9 = x.dll\n", 1 },                      /* header only */
        { "[adapter colour=red]\numd_dx9 = x.dll\n", 1 },
        { "[adapter miniport=]\n", 1 },
        { "[adapter pci=1414]\n", 1 },
        { "[adapter pci=xyz:1]\n", 1 },
        { "[adapter luid=1:*]\n", 1 },                              /* no wildcard for LUIDs */
        { "[adapter\n", 1 },
        { "[adapter]\numd_dx9 = \xc3\x28.dll\n", 1 },               /* invalid UTF-8 */
        { "[adapter]\numd_dx9 = \xc0\xaf.dll\n", 1 },               /* overlong */
        { "[adapter]\numd_dx9 = \xed\xa0\x80.dll\n", 1 },           /* a surrogate */
        { "[adapter miniport=drm]\nbogus = 1\n", 1 },               /* checked in other sections too */
    };

    quiet();
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        KMT_ADAPTER_DESC d = empty_desc();

        ck_assert_msg(apply(cases[i].text, &d) == cases[i].problems, "case %u: %u problems", i,
                      apply(cases[i].text, &d));
        ck_assert_msg(d.UmdFileName[0][0] == 0 && d.OpenGlVersion == 0, "case %u changed the adapter", i);
    }
}
END_TEST

START_TEST(parse_keys_after_a_bad_header_go_nowhere)
{
    KMT_ADAPTER_DESC d = empty_desc();
    const char *text =
        "[adapter]\n"
        "umd_dx9 = good.dll\n"
        "[adapter miniport=soft bogus]\n"
        "umd_dx9 = must_not_apply.dll\n"
        "[adapter]\n"
        "umd_dx10 = after.dll\n";

    quiet();
    ck_assert_uint_eq(apply(text, &d), 1);
    ck_assert(rec_wide_equals(d.UmdFileName[0], "good.dll"));
    ck_assert(rec_wide_equals(d.UmdFileName[1], "after.dll"));
}
END_TEST

START_TEST(parse_limits)
{
    KMT_ADAPTER_DESC d = empty_desc();
    char name[MAX_PATH + 32], text[8192];
    static const char nul_text[] = "[adapter]\numd_dx9 = a\0b.dll\numd_dx10 = ok.dll\n";

    quiet();
    /* MAX_PATH - 1 UTF-16 units fit, MAX_PATH do not */
    memset(name, 'n', MAX_PATH - 1);
    name[MAX_PATH - 1] = 0;
    snprintf(text, sizeof(text), "[adapter]\numd_dx9 = %s\n", name);
    ck_assert_uint_eq(apply(text, &d), 0);
    ck_assert_uint_eq(d.UmdFileName[0][MAX_PATH - 2], 'n');
    ck_assert_uint_eq(d.UmdFileName[0][MAX_PATH - 1], 0);
    memset(name, 'm', MAX_PATH);
    name[MAX_PATH] = 0;
    snprintf(text, sizeof(text), "[adapter]\numd_dx9 = %s\n", name);
    ck_assert_uint_eq(apply(text, &d), 1);
    ck_assert_uint_eq(d.UmdFileName[0][0], 'n');                    /* unchanged */
    /* a line longer than 4096 bytes */
    memset(text, ' ', sizeof(text));
    memcpy(text, "[adapter]\nopengl_flags = 5", 26);
    memcpy(text + 5000, "\nopengl_version = 9\n", 21);
    ck_assert_uint_eq(apply(text, &d), 1);
    ck_assert_uint_eq(d.OpenGlFlags, 0);
    ck_assert_uint_eq(d.OpenGlVersion, 9);
    /* a NUL inside a line */
    ck_assert_uint_eq(dxgk_config_apply_text(nul_text, sizeof(nul_text) - 1, "t", &soft_match, &d), 1);
    ck_assert(rec_wide_equals(d.UmdFileName[1], "ok.dll"));
    /* no text at all */
    ck_assert_uint_eq(dxgk_config_apply_text("", 0, "t", &soft_match, &d), 0);
}
END_TEST

START_TEST(env_overrides)
{
    KMT_ADAPTER_DESC d = empty_desc();

    quiet();
    set_wide(d.UmdFileName[KMTUMDVERSION_DX11], "from_file.dll");
    setenv("KMTSHIM_UMD_NAME", "/opt/umd/libumd.so", 1);
    setenv("KMTSHIM_OPENGL_ICD", "C:\\icd.dll", 1);
    setenv("KMTSHIM_OPENGL_VERSION", "0x2000", 1);
    setenv("KMTSHIM_OPENGL_FLAGS", "", 1);                          /* empty: unset */
    d.OpenGlFlags = 4;
    ck_assert_uint_eq(dxgk_config_apply_env(&d), 0);
    for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++)
        ck_assert(rec_wide_equals(d.UmdFileName[v], "/opt/umd/libumd.so"));
    ck_assert(rec_wide_equals(d.OpenGlIcdFileName, "C:\\icd.dll"));
    ck_assert_uint_eq(d.OpenGlVersion, 0x2000);
    ck_assert_uint_eq(d.OpenGlFlags, 4);
    setenv("KMTSHIM_OPENGL_FLAGS", "many", 1);
    setenv("KMTSHIM_UMD_NAME", "bad\xff", 1);
    ck_assert_uint_eq(dxgk_config_apply_env(&d), 2);
    ck_assert_uint_eq(d.OpenGlFlags, 4);
    ck_assert(rec_wide_equals(d.UmdFileName[0], "/opt/umd/libumd.so"));
}
END_TEST

/* ---- where the file is -------------------------------------------------------------- */

static char tmpdir[64];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/kmt-config.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(path_search_order)
{
    char path[512], want[512], dir[300];
    bool etc = access("/etc/kmtshim/kmtshim.conf", R_OK) == 0;

    make_tmpdir();
    setenv("KMTSHIM_CONFIG", "/some/where.conf", 1);
    ck_assert(dxgk_config_path(path, sizeof(path)));
    ck_assert_str_eq(path, "/some/where.conf");
    setenv("KMTSHIM_CONFIG", "", 1);                                /* empty: no file at all */
    ck_assert(!dxgk_config_path(path, sizeof(path)));

    unsetenv("KMTSHIM_CONFIG");
    setenv("XDG_CONFIG_HOME", tmpdir, 1);
    snprintf(dir, sizeof(dir), "%s/kmtshim", tmpdir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(want, sizeof(want), "%s/kmtshim.conf", dir);
    write_file(want, "[adapter]\n");
    ck_assert(dxgk_config_path(path, sizeof(path)));
    ck_assert_str_eq(path, want);

    /* relative XDG_CONFIG_HOME: $HOME/.config */
    setenv("XDG_CONFIG_HOME", "relative", 1);
    setenv("HOME", tmpdir, 1);
    snprintf(dir, sizeof(dir), "%s/.config", tmpdir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(dir, sizeof(dir), "%s/.config/kmtshim", tmpdir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(want, sizeof(want), "%s/kmtshim.conf", dir);
    write_file(want, "[adapter]\n");
    ck_assert(dxgk_config_path(path, sizeof(path)));
    ck_assert_str_eq(path, want);
    unlink(want);
    rmdir(dir);

    /* neither: /etc, if it has one */
    ck_assert(dxgk_config_path(path, sizeof(path)) == etc);
    if (etc)
        ck_assert_str_eq(path, "/etc/kmtshim/kmtshim.conf");
    snprintf(path, sizeof(path), "%s/kmtshim/kmtshim.conf", tmpdir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/kmtshim", tmpdir);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/.config", tmpdir);
    rmdir(path);
    ck_assert_int_eq(rmdir(tmpdir), 0);
}
END_TEST

/* ---- QueryAdapterInfo answers from the configuration ------------------------------------ */

static NTSTATUS qai(D3DKMT_HANDLE adapter, KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { adapter, type, data, size };

    return D3DKMTQueryAdapterInfo(&q);
}

static NTSTATUS umd_name(D3DKMT_HANDLE adapter, KMTUMDVERSION version, D3DKMT_UMDFILENAMEINFO *info)
{
    memset(info, 0xcc, sizeof(*info));
    info->Version = version;
    return qai(adapter, KMTQAITYPE_UMDRIVERNAME, info, sizeof(*info));
}

static char conf_path[96];

/* Points KMTSHIM_CONFIG at a new file holding `text`. */
static void use_config(const char *text)
{
    make_tmpdir();
    snprintf(conf_path, sizeof(conf_path), "%s/kmtshim.conf", tmpdir);
    write_file(conf_path, text);
    setenv("KMTSHIM_CONFIG", conf_path, 1);
}

static void drop_config(void)
{
    unlink(conf_path);
    rmdir(tmpdir);
}

START_TEST(qai_soft_without_configuration_names_nothing)
{
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    setenv("KMTSHIM_CONFIG", "", 1);
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++)
        ck_assert_status(umd_name(adapter, v, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_OBJECT_NAME_NOT_FOUND);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_soft_answers_from_the_file)
{
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    use_config("[adapter miniport=soft]\n"
               "umd_dx9 = C:\\windows\\system32\\kmtumd9.dll\n"
               "opengl_icd = C:\\windows\\system32\\kmticd.dll\n"
               "opengl_version = 0x1100\n"
               "opengl_flags = 0x3\n"
               "[adapter miniport=drm]\n"
               "umd_dx10 = drm10.dll\n");
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX9, &name), STATUS_SUCCESS);
    ck_assert_uint_eq(name.Version, KMTUMDVERSION_DX9);
    ck_assert(rec_wide_equals(name.UmdFileName, "C:\\windows\\system32\\kmtumd9.dll"));
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX10, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    memset(&gl, 0xcc, sizeof(gl));
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(gl.UmdOpenGlIcdFileName, "C:\\windows\\system32\\kmticd.dll"));
    ck_assert_uint_eq(gl.Version, 0x1100);
    ck_assert_uint_eq(gl.Flags, 3);
    /* the sizes stay exact */
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl) - 1), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
    drop_config();
}
END_TEST

START_TEST(qai_soft_matched_by_pci_and_luid)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_UMDFILENAMEINFO name;
    char text[256];
    LUID luid;

    setenv("KMTSHIM_CONFIG", "", 1);
    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    luid = info[0].AdapterLuid;
    kmt_test_shutdown_no_leaks();

    /* read again at the next start: the LUID is stable */
    snprintf(text, sizeof(text),
             "[adapter pci=1414:008c]\numd_dx11 = by_pci.dll\n"
             "[adapter luid=%08x:%08x]\numd_dx12 = by_luid.dll\n"
             "[adapter luid=%08x:%08x]\numd_dx9 = other_luid.dll\n",
             (unsigned)luid.HighPart, (unsigned)luid.LowPart,
             (unsigned)luid.HighPart, (unsigned)luid.LowPart + 1);
    use_config(text);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_int_eq(memcmp(&info[0].AdapterLuid, &luid, sizeof(luid)), 0);
    ck_assert_status(umd_name(info[0].hAdapter, KMTUMDVERSION_DX11, &name), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "by_pci.dll"));
    ck_assert_status(umd_name(info[0].hAdapter, KMTUMDVERSION_DX12, &name), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "by_luid.dll"));
    ck_assert_status(umd_name(info[0].hAdapter, KMTUMDVERSION_DX9, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    kmt_test_shutdown_no_leaks();
    drop_config();
}
END_TEST

START_TEST(qai_miniport_names_stay_the_default)
{
    struct record_config cfg;
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    /* record's own: DX11, DX12, an ICD (version 0x1100, flags 3) */
    use_config("[adapter miniport=record]\n"
               "umd_dx12 = C:\\override\\umd12.dll\n"
               "opengl_flags = 9\n"
               "[adapter miniport=soft]\n"
               "umd_dx11 = not_for_record.dll\n");
    record_default_config(&cfg);
    rec_use_config("record", &cfg);
    adapter = kmt_test_open_adapter();
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX11, &name), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "record_umd11.dll"));
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX12, &name), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "C:\\override\\umd12.dll"));
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX9, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(gl.UmdOpenGlIcdFileName, "record_icd.dll"));
    ck_assert_uint_eq(gl.Version, 0x1100);
    ck_assert_uint_eq(gl.Flags, 9);
    rec_finish();
    drop_config();
}
END_TEST

START_TEST(qai_configuration_clears_a_miniport_name)
{
    struct record_config cfg;
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    use_config("[adapter miniport=record]\numd_dx11 =\nopengl_icd = \"\"\n");
    record_default_config(&cfg);
    rec_use_config("record", &cfg);
    adapter = kmt_test_open_adapter();
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX11, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX12, &name), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "record_umd12.dll"));
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_OBJECT_NAME_NOT_FOUND);
    rec_finish();
    drop_config();
}
END_TEST

START_TEST(qai_environment_beats_the_file)
{
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    use_config("[adapter]\numd = from_file.dll\nopengl_icd = file_icd.dll\nopengl_version = 5\n");
    setenv("KMTSHIM_UMD_NAME", "Z:\\build\\reference_umd.dll", 1);
    setenv("KMTSHIM_OPENGL_ICD", "Z:\\build\\kmticd.dll", 1);
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++) {
        ck_assert_status(umd_name(adapter, v, &name), STATUS_SUCCESS);
        ck_assert(rec_wide_equals(name.UmdFileName, "Z:\\build\\reference_umd.dll"));
    }
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(gl.UmdOpenGlIcdFileName, "Z:\\build\\kmticd.dll"));
    ck_assert_uint_eq(gl.Version, 5);                               /* the file's: no override */
    kmt_test_shutdown_no_leaks();
    drop_config();
}
END_TEST

START_TEST(qai_bad_or_missing_file_changes_nothing)
{
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_HANDLE adapter;

    quiet();
    use_config("\x7f\x45\x4c\x46 binary garbage\n[adapter\numd_dx9 = x.dll\n");
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX9, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    kmt_test_shutdown_no_leaks();
    drop_config();

    setenv("KMTSHIM_CONFIG", "/nonexistent/kmtshim.conf", 1);
    adapter = kmt_test_open_adapter();
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX9, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- KMTQAITYPE_QUERYREGISTRY ----------------------------------------------------------- */

static unsigned reg_text(const char *text, struct dxgk_reg_value **values)
{
    *values = NULL;
    return dxgk_config_registry_text(text, strlen(text), "test.conf", &soft_match, values);
}

static const struct dxgk_reg_value *reg_find(const struct dxgk_reg_value *v, ULONG key, const char *name)
{
    WCHAR w[MAX_PATH];

    set_wide(w, name);
    return dxgk_config_find_registry(v, key, w);
}

/* Does the UTF-16 data hold exactly the ASCII units of `s` (NULs included)? */
static bool data_is(const void *data, ULONG size, const char *s, size_t n)
{
    const WCHAR *w = data;

    if (size != n * sizeof(WCHAR))
        return false;
    for (size_t i = 0; i < n; i++)
        if (w[i] != (unsigned char)s[i])
            return false;
    return true;
}

START_TEST(parse_registry_values)
{
    struct dxgk_reg_value *v;
    const struct dxgk_reg_value *r;
    KMT_ADAPTER_DESC d = empty_desc();
    UINT64 q;
    DWORD dw;

    ck_assert_uint_eq(reg_text("[adapter]\n"
                               "registry.VulkanDriverName = C:\\vk\\icd.json\n"
                               "registry.Layers:multi_sz = C:\\a.json | \" C:\\b c.json\"\n"
                               "registry.Flag:dword = 0x10\n"
                               "registry.Big:qword = 0x100000002\n"
                               "registry.Named:sz = \"quoted\"\n"
                               "registry.a:b = colon in the name\n"
                               "registry.Empty:multi_sz =\n"
                               "service.VulkanDriverName = service side\n"
                               "[adapter miniport=drm]\n"
                               "registry.Other = drm only\n", &v), 0);
    r = reg_find(v, D3DDDI_QUERYREGISTRY_ADAPTERKEY, "vulkandrivername");   /* any case */
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->type, REG_SZ);
    ck_assert(data_is(r->data, r->size, "C:\\vk\\icd.json", sizeof("C:\\vk\\icd.json")));
    r = reg_find(v, D3DDDI_QUERYREGISTRY_ADAPTERKEY, "Layers");
    ck_assert_uint_eq(r->type, REG_MULTI_SZ);
    ck_assert(data_is(r->data, r->size, "C:\\a.json\0 C:\\b c.json\0", sizeof("C:\\a.json\0 C:\\b c.json\0")));
    r = reg_find(v, D3DDDI_QUERYREGISTRY_ADAPTERKEY, "Flag");
    ck_assert_uint_eq(r->type, REG_DWORD);
    ck_assert_uint_eq(r->size, 4);
    memcpy(&dw, r->data, 4);
    ck_assert_uint_eq(dw, 0x10);
    r = reg_find(v, D3DDDI_QUERYREGISTRY_ADAPTERKEY, "Big");
    ck_assert_uint_eq(r->type, REG_QWORD);
    ck_assert_uint_eq(r->size, 8);
    memcpy(&q, r->data, 8);
    ck_assert(q == 0x100000002ull);
    r = reg_find(v, D3DDDI_QUERYREGISTRY_ADAPTERKEY, "Named");
    ck_assert(data_is(r->data, r->size, "quoted", sizeof("quoted")));
    r = reg_find(v, D3DDDI_QUERYREGISTRY_ADAPTERKEY, "a:b");
    ck_assert_uint_eq(r->type, REG_SZ);
    r = reg_find(v, D3DDDI_QUERYREGISTRY_ADAPTERKEY, "Empty");
    ck_assert(data_is(r->data, r->size, "", 1));            /* no strings: the list's NUL */
    r = reg_find(v, D3DDDI_QUERYREGISTRY_SERVICEKEY, "VulkanDriverName");
    ck_assert(data_is(r->data, r->size, "service side", sizeof("service side")));
    ck_assert_ptr_null(reg_find(v, D3DDDI_QUERYREGISTRY_ADAPTERKEY, "Other"));
    ck_assert_ptr_null(reg_find(v, D3DDDI_QUERYREGISTRY_SERVICEKEY, "Flag"));
    dxgk_config_free_registry(v);

    /* the description's own parse accepts the keys and keeps nothing of them */
    ck_assert_uint_eq(apply("[adapter]\nregistry.X:dword = 1\nservice.Y = z\n", &d), 0);
}
END_TEST

START_TEST(parse_registry_later_section_replaces)
{
    struct dxgk_reg_value *v;
    const struct dxgk_reg_value *r;

    ck_assert_uint_eq(reg_text("[adapter]\n"
                               "registry.Name = first\n"
                               "registry.Keep:dword = 7\n"
                               "[adapter miniport=soft]\n"
                               "registry.NAME:multi_sz = x | y\n", &v), 0);
    r = reg_find(v, D3DDDI_QUERYREGISTRY_ADAPTERKEY, "Name");
    ck_assert_uint_eq(r->type, REG_MULTI_SZ);
    ck_assert(data_is(r->data, r->size, "x\0y\0", sizeof("x\0y\0")));
    ck_assert_ptr_nonnull(reg_find(v, D3DDDI_QUERYREGISTRY_ADAPTERKEY, "Keep"));
    dxgk_config_free_registry(v);
}
END_TEST

START_TEST(parse_registry_bad_values)
{
    static const char *const bad[] = {
        "registry. = no name\n",
        "registry.:dword = 1\n",
        "registry.D:dword = 0x100000000\n",
        "registry.D:dword = -1\n",
        "registry.D:dword = one\n",
        "registry.D:dword =\n",
        "registry.Q:qword = 0x10000000000000000\n",
        "registry.M:multi_sz = a || b\n",
        "registry.M:multi_sz = a |\n",
        "registry.S = bad\xff\n",
        "registries.S = x\n",
    };
    struct dxgk_reg_value *v;

    quiet();
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[128];

        snprintf(text, sizeof(text), "[adapter]\n%s", bad[i]);
        ck_assert_msg(reg_text(text, &v) == 1, "%s", bad[i]);
        ck_assert_ptr_null(v);
    }
}
END_TEST

struct reg_query {
    D3DDDI_QUERYREGISTRY_INFO *info;
    UINT size;
};

/* A zeroed query for `name` with `extra` bytes of room past the structure. */
static struct reg_query reg_query(ULONG type, const char *name, UINT extra)
{
    struct reg_query q = { calloc(1, sizeof(D3DDDI_QUERYREGISTRY_INFO) + extra),
                           (UINT)sizeof(D3DDDI_QUERYREGISTRY_INFO) + extra };

    ck_assert_ptr_nonnull(q.info);
    q.info->QueryType = D3DDDI_QUERYREGISTRY_ADAPTERKEY;
    q.info->ValueType = type;
    set_wide(q.info->ValueName, name);
    return q;
}

/* The Khronos loader's sequence (loader_windows.c,
 * windows_read_manifest_from_d3d_adapters): the bare structure with
 * TranslatePath and REG_MULTI_SZ; on a failing status the same with
 * REG_SZ; on BUFFER_OVERFLOW again with sizeof(structure) +
 * OutputValueSize; the strings then up to the empty one.  Returns the
 * second call's structure (to free), NULL if the first did not overflow. */
static D3DDDI_QUERYREGISTRY_INFO *loader_query(D3DKMT_HANDLE adapter, const char *name, ULONG *type)
{
    D3DDDI_QUERYREGISTRY_INFO first, *full;
    UINT size;
    NTSTATUS status;

    memset(&first, 0, sizeof(first));
    first.QueryType = D3DDDI_QUERYREGISTRY_ADAPTERKEY;
    first.QueryFlags.TranslatePath = 1;
    first.ValueType = REG_MULTI_SZ;
    set_wide(first.ValueName, name);
    status = qai(adapter, KMTQAITYPE_QUERYREGISTRY, &first, sizeof(first));
    if (status != STATUS_SUCCESS) {
        first.ValueType = REG_SZ;
        status = qai(adapter, KMTQAITYPE_QUERYREGISTRY, &first, sizeof(first));
    }
    ck_assert_status(status, STATUS_SUCCESS);
    if (first.Status != D3DDDI_QUERYREGISTRY_STATUS_BUFFER_OVERFLOW)
        return NULL;
    ck_assert_uint_gt(first.OutputValueSize, 0);
    size = (UINT)sizeof(first) + first.OutputValueSize;
    ck_assert_ptr_nonnull(full = malloc(size));
    memset(full, 0xcc, size);
    memcpy(full, &first, sizeof(first));
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, full, size), STATUS_SUCCESS);
    ck_assert_uint_eq(full->Status, D3DDDI_QUERYREGISTRY_STATUS_SUCCESS);
    ck_assert_uint_eq(full->OutputValueSize, first.OutputValueSize);
    *type = full->ValueType;
    return full;
}

static const char registry_conf[] =
    "[adapter miniport=soft]\n"
    "registry.VulkanDriverName = C:\\Windows\\System32\\DriverStore\\kmtvk.json\n"
    "registry.VulkanImplicitLayers:multi_sz = C:\\layers\\one.json | C:\\layers\\two.json\n"
    "registry.OpenCLDriverName:multi_sz = C:\\cl\\kmtcl.dll\n"
    "registry.Tweak:dword = 0x2a\n"
    "registry.Big:qword = 0x123456789\n"
    "registry.A = ab\n";

START_TEST(qai_registry_the_loader_sequence)
{
    D3DDDI_QUERYREGISTRY_INFO *info;
    D3DKMT_HANDLE adapter;
    ULONG type;

    use_config(registry_conf);
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();

    /* REG_SZ: the REG_MULTI_SZ try fails, REG_SZ overflows, then the value */
    info = loader_query(adapter, "VulkanDriverName", &type);
    ck_assert_ptr_nonnull(info);
    ck_assert_uint_eq(type, REG_SZ);
    ck_assert(data_is(info->OutputString, info->OutputValueSize,
                      "C:\\Windows\\System32\\DriverStore\\kmtvk.json",
                      sizeof("C:\\Windows\\System32\\DriverStore\\kmtvk.json")));
    free(info);

    /* REG_MULTI_SZ: two strings, double-NUL terminated */
    info = loader_query(adapter, "VulkanImplicitLayers", &type);
    ck_assert_ptr_nonnull(info);
    ck_assert_uint_eq(type, REG_MULTI_SZ);
    ck_assert(data_is(info->OutputString, info->OutputValueSize, "C:\\layers\\one.json\0C:\\layers\\two.json\0",
                      sizeof("C:\\layers\\one.json\0C:\\layers\\two.json\0")));
    free(info);
    info = loader_query(adapter, "OpenCLDriverName", &type);
    ck_assert_ptr_nonnull(info);
    ck_assert(data_is(info->OutputString, info->OutputValueSize, "C:\\cl\\kmtcl.dll\0",
                      sizeof("C:\\cl\\kmtcl.dll\0")));
    free(info);

    /* a name the adapter does not have: STATUS_SUCCESS, Status FAIL */
    ck_assert_ptr_null(loader_query(adapter, "VulkanDriverNameWow", &type));

    kmt_test_shutdown_no_leaks();
    drop_config();
}
END_TEST

START_TEST(qai_registry_statuses)
{
    D3DDDI_QUERYREGISTRY_INFO info;
    struct reg_query q;
    D3DKMT_HANDLE adapter;
    UINT64 big;

    use_config(registry_conf);
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();

    /* numbers fit in the structure's own Output union */
    q = reg_query(REG_DWORD, "tweak", 0);
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->Status, D3DDDI_QUERYREGISTRY_STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->OutputValueSize, 4);
    ck_assert_uint_eq(q.info->OutputDword, 0x2a);
    free(q.info);
    q = reg_query(REG_QWORD, "Big", 0);
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->Status, D3DDDI_QUERYREGISTRY_STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->OutputValueSize, 8);
    big = q.info->OutputQword;
    ck_assert(big == 0x123456789ull);
    free(q.info);

    /* "ab" + NUL is 6 bytes: the union's 8 hold it without extra room */
    q = reg_query(REG_SZ, "A", 0);
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->Status, D3DDDI_QUERYREGISTRY_STATUS_SUCCESS);
    ck_assert(data_is(q.info->OutputString, q.info->OutputValueSize, "ab", 3));
    free(q.info);

    /* room one byte short: BUFFER_OVERFLOW with the size, nothing copied */
    q = reg_query(REG_SZ, "VulkanDriverName", 0);
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->Status, D3DDDI_QUERYREGISTRY_STATUS_BUFFER_OVERFLOW);
    {
        UINT need = q.info->OutputValueSize;
        UINT exact = (UINT)offsetof(D3DDDI_QUERYREGISTRY_INFO, OutputBinary) + need;
        struct reg_query r = reg_query(REG_SZ, "VulkanDriverName", need);

        ck_assert_uint_eq(need, sizeof("C:\\Windows\\System32\\DriverStore\\kmtvk.json") * 2);
        r.size = exact - 1;
        ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, r.info, r.size), STATUS_SUCCESS);
        ck_assert_uint_eq(r.info->Status, D3DDDI_QUERYREGISTRY_STATUS_BUFFER_OVERFLOW);
        ck_assert_uint_eq(r.info->OutputValueSize, need);
        r.size = exact;
        ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, r.info, r.size), STATUS_SUCCESS);
        ck_assert_uint_eq(r.info->Status, D3DDDI_QUERYREGISTRY_STATUS_SUCCESS);
        free(r.info);
    }
    free(q.info);

    /* unknown name: FAIL; the service key has its own values */
    q = reg_query(REG_SZ, "NoSuchValue", 64);
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->Status, D3DDDI_QUERYREGISTRY_STATUS_FAIL);
    q.info->QueryType = D3DDDI_QUERYREGISTRY_SERVICEKEY;
    set_wide(q.info->ValueName, "VulkanDriverName");
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->Status, D3DDDI_QUERYREGISTRY_STATUS_FAIL);
    /* no driver store: FAIL; a ValueType there is refused */
    q.info->QueryType = D3DDDI_QUERYREGISTRY_DRIVERSTOREPATH;
    q.info->ValueType = 0;
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->Status, D3DDDI_QUERYREGISTRY_STATUS_FAIL);
    q.info->ValueType = REG_SZ;
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_INVALID_PARAMETER);
    free(q.info);

    /* the wrong type is refused and nothing is written back */
    q = reg_query(REG_DWORD, "VulkanDriverName", 256);
    q.info->Status = 0x55;
    q.info->OutputValueSize = 0x66;
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(q.info->Status, 0x55);
    ck_assert_uint_eq(q.info->OutputValueSize, 0x66);
    q.info->ValueType = REG_MULTI_SZ;
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_INVALID_PARAMETER);

    /* bad input */
    q.info->ValueType = REG_SZ;
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, (UINT)sizeof(info) - 1),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, NULL, (UINT)sizeof(info)), STATUS_INVALID_PARAMETER);
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(qai(0xdead, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_INVALID_PARAMETER);
    q.info->QueryType = D3DDDI_QUERYREGISTRY_MAX;
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_INVALID_PARAMETER);
    q.info->QueryType = (D3DDDI_QUERYREGISTRY_TYPE)-1;
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_INVALID_PARAMETER);
    q.info->QueryType = D3DDDI_QUERYREGISTRY_ADAPTERKEY;
    q.info->PhysicalAdapterIndex = 1;                    /* the software adapter has one */
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_INVALID_PARAMETER);
    q.info->PhysicalAdapterIndex = 0;
    q.info->QueryFlags.Value = 4;                        /* a reserved bit */
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_INVALID_PARAMETER);
    q.info->QueryFlags.Value = 3;                        /* TranslatePath | MutableValue */
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->Status, D3DDDI_QUERYREGISTRY_STATUS_SUCCESS);
    for (unsigned i = 0; i < MAX_PATH; i++)              /* a name with no NUL */
        q.info->ValueName[i] = 'A';
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_INVALID_PARAMETER);
    free(q.info);

    kmt_test_shutdown_no_leaks();
    drop_config();
}
END_TEST

START_TEST(qai_registry_without_configuration)
{
    struct reg_query q;
    D3DKMT_HANDLE adapter;

    setenv("KMTSHIM_CONFIG", "", 1);
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    q = reg_query(REG_MULTI_SZ, "VulkanDriverName", 0);
    ck_assert_status(qai(adapter, KMTQAITYPE_QUERYREGISTRY, q.info, q.size), STATUS_SUCCESS);
    ck_assert_uint_eq(q.info->Status, D3DDDI_QUERYREGISTRY_STATUS_FAIL);
    free(q.info);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *parse = tcase_create("parse");
    TCase *qaitc = tcase_create("qai");

    tcase_add_test(parse, parse_adapter_section_applies_to_every_adapter);
    tcase_add_test(parse, parse_every_key);
    tcase_add_test(parse, parse_umd_sets_all_versions_and_empty_clears);
    tcase_add_test(parse, parse_selectors);
    tcase_add_test(parse, parse_later_sections_override_earlier);
    tcase_add_test(parse, parse_blanks_comments_quotes_crlf);
    tcase_add_test(parse, parse_utf8_paths_become_utf16);
    tcase_add_test(parse, parse_bad_lines_are_counted_and_skipped);
    tcase_add_test(parse, parse_keys_after_a_bad_header_go_nowhere);
    tcase_add_test(parse, parse_limits);
    tcase_add_test(parse, env_overrides);
    tcase_add_test(parse, path_search_order);
    tcase_add_test(qaitc, qai_soft_without_configuration_names_nothing);
    tcase_add_test(qaitc, qai_soft_answers_from_the_file);
    tcase_add_test(qaitc, qai_soft_matched_by_pci_and_luid);
    tcase_add_test(qaitc, qai_miniport_names_stay_the_default);
    tcase_add_test(qaitc, qai_configuration_clears_a_miniport_name);
    tcase_add_test(qaitc, qai_environment_beats_the_file);
    tcase_add_test(qaitc, qai_bad_or_missing_file_changes_nothing);
    tcase_add_test(parse, parse_registry_values);
    tcase_add_test(parse, parse_registry_later_section_replaces);
    tcase_add_test(parse, parse_registry_bad_values);
    tcase_add_test(qaitc, qai_registry_the_loader_sequence);
    tcase_add_test(qaitc, qai_registry_statuses);
    tcase_add_test(qaitc, qai_registry_without_configuration);
    suite_add_tcase(s, parse);
    suite_add_tcase(s, qaitc);
    return s;
}

int main(void)
{
    return kmt_test_run(config_suite());
}
