/*
 * The UMD / OpenGL ICD configuration file and its environment overrides
 * (see umd_config.h and docs/umd.md).
 *
 *     # comment (a line whose first non-blank character is # or ;)
 *     [adapter]                             every adapter
 *     umd_dx9 = C:\drivers\myumd.dll
 *     [adapter miniport=soft]               selectors must all match
 *     [adapter pci=1414:008c]               vendor:device, hex; device may be *
 *     [adapter luid=00000000:0f4b7d98]      HighPart:LowPart, hex
 *     umd = C:\drivers\all_versions.dll     umd_dx9 .. umd_dx12 at once
 *     umd_dx12 =                            empty: this adapter names none
 *     opengl_icd = "C:\gl\icd64.dll"        quotes keep blanks at the ends
 *     opengl_version = 0x1100
 *     opengl_flags = 3
 *     registry.VulkanDriverName = C:\vk\icd.json          REG_SZ, the adapter key
 *     registry.VulkanImplicitLayers:multi_sz = C:\a.json | C:\b.json
 *     registry.Flag:dword = 1                 also :qword, :sz
 *     service.Name = ...                      the service key, same forms
 *
 * Matching sections apply in file order, so a later one overrides an
 * earlier one.  The text is parsed line by line straight into the adapter's
 * description and its list of registry values: nothing is kept between
 * adapters.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "umd_config.h"
#include "base/kmt_debug.h"

#define CONFIG_MAX_FILE (1u << 20)
#define CONFIG_MAX_LINE 4096u

/* ---- UTF-8 -> UTF-16 -------------------------------------------------------- */

/* Decodes one code point at s[*i]; false if the sequence is not valid UTF-8. */
static bool utf8_next(const unsigned char *s, size_t len, size_t *i, unsigned *cp)
{
    unsigned c = s[*i], need, min;

    if (c < 0x80) { *cp = c; (*i)++; return true; }
    if ((c & 0xe0) == 0xc0) { need = 1; min = 0x80; c &= 0x1f; }
    else if ((c & 0xf0) == 0xe0) { need = 2; min = 0x800; c &= 0x0f; }
    else if ((c & 0xf8) == 0xf0) { need = 3; min = 0x10000; c &= 0x07; }
    else return false;
    if (len - *i <= need)
        return false;
    for (unsigned k = 1; k <= need; k++) {
        if ((s[*i + k] & 0xc0) != 0x80)
            return false;
        c = (c << 6) | (s[*i + k] & 0x3f);
    }
    /* overlong forms, surrogates and values past Unicode are not characters */
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return false;
    *i += need + 1;
    *cp = c;
    return true;
}

bool dxgk_config_utf8_to_utf16(const char *s, size_t len, WCHAR *out, size_t cap)
{
    size_t i = 0, n = 0;
    unsigned cp;

    if (!cap)
        return false;
    while (i < len) {
        if (!utf8_next((const unsigned char *)s, len, &i, &cp) || !cp)
            return false;
        if (cp >= 0x10000) {
            if (n + 2 >= cap)
                return false;
            cp -= 0x10000;
            out[n++] = (WCHAR)(0xd800 | (cp >> 10));
            out[n++] = (WCHAR)(0xdc00 | (cp & 0x3ff));
        } else {
            if (n + 1 >= cap)
                return false;
            out[n++] = (WCHAR)cp;
        }
    }
    out[n] = 0;
    return true;
}

/* ---- small string helpers ---------------------------------------------------- */

struct span {
    const char *p;
    size_t n;
};

static struct span trim(struct span s)
{
    while (s.n && isspace((unsigned char)s.p[0])) { s.p++; s.n--; }
    while (s.n && isspace((unsigned char)s.p[s.n - 1])) s.n--;
    return s;
}

static bool span_is(struct span s, const char *word)
{
    return strlen(word) == s.n && !strncasecmp(s.p, word, s.n);
}

/* A whole span as an unsigned number (decimal, 0x hex or 0 octal). */
static bool parse_uint(struct span s, int base, UINT *out)
{
    char buf[32], *end;
    unsigned long long v;

    if (!s.n || s.n >= sizeof(buf) || s.p[0] == '-' || s.p[0] == '+')
        return false;
    memcpy(buf, s.p, s.n);
    buf[s.n] = 0;
    v = strtoull(buf, &end, base);
    if (*end || v > 0xffffffffull)
        return false;
    *out = (UINT)v;
    return true;
}

