/*
 * detect.h - the detection room: backends fill a struct cfapkg_machine,
 * select.c picks the GPU and names it from gpus.json.
 */
#ifndef CFA_DETECT_H
#define CFA_DETECT_H

#include "core/ctx.h"

/* Linux, or any OS given CFAPKG_SYSROOT: reads root/sys, root/proc, root/opt. */
enum cfapkg_err cfa_detect_sysfs(struct cfapkg_ctx *ctx, const char *root,
                                 struct cfapkg_machine *m);
/* Windows: DXGI, registry, System32, HIP SDK folders (platform/). */
enum cfapkg_err cfa_detect_windows(struct cfapkg_ctx *ctx, struct cfapkg_machine *m);

/* struct cfapkg_machine has fixed fields (it is public).  Descriptive text
 * too long for one (a warning, a product name) is cut with a visible
 * "..." (cfa_fit_text); a value the machine acts on (a path, a version, a
 * target) is never cut: it is left out, with a warning naming it whole. */
void cfa_machine_warn(struct cfapkg_machine *m, const char *fmt, ...) CFA_PRINTF(2, 3);
/* Copies a value into a field: false, the field "" (unknown) and a warning
 * naming what and the value, when it does not fit. */
bool cfa_machine_set(struct cfapkg_machine *m, char *dst, size_t len, const char *what,
                     const char *value);
/* Adds a GPU; NULL when the table is full (a warning says so). */
struct cfapkg_gpu *cfa_machine_add_gpu(struct cfapkg_machine *m);
void cfa_machine_add_runtime(struct cfapkg_machine *m, unsigned major, const char *file);
void cfa_machine_add_sdk(struct cfapkg_machine *m, const char *version, const char *path,
                         const char *source);
/* "gfx" + major + minor and stepping as hex digits, from a KFD
 * gfx_target_version (120001 -> gfx1201) or HSA_OVERRIDE_GFX_VERSION
 * ("11.0.0" -> gfx1100).  False when it does not decode. */
bool cfa_gfx_from_kfd(unsigned long v, char out[16]);
bool cfa_gfx_from_override(const char *s, char out[16]);

/* hipinfo.c: the gcnArchName and totalGlobalMem of each device block of
 * hipInfo's output, in order.  Returns how many devices were found. */
struct cfa_hipinfo_device {
	char name[128];
	char gfx[16];
	uint64_t memory;
};
size_t cfa_hipinfo_parse(const char *text, struct cfa_hipinfo_device *out, size_t max);

/* windows.c: the Adrenalin release of a Windows DriverVersion, or NULL;
 * vendor, device and revision (-1 if absent) of a PCI hardware id. */
const char *cfa_adrenalin_of(const char *driver_version);
bool cfa_parse_hwid(const char *id, uint16_t *vendor, uint16_t *device, int *revision);

#endif
