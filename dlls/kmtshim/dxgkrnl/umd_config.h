/*
 * Configuration of the user-mode drivers an adapter names: what
 * QueryAdapterInfo(UMDRIVERNAME), (UMOPENGLINFO) and (QUERYREGISTRY)
 * answer.  On Windows the INF writes these into the registry; here a file
 * and the environment do (registry values: the file only).
 * The miniport's own names are the default; docs/umd.md has the format.
 *
 *   file:  $KMTSHIM_CONFIG (empty: no file), else
 *          $XDG_CONFIG_HOME/kmtshim/kmtshim.conf ($HOME/.config when unset),
 *          else /etc/kmtshim/kmtshim.conf -- the first that exists
 *   environment (after the file, every adapter): KMTSHIM_UMD_NAME,
 *          KMTSHIM_OPENGL_ICD, KMTSHIM_OPENGL_VERSION, KMTSHIM_OPENGL_FLAGS
 */
#ifndef KMTSHIM_DXGK_UMD_CONFIG_H
#define KMTSHIM_DXGK_UMD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "kmtshim/d3dkmddi.h"
#include "kmtshim/d3dkmthk.h"

/* A value a program reads with QueryAdapterInfo(KMTQAITYPE_QUERYREGISTRY):
 * the "registry.NAME[:TYPE] = ..." keys of the adapter's sections.  The
 * data is what Windows would store: UTF-16 strings with their NULs
 * (REG_MULTI_SZ ending in two), little-endian numbers. */
struct dxgk_reg_value {
    struct dxgk_reg_value *next;
    ULONG key;                           /* D3DDDI_QUERYREGISTRY_ADAPTERKEY or _SERVICEKEY */
    WCHAR name[MAX_PATH];                /* NUL-terminated */
    ULONG type;                          /* REG_SZ, REG_MULTI_SZ, REG_DWORD, REG_QWORD */
    ULONG size;                          /* bytes in data */
    BYTE data[];
};

/* What a section header can select an adapter by. */
struct dxgk_config_match {
    const char *miniport;               /* "soft", "drm", a plugin's name */
    UINT vendor_id;
    UINT device_id;
    LUID luid;
};

/* Applies the file and then the environment to `desc`.  A bad file or line
 * is reported (err:dxgk) and skipped; this never fails. */
/* *values receives the registry values the file gives the adapter (NULL:
 * none), freed with dxgk_config_free_registry.  A later section's value
 * replaces an earlier one of the same key and name. */
void dxgk_config_apply(KMT_ADAPTER_DESC *desc, const struct dxgk_config_match *match,
                       struct dxgk_reg_value **values);
unsigned dxgk_config_registry_text(const char *text, size_t len, const char *origin,
                                   const struct dxgk_config_match *match,
                                   struct dxgk_reg_value **values);
void dxgk_config_free_registry(struct dxgk_reg_value *values);
/* The value of key `key` called `name` (compared without regard to ASCII
 * case, as the registry does), or NULL. */
const struct dxgk_reg_value *dxgk_config_find_registry(const struct dxgk_reg_value *values,
                                                       ULONG key, const WCHAR *name);

/* The steps, for tests.  Each returns how many lines or variables it had to
 * ignore.  `origin` names the text in messages. */
unsigned dxgk_config_apply_text(const char *text, size_t len, const char *origin,
                                const struct dxgk_config_match *match, KMT_ADAPTER_DESC *desc);
unsigned dxgk_config_apply_env(KMT_ADAPTER_DESC *desc);
/* The file dxgk_config_apply reads; false when there is none. */
bool dxgk_config_path(char *buf, size_t size);

/* UTF-8 -> NUL-terminated UTF-16 in out[cap]; false if invalid or too long. */
bool dxgk_config_utf8_to_utf16(const char *s, size_t len, WCHAR *out, size_t cap);

#endif /* KMTSHIM_DXGK_CONFIG_H */