/* "A:B" as two hex numbers; B may be "*" when `wild` is given. */
static bool parse_pair(struct span s, UINT *a, UINT *b, bool *wild)
{
    const char *colon = memchr(s.p, ':', s.n);
    struct span left, right;

    if (!colon)
        return false;
    left = (struct span){ s.p, (size_t)(colon - s.p) };
    right = (struct span){ colon + 1, s.n - left.n - 1 };
    if (wild && span_is(right, "*")) {
        *wild = true;
        return parse_uint(left, 16, a);
    }
    return parse_uint(left, 16, a) && parse_uint(right, 16, b);
}

/* ---- section headers ---------------------------------------------------------------- */

/* One "name=value" selector of a section header: does the adapter match? */
static bool selector_matches(struct span sel, const struct dxgk_config_match *m, bool *ok)
{
    const char *eq = memchr(sel.p, '=', sel.n);
    struct span name, value;
    UINT a = 0, b = 0;
    bool wild = false;

    *ok = false;
    if (!eq)
        return false;
    name = trim((struct span){ sel.p, (size_t)(eq - sel.p) });
    value = trim((struct span){ eq + 1, sel.n - (size_t)(eq - sel.p) - 1 });
    if (span_is(name, "miniport")) {
        *ok = value.n > 0;
        return *ok && span_is(value, m->miniport ? m->miniport : "");
    }
    if (span_is(name, "pci")) {
        if (!(*ok = parse_pair(value, &a, &b, &wild)))
            return false;
        return a == m->vendor_id && (wild || b == m->device_id);
    }
    if (span_is(name, "luid")) {
        if (!(*ok = parse_pair(value, &a, &b, NULL)))
            return false;
        return a == (UINT)m->luid.HighPart && b == m->luid.LowPart;
    }
    return false;
}

/* "[adapter sel sel...]": false if malformed; *matches says whether it
 * selects this adapter. */
static bool parse_section(struct span line, const struct dxgk_config_match *m, bool *matches)
{
    struct span body;
    size_t i = 0;

    if (line.n < 2 || line.p[line.n - 1] != ']')
        return false;
    body = trim((struct span){ line.p + 1, line.n - 2 });
    while (i < body.n && !isspace((unsigned char)body.p[i]))
        i++;
    if (!span_is((struct span){ body.p, i }, "adapter"))
        return false;
    *matches = true;
    while (i < body.n) {
        size_t start;
        bool ok;

        while (i < body.n && isspace((unsigned char)body.p[i]))
            i++;
        start = i;
        while (i < body.n && !isspace((unsigned char)body.p[i]))
            i++;
        if (i == start)
            break;
        if (!selector_matches((struct span){ body.p + start, i - start }, m, &ok))
            *matches = false;
        if (!ok)
            return false;
    }
    return true;
}

/* ---- keys ------------------------------------------------------------------------------ */

static bool set_name(WCHAR *dst, struct span value)
{
    WCHAR tmp[MAX_PATH];

    if (!dxgk_config_utf8_to_utf16(value.p, value.n, tmp, MAX_PATH))
        return false;
    memcpy(dst, tmp, sizeof(tmp));
    return true;
}

static struct span unquote(struct span v)
{
    if (v.n >= 2 && v.p[0] == '"' && v.p[v.n - 1] == '"')
        return (struct span){ v.p + 1, v.n - 2 };
    return v;
}

/* ---- registry values ------------------------------------------------------------------- */

/* Longest string a registry value may hold, in UTF-16 units with the NUL:
 * a line is at most CONFIG_MAX_LINE bytes, so this is never the limit. */
#define REG_MAX_CHARS (CONFIG_MAX_LINE + 1)

static bool prefix_is(struct span s, const char *word, struct span *rest)
{
    size_t n = strlen(word);

    if (s.n < n || strncasecmp(s.p, word, n))
        return false;
    *rest = (struct span){ s.p + n, s.n - n };
    return true;
}

/* The text after "registry." or "service.": "NAME" or "NAME:TYPE" with
 * TYPE one of sz, multi_sz, dword, qword.  A name may itself hold colons;
 * only a known type word after the last one is a type. */
static bool parse_reg_name(struct span s, WCHAR *name, ULONG *type)
{
    static const struct { const char *word; ULONG type; } types[] = {
        { "sz", REG_SZ }, { "multi_sz", REG_MULTI_SZ }, { "dword", REG_DWORD }, { "qword", REG_QWORD },
    };
    const char *colon = NULL;

    for (size_t i = 0; i < s.n; i++)
        if (s.p[i] == ':')
            colon = s.p + i;
    *type = REG_SZ;
    if (colon) {
        struct span word = { colon + 1, s.n - (size_t)(colon + 1 - s.p) };

        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
            if (span_is(word, types[i].word)) {
                *type = types[i].type;
                s.n = (size_t)(colon - s.p);
                break;
            }
    }
    return s.n && dxgk_config_utf8_to_utf16(s.p, s.n, name, MAX_PATH);
}

/* Appends `text` as UTF-16 with its NUL at out[*n]. */
static bool append_string(struct span text, WCHAR *out, size_t cap, size_t *n)
{
    if (*n >= cap || !dxgk_config_utf8_to_utf16(text.p, text.n, out + *n, cap - *n))
        return false;
    while (out[*n])
        (*n)++;
    (*n)++;
    return true;
}

/* The data of a value as Windows stores it; NULL for a bad value. */
static struct dxgk_reg_value *parse_reg_value(const WCHAR *name, ULONG type, struct span value)
{
    struct dxgk_reg_value *v;
    WCHAR *chars = NULL;
    size_t n = 0, size;
    UINT64 number = 0;
    const void *data;

    if (type == REG_DWORD || type == REG_QWORD) {
        char buf[32], *end;

        if (!value.n || value.n >= sizeof(buf) || value.p[0] == '-' || value.p[0] == '+')
            return NULL;
        memcpy(buf, value.p, value.n);
        buf[value.n] = 0;
        errno = 0;
        number = strtoull(buf, &end, 0);
        if (*end || errno || (type == REG_DWORD && number > 0xffffffffull))
            return NULL;
        size = type == REG_DWORD ? 4 : 8;
        data = &number;                  /* little-endian: the low bytes first */
    } else {
        if (!(chars = malloc(REG_MAX_CHARS * sizeof(WCHAR))))
            return NULL;
        if (type == REG_SZ) {
            if (!append_string(unquote(value), chars, REG_MAX_CHARS, &n))
                goto bad;
        } else {
            /* "a | b | c": '|' cannot be part of a Windows path, so it
             * separates; each item is trimmed, quotes keep blanks */
            size_t pos = 0;

            while (value.n && pos <= value.n) {
                const char *bar = memchr(value.p + pos, '|', value.n - pos);
                size_t end = bar ? (size_t)(bar - value.p) : value.n;
                struct span item = unquote(trim((struct span){ value.p + pos, end - pos }));

                /* an empty item would end the list early */
                if (!item.n || !append_string(item, chars, REG_MAX_CHARS - 1, &n))
                    goto bad;
                pos = end + 1;
            }
            chars[n++] = 0;              /* the list's own terminator */
        }
        size = n * sizeof(WCHAR);
        data = chars;
    }
    if (!(v = malloc(sizeof(*v) + size)))
        goto bad;
    v->next = NULL;
    memcpy(v->name, name, sizeof(v->name));
    v->type = type;
    v->size = (ULONG)size;
    memcpy(v->data, data, size);
    free(chars);
    return v;
bad:
    free(chars);
    return NULL;
}

static bool same_name(const WCHAR *a, const WCHAR *b)
{
    for (size_t i = 0; i < MAX_PATH; i++) {
        WCHAR x = a[i], y = b[i];

        if (x >= 'a' && x <= 'z') x -= 'a' - 'A';
        if (y >= 'a' && y <= 'z') y -= 'a' - 'A';
        if (x != y)
            return false;
        if (!x)
            return true;
    }
    return false;
}

const struct dxgk_reg_value *dxgk_config_find_registry(const struct dxgk_reg_value *values,
                                                       ULONG key, const WCHAR *name)
{
    for (; values; values = values->next)
        if (values->key == key && same_name(values->name, name))
            return values;
    return NULL;
}

void dxgk_config_free_registry(struct dxgk_reg_value *values)
{
    while (values) {
        struct dxgk_reg_value *next = values->next;

        free(values);
        values = next;
    }
}

/* "registry.NAME[:TYPE] = data" (the adapter key) or "service.NAME..."
 * (the service key): checked always, stored when `values` is given, in
 * place of an earlier value of the same key and name. */
static bool apply_reg_key(struct span key, struct span value, struct dxgk_reg_value **values)
{
    struct dxgk_reg_value *v, **pp;
    WCHAR name[MAX_PATH];
    struct span rest;
    ULONG type, which;

    if (prefix_is(key, "registry.", &rest))
        which = D3DDDI_QUERYREGISTRY_ADAPTERKEY;
    else if (prefix_is(key, "service.", &rest))
        which = D3DDDI_QUERYREGISTRY_SERVICEKEY;
    else
        return false;
    if (!parse_reg_name(rest, name, &type) || !(v = parse_reg_value(name, type, value)))
        return false;
    v->key = which;
    if (!values) {
        free(v);
        return true;
    }
    for (pp = values; *pp; pp = &(*pp)->next)
        if ((*pp)->key == which && same_name((*pp)->name, name)) {
            struct dxgk_reg_value *old = *pp;

            v->next = old->next;
            *pp = v;
            free(old);
            return true;
        }
    *pp = v;
    return true;
}

/* Applies "key = value"; false for an unknown key or a bad value. */
static bool apply_key(struct span key, struct span value, KMT_ADAPTER_DESC *desc,
                      struct dxgk_reg_value **values)
{
    static const char *const umd_keys[NUM_KMTUMDVERSIONS] = { "umd_dx9", "umd_dx10", "umd_dx11", "umd_dx12" };
    struct span rest;

    if (prefix_is(key, "registry.", &rest) || prefix_is(key, "service.", &rest))
        return apply_reg_key(key, value, values);
    value = unquote(value);
    for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++)
        if (span_is(key, umd_keys[v]))
            return set_name(desc->UmdFileName[v], value);
    if (span_is(key, "umd")) {
        WCHAR name[MAX_PATH];

        if (!set_name(name, value))
            return false;
        for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++)
            memcpy(desc->UmdFileName[v], name, sizeof(name));
        return true;
    }
    if (span_is(key, "opengl_icd"))
        return set_name(desc->OpenGlIcdFileName, value);
    if (span_is(key, "opengl_version"))
        return parse_uint(value, 0, &desc->OpenGlVersion);
    if (span_is(key, "opengl_flags"))
        return parse_uint(value, 0, &desc->OpenGlFlags);
    return false;
}

/* ---- the text ------------------------------------------------------------------------------ */

enum section_state {
    SECTION_NONE,                        /* before the first header: keys belong nowhere */
    SECTION_BROKEN,                      /* after a bad header: its keys are dropped quietly */
    SECTION_SKIP,                        /* another adapter's: keys are checked, not applied */
    SECTION_APPLY,
};

static bool apply_line(struct span line, const struct dxgk_config_match *m, KMT_ADAPTER_DESC *desc,
                       struct dxgk_reg_value **values, enum section_state *state)
{
    KMT_ADAPTER_DESC scratch;
    const char *eq;
    bool matches = false;

    line = trim(line);
    if (!line.n || line.p[0] == '#' || line.p[0] == ';')
        return true;
    if (line.p[0] == '[') {
        if (!parse_section(line, m, &matches)) {
            *state = SECTION_BROKEN;     /* its keys must not land in the previous section */
            return false;
        }
        *state = matches ? SECTION_APPLY : SECTION_SKIP;
        return true;
    }
    if (*state == SECTION_BROKEN)
        return true;
    if (!(eq = memchr(line.p, '=', line.n)) || *state == SECTION_NONE)
        return false;
    /* the same checks whichever adapter reads the file */
    if (*state == SECTION_SKIP) {
        desc = &scratch;
        values = NULL;
    }
    return apply_key(trim((struct span){ line.p, (size_t)(eq - line.p) }),
                     trim((struct span){ eq + 1, line.n - (size_t)(eq - line.p) - 1 }), desc, values);
}

/* `values` NULL: registry keys are checked, not kept. */
static unsigned apply_text(const char *text, size_t len, const char *origin,
                           const struct dxgk_config_match *match, KMT_ADAPTER_DESC *desc,
                           struct dxgk_reg_value **values)
{
    enum section_state state = SECTION_NONE;
    unsigned problems = 0, lineno = 0;
    size_t pos = 0;

    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        struct span line = { text + pos, n };

        lineno++;
        pos += n + (nl ? 1 : 0);
        if (memchr(line.p, 0, line.n) || n > CONFIG_MAX_LINE ||
            !apply_line(line, match, desc, values, &state)) {
            ERR_(dxgk, "%s:%u: ignored: not a section, a known key with a valid value, or a comment\n",
                 origin, lineno);
            problems++;
        }
    }
    return problems;
}

unsigned dxgk_config_apply_text(const char *text, size_t len, const char *origin,
                                const struct dxgk_config_match *match, KMT_ADAPTER_DESC *desc)
{
    return apply_text(text, len, origin, match, desc, NULL);
}

unsigned dxgk_config_registry_text(const char *text, size_t len, const char *origin,
                                   const struct dxgk_config_match *match,
                                   struct dxgk_reg_value **values)
{
    KMT_ADAPTER_DESC scratch;

    memset(&scratch, 0, sizeof(scratch));
    return apply_text(text, len, origin, match, &scratch, values);
}

/* ---- the environment --------------------------------------------------------------------------- */

static unsigned env_name(const char *var, WCHAR *const *dst, unsigned count)
{
    const char *v = getenv(var);
    WCHAR name[MAX_PATH];

    if (!v || !*v)
        return 0;                        /* empty means unset */
    if (!dxgk_config_utf8_to_utf16(v, strlen(v), name, MAX_PATH)) {
        ERR_(dxgk, "%s ignored: not UTF-8, or longer than MAX_PATH\n", var);
        return 1;
    }
    for (unsigned i = 0; i < count; i++)
        memcpy(dst[i], name, sizeof(name));
    return 0;
}

static unsigned env_number(const char *var, ULONG *dst)
{
    const char *v = getenv(var);
    UINT n;

    if (!v || !*v)
        return 0;
    if (!parse_uint((struct span){ v, strlen(v) }, 0, &n)) {
        ERR_(dxgk, "%s=%s ignored: not a 32-bit number\n", var, v);
        return 1;
    }
    *dst = n;
    return 0;
}

unsigned dxgk_config_apply_env(KMT_ADAPTER_DESC *desc)
{
    WCHAR *umds[NUM_KMTUMDVERSIONS], *icd = desc->OpenGlIcdFileName;
    unsigned problems = 0;

    for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++)
        umds[v] = desc->UmdFileName[v];
    problems += env_name("KMTSHIM_UMD_NAME", umds, NUM_KMTUMDVERSIONS);
    problems += env_name("KMTSHIM_OPENGL_ICD", &icd, 1);
    problems += env_number("KMTSHIM_OPENGL_VERSION", &desc->OpenGlVersion);
    problems += env_number("KMTSHIM_OPENGL_FLAGS", &desc->OpenGlFlags);
    return problems;
}

/* ---- the file ------------------------------------------------------------------------------------ */

static bool readable(const char *path)
{
    FILE *f = fopen(path, "re");

    if (f)
        fclose(f);
    return f != NULL;
}

bool dxgk_config_path(char *buf, size_t size)
{
    const char *explicit = getenv("KMTSHIM_CONFIG");
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    int n;

    if (explicit) {
        n = snprintf(buf, size, "%s", explicit);
        return *explicit && n > 0 && (size_t)n < size;
    }
    /* XDG: an unset or relative XDG_CONFIG_HOME means $HOME/.config */
    if (xdg && xdg[0] == '/')
        n = snprintf(buf, size, "%s/kmtshim/kmtshim.conf", xdg);
    else
        n = home && home[0] == '/' ? snprintf(buf, size, "%s/.config/kmtshim/kmtshim.conf", home) : -1;
    if (n > 0 && (size_t)n < size && readable(buf))
        return true;
    n = snprintf(buf, size, "%s", "/etc/kmtshim/kmtshim.conf");
    return (size_t)n < size && readable(buf);
}

/* Reads at most CONFIG_MAX_FILE bytes; NULL (with a message) on failure. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "re");
    char *text;

    if (!f) {
        ERR_(dxgk, "cannot read the configuration file %s\n", path);
        return NULL;
    }
    if (!(text = malloc(CONFIG_MAX_FILE + 1))) {
        fclose(f);
        return NULL;
    }
    *len = fread(text, 1, CONFIG_MAX_FILE + 1, f);
    fclose(f);
    if (*len > CONFIG_MAX_FILE) {
        ERR_(dxgk, "%s: larger than %u bytes, ignored\n", path, CONFIG_MAX_FILE);
        free(text);
        return NULL;
    }
    return text;
}

void dxgk_config_apply(KMT_ADAPTER_DESC *desc, const struct dxgk_config_match *match,
                       struct dxgk_reg_value **values)
{
    char path[4096];
    size_t len = 0;
    char *text;

    *values = NULL;
    if (dxgk_config_path(path, sizeof(path)) && (text = read_file(path, &len))) {
        TRACE_(dxgk, "%s: applying %s (%zu bytes)\n", match->miniport, path, len);
        apply_text(text, len, path, match, desc, values);
        free(text);
    }
    dxgk_config_apply_env(desc);
}
