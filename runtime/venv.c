/*
 * venv.c - PyTorch in a Python virtual environment: where its torch
 * package is, which CUDA build it is (torch/version.py), and the CUDA
 * libraries that build loads, with the folder the loader takes each from.
 *
 * Windows wheels carry the CUDA DLLs in torch\lib (cublas64_11.dll,
 * cusparse64_11.dll, cufft64_10.dll, nvrtc64_112_0.dll for +cu118), and
 * torch loads the DLLs of that folder itself.  Linux wheels leave them to
 * the nvidia-* wheels: libtorch_cuda.so NEEDs libcublas.so.13 and the
 * rest by soname and finds them through its DT_RPATH
 * ($ORIGIN/../../nvidia/cu13/lib:...).  glibc searches a DT_RPATH before
 * LD_LIBRARY_PATH (only a DT_RUNPATH comes after it), so a ZLUDA folder
 * first on the library path is never asked; the folder the RPATH yields
 * first is where a stand-in must be.
 */
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/ctx.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"
#include "runtime/elf.h"
#include "runtime/venv.h"

#define MAX_LIBS 64
#define VERSION_PY_MAX (256u << 10) /* torch's is under 1 KiB */

struct family {
	const char *name;
	const char *dll;           /* Windows: the name before the version */
	const char *so;            /* Linux: the soname before the version */
	bool dll_zero;             /* the DLL's version is followed by "_0" (nvrtc64_112_0) */
};

/* The CUDA libraries ZLUDA stands in for, by the names the wheels give their
 * files on each OS. */
static const struct family families[] = {
	{"cublas", "cublas64_", "libcublas.so.", false},
	{"cublaslt", "cublasLt64_", "libcublasLt.so.", false},
	{"cusparse", "cusparse64_", "libcusparse.so.", false},
	{"cufft", "cufft64_", "libcufft.so.", false},
	{"cufftw", "cufftw64_", "libcufftw.so.", false},
	{"cudnn", "cudnn64_", "libcudnn.so.", false},
	{"nvrtc", "nvrtc64_", "libnvrtc.so.", true},
};

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

static bool prefix_nocase(const char *s, const char *p)
{
	while (*p && lower(*s) == lower(*p))
		s++, p++;
	return *p == '\0';
}

/* File names compare without case on Windows, whose file systems do; on Linux
 * "libcublas.so" and "LIBCUBLAS.SO" are two files. */
bool cfa_venv_same_name(const char *a, const char *b, bool windows)
{
	if (!windows)
		return strcmp(a, b) == 0;
	while (*a && lower(*a) == lower(*b))
		a++, b++;
	return *a == *b;
}

/* Digits at *s (at most 4); 0 when there are none. */
static size_t digits(const char *s, unsigned *value)
{
	size_t n = 0;
	uint64_t v = 0;

	while (n < 4 && s[n] >= '0' && s[n] <= '9')
		n++;
	/* At most four digits: they always parse, and fit an unsigned. */
	*value = n && cfa_parse_u64(s, n, 9999, &v) ? (unsigned)v : 0;
	return n;
}

/* "cublas64_11.dll", "nvrtc64_112_0.dll" (CUDA 11.2: the major is 11). */
static bool dll_match(const struct family *f, const char *name, unsigned *major)
{
	size_t n = strlen(f->dll), d;

	if (!prefix_nocase(name, f->dll) || !(d = digits(name + n, major)))
		return false;
	n += d;
	if (f->dll_zero && !prefix_nocase(name + n, "_0"))
		return false;
	n += f->dll_zero ? 2 : 0;
	/* Three digits are major and minor (nvrtc64_112: CUDA 11.2); two are
	 * the major alone. */
	if (d == 3)
		*major /= 10;
	return cfa_venv_same_name(name + n, ".dll", true);
}

/* "libcublas.so.13", "libnvrtc.so.11.2". */
static bool so_match(const struct family *f, const char *name, unsigned *major)
{
	size_t n = strlen(f->so), d;
	unsigned minor;

	if (strncmp(name, f->so, n) != 0 || !(d = digits(name + n, major)))
		return false;
	n += d;
	/* The minor after the major is optional: a wheel may NEED
	 * "libnvrtc.so.12" or "libnvrtc.so.11.2". */
	if (name[n] == '.' && (d = digits(name + n + 1, &minor)))
		n += 1 + d;
	return name[n] == '\0';
}

const char *cfa_venv_family(const char *name, bool windows, unsigned *major)
{
	size_t i;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (windows ? dll_match(&families[i], name, major) : so_match(&families[i], name, major))
			return families[i].name;
	return NULL;
}

/* What opening a venv finds, before it is copied into the venv's arena; libs
 * is a fixed array since a torch build loads a handful. */
struct finder {
	struct cfapkg_ctx *ctx;
	struct cfapkg_venv *v;
	char *torch;               /* root/site/torch (cfa_free) */
	struct cfapkg_torch_lib libs[MAX_LIBS];
	size_t nlibs;
	bool failed;               /* out of memory */
};

static char *keep(struct finder *f, const char *s)
{
	char *k = s ? cfa_arena_strdup(f->v->arena, s) : NULL;

	f->failed |= s && !k;
	return k;
}

static bool is_dir_at(const char *a, const char *b)
{
	char *p = cfa_aprintf("%s/%s", a, b);
	bool yes = p && cfa_plat_is_dir(p);

	cfa_free(p);
	return yes;
}

/* lib/python3.12/site-packages of a POSIX venv, the one holding torch. */
struct site_scan {
	const char *root;
	char *found;
	bool has_torch;            /* found holds torch */
};

/* A lib/pythonX.Y/site-packages that holds torch wins over one that does
 * not: a venv upgraded from one Python to another keeps both folders, and
 * the listing's order says nothing about which is in use. */
static int site_one(const char *name, void *arg)
{
	struct site_scan *s = arg;
	char *rel, *torch;
	bool has;

	if (strncmp(name, "python", 6) != 0 || s->has_torch)
		return 0;
	if (!(rel = cfa_aprintf("lib/%s/site-packages", name)) || !is_dir_at(s->root, rel)) {
		cfa_free(rel);
		return 0;
	}
	torch = cfa_aprintf("%s/torch", rel);
	has = torch && is_dir_at(s->root, torch);
	cfa_free(torch);
	if (s->found && !has) {
		cfa_free(rel);
		return 0;
	}
	cfa_free(s->found);
	s->found = rel;
	s->has_torch = has;
	return 0;
}

/* Torch's site-packages below the venv: Windows' Lib\site-packages, or
 * lib/pythonX.Y/site-packages (the first that holds torch, else the
 * first there is). */
static enum cfapkg_err find_site(struct finder *f)
{
	struct site_scan s = {f->v->root, NULL, false};
	char *lib = cfa_aprintf("%s/lib", f->v->root);

	if (!lib)
		return cfa_nomem(f->ctx);
	/* Windows venvs keep Lib\site-packages; checked first, since a POSIX
	 * venv has no Lib folder. */
	if (is_dir_at(f->v->root, "Lib/site-packages/torch"))
		s.found = cfa_strdup("Lib/site-packages");
	else
		cfa_plat_list_dir(lib, site_one, &s);
	cfa_free(lib);
	if (!s.found)
		return cfa_fail(f->ctx, CFAPKG_E_NOTFOUND, "%s: no Python environment there (no "
		                "Lib\\site-packages or lib/pythonX.Y/site-packages): give the venv's "
		                "folder, the one holding pyvenv.cfg", f->v->root);
	f->v->site = keep(f, s.found);
	f->torch = cfa_aprintf("%s/%s/torch", f->v->root, s.found);
	cfa_free(s.found);
	if (!f->torch || f->failed)
		return cfa_nomem(f->ctx);
	if (!cfa_plat_is_dir(f->torch))
		return cfa_fail(f->ctx, CFAPKG_E_NOTFOUND, "%s: no torch package in %s: install "
		                "PyTorch in the venv first (a CUDA build: +cu118, +cu126, +cu130)",
		                f->v->root, f->v->site);
	return CFAPKG_E_OK;
}

/* The quoted value of "name = '...'" (or "name: Optional[str] = '...'") in
 * torch/version.py; NULL for None or when the line is not there.
 * The file is only read as text, never run. */
static char *py_value(struct finder *f, const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *line = text, *p, *end;

	for (; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, name, n) != 0 || (line[n] != ' ' && line[n] != '=' && line[n] != ':'))
			continue;
		p = line + n + strcspn(line + n, "=\n");
		if (*p != '=')
			continue;
		p += 1 + strspn(p + 1, " \t");
		if ((*p != '\'' && *p != '"') || !(end = strchr(p + 1, *p)) || memchr(p, '\n', end - p))
			return NULL;
		return cfa_arena_strndup(f->v->arena, p + 1, (size_t)(end - p - 1));
	}
	return NULL;
}

/* "+cu130" in a version: CUDA 13.  0 when there is none.
 * "+cu118" is CUDA 11.8 and "+cu1281" would be 12.8: the last digit or two are
 * the minor. */
static unsigned cu_major(const char *version)
{
	const char *cu = version ? strstr(version, "+cu") : NULL;
	unsigned v = 0;
	size_t n = cu ? digits(cu + 3, &v) : 0;

	return n == 3 ? v / 10 : n == 4 ? v / 100 : 0;
}

static enum cfapkg_err read_version(struct finder *f)
{
	char *path = cfa_aprintf("%s/version.py", f->torch), *text = NULL, *hip;
	size_t len = 0;
	enum cfapkg_err e;
	uint64_t major = 0;

	if (!path)
		return cfa_nomem(f->ctx);
	e = cfa_read_file(f->ctx, path, &text, &len);
	/* A file far bigger than torch's own is not parsed: it is not the file
	 * this reads. */
	if (!e && len > VERSION_PY_MAX)
		e = cfa_fail(f->ctx, CFAPKG_E_IO, "%s: not torch's version file (%lu bytes)", path,
		             (unsigned long)len);
	if (!e) {
		f->v->torch_version = py_value(f, text, "__version__");
		f->v->cuda = py_value(f, text, "cuda");
		hip = py_value(f, text, "hip");
		/* A ROCm build of torch (hip set) runs on AMD GPUs without
		 * ZLUDA: it has no CUDA libraries to stand in for. */
		if (!f->v->torch_version)
			e = cfa_fail(f->ctx, CFAPKG_E_IO, "%s: no __version__ in it (not torch's "
			             "version file?)", path);
		else if (hip)
			e = cfa_fail(f->ctx, CFAPKG_E_UNSUPPORTED, "torch %s in %s is a ROCm build (HIP "
			             "%s): it runs on AMD GPUs without ZLUDA", f->v->torch_version,
			             f->v->root, hip);
		else if (!f->v->cuda)
			e = cfa_fail(f->ctx, CFAPKG_E_UNSUPPORTED, "torch %s in %s is a CPU build (no "
			             "CUDA): ZLUDA needs a CUDA build of torch (+cu118, +cu126, +cu130)",
			             f->v->torch_version, f->v->root);
	}
	if (!e && cfa_parse_u64(f->v->cuda, strcspn(f->v->cuda, "."), 99, &major))
		f->v->cuda_major = (unsigned)major;
	/* When version.py gives no CUDA version, the wheel's "+cuNNN" suffix
	 * says which CUDA it was built for. */
	if (!e && !f->v->cuda_major)
		f->v->cuda_major = cu_major(f->v->torch_version);
	cfa_free(text);
	cfa_free(path);
	return e;
}

static void add_lib(struct finder *f, const char *family, const char *name, const char *dir,
                    unsigned major)
{
	struct cfapkg_torch_lib *l;

	if (f->nlibs == MAX_LIBS)
		return;
	l = &f->libs[f->nlibs++];
	l->family = family;
	l->name = keep(f, name);
	l->dir = keep(f, dir);
	l->major = major;
}

struct dll_scan {
	struct finder *f;
	const char *dir;
	bool torch_cuda;
};

/* torch_cuda.dll marks a CUDA build on Windows; every CUDA DLL beside it in
 * torch\lib is one the build loads. */
static int dll_one(const char *name, void *arg)
{
	struct dll_scan *s = arg;
	unsigned major = 0;
	const char *family = cfa_venv_family(name, true, &major);

	s->torch_cuda |= cfa_venv_same_name(name, "torch_cuda.dll", true);
	if (family)
		add_lib(s->f, family, name, s->dir, major);
	return 0;
}

/* Removes "x/.." and "." from a relative path in place; false when it
 * leaves the venv. */
static bool normalize(char *path)
{
	char *out = path, *seg = path;

	while (*seg) {
		size_t n = strcspn(seg, "/");
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			if (out == path)
				return false;
			for (out--; out > path && out[-1] != '/'; out--)
				;
		} else if (n && !(n == 1 && seg[0] == '.')) {
			memmove(out, seg, n);
			out += n;
			*out++ = '/';
		}
		seg += n + (seg[n] == '/');
	}
	if (out > path)
		out--;
	*out = '\0';
	return true;
}

/* One RPATH entry relative to the venv ($ORIGIN: torch/lib); NULL when
 * it leads out of the venv or is absolute (a system folder).
 * Absolute entries are system folders, not the venv's: a stand-in could not be
 * placed there, so they are skipped. */
static char *rpath_dir(struct finder *f, const char *entry, size_t n)
{
	static const char *const origins[] = {"$ORIGIN", "${ORIGIN}"};
	char *dir = NULL;
	size_t i, o;

	for (i = 0; i < 2 && !dir; i++) {
		o = strlen(origins[i]);
		if (n >= o && strncmp(entry, origins[i], o) == 0 && (n == o || entry[o] == '/'))
			dir = cfa_aprintf("%s/torch/lib%.*s", f->v->site, (int)(n - o), entry + o);
	}
	if (dir && !normalize(dir))
		CFA_FREE(dir);
	return dir;
}

/* The first folder of the search path that holds name; NULL: none.
 * In the RPATH's own order, as the loader searches it: the first folder that
 * holds the file is where a stand-in must go. */
static char *resolve_needed(struct finder *f, const char *search, const char *name)
{
	const char *p = search;
	char *dir, *file;

	while (p && *p) {
		size_t n = strcspn(p, ":");
		if ((dir = rpath_dir(f, p, n))) {
			file = cfa_aprintf("%s/%s/%s", f->v->root, dir, name);
			if (file && cfa_plat_is_file(file)) {
				cfa_free(file);
				return dir;
			}
			cfa_free(file);
			cfa_free(dir);
		}
		p += n + (p[n] == ':');
	}
	return NULL;
}

static enum cfapkg_err linux_libs(struct finder *f, const char *so)
{
	struct cfa_elf_dyn d;
	const char *why = "";
	FILE *fp = cfa_plat_fopen(so, "rb");
	size_t i;
	bool ok = fp && cfa_elf_read(fp, &d, &why);

	if (fp)
		fclose(fp);
	if (!ok)
		return cfa_fail(f->ctx, CFAPKG_E_IO, "%s: cannot read its dynamic section: %s", so,
		                fp ? why : "cannot open it");
	/* A DT_RUNPATH comes after LD_LIBRARY_PATH and replaces any DT_RPATH;
	 * recorded, since it changes where a stand-in may be placed. */
	f->v->runpath = d.runpath != NULL;
	f->v->search_path = keep(f, d.runpath ? d.runpath : d.rpath ? d.rpath : "");
	for (i = 0; i < d.nneeded && !f->failed; i++) {
		unsigned major = 0;
		const char *family = cfa_venv_family(d.needed[i], false, &major);
		char *dir = family ? resolve_needed(f, f->v->search_path, d.needed[i]) : NULL;
		if (family)
			add_lib(f, family, d.needed[i], dir, major);
		cfa_free(dir);
	}
	cfa_elf_free(&d);
	return f->failed ? cfa_nomem(f->ctx) : CFAPKG_E_OK;
}

/* Which build it is (torch_cuda.dll or libtorch_cuda.so) and its names.
 * libtorch_cuda.so on disk means a Linux wheel; else the DLLs are read, and
 * the build must have torch_cuda.dll. */
static enum cfapkg_err find_libs(struct finder *f)
{
	char *lib = cfa_aprintf("%s/lib", f->torch), *dir = cfa_aprintf("%s/torch/lib", f->v->site);
	char *so = lib ? cfa_aprintf("%s/libtorch_cuda.so", lib) : NULL;
	struct dll_scan s = {f, dir, false};
	enum cfapkg_err e = CFAPKG_E_OK;

	if (!lib || !dir || !so) {
		e = cfa_nomem(f->ctx);
	} else if (cfa_plat_is_file(so)) {
		e = linux_libs(f, so);
	} else {
		cfa_plat_list_dir(lib, dll_one, &s);
		f->v->windows = true;
		if (!s.torch_cuda)
			e = cfa_fail(f->ctx, CFAPKG_E_UNSUPPORTED, "torch %s in %s has no CUDA part (no "
			             "libtorch_cuda.so or torch_cuda.dll in %s): reinstall a CUDA build",
			             f->v->torch_version, f->v->root, lib);
	}
	cfa_free(so);
	cfa_free(dir);
	cfa_free(lib);
	return e ? e : f->failed ? cfa_nomem(f->ctx) : CFAPKG_E_OK;
}

/* The venv's interpreter for this host: Scripts\python.exe on Windows,
 * bin/python (or python3) elsewhere. */
static void find_python(struct finder *f)
{
	static const char *const windows[] = {"Scripts/python.exe", NULL};
	static const char *const posix[] = {"bin/python", "bin/python3", NULL};
	const char *const *try = strcmp(cfa_plat_os(), "windows") == 0 ? windows : posix;
	char *path;

	for (; *try && !f->v->python; try++) {
		if (!(path = cfa_aprintf("%s/%s", f->v->root, *try)))
			f->failed = true;
		else if (cfa_plat_is_file(path))
			f->v->python = keep(f, path);
		cfa_free(path);
	}
}

/* The records name each venv by this spelling, so one folder typed two ways is
 * still one venv. */
int cfa_venv_abs(const char *dir, char **out)
{
	size_t n;
	int rc = cfa_plat_abs_path(dir, out);

	/* One spelling per venv: no trailing separator. */
	for (n = rc ? 0 : strlen(*out); n > 1 && ((*out)[n - 1] == '/' || (*out)[n - 1] == '\\');
	     n--)
		(*out)[n - 1] = '\0';
	return rc;
}

static enum cfapkg_err open_venv(struct finder *f, const char *dir)
{
	char *abs = NULL;
	enum cfapkg_err e;

	if (!cfa_plat_is_dir(dir))
		return cfa_fail(f->ctx, CFAPKG_E_NOTFOUND, "%s: no such folder", dir);
	if (cfa_venv_abs(dir, &abs) != 0)
		return cfa_nomem(f->ctx);
	f->v->root = keep(f, abs);
	free(abs); /* the platform's allocation */
	if (f->failed)
		return cfa_nomem(f->ctx);
	if ((e = find_site(f)) || (e = read_version(f)) || (e = find_libs(f)))
		return e;
	find_python(f);
	f->v->libs = cfa_arena_alloc(f->v->arena, (f->nlibs + 1) * sizeof(*f->libs));
	if (!f->v->libs || f->failed)
		return cfa_nomem(f->ctx);
	memcpy((void *)f->v->libs, f->libs, f->nlibs * sizeof(*f->libs));
	f->v->nlibs = f->nlibs;
	return CFAPKG_E_OK;
}

enum cfapkg_err cfapkg_venv_open(struct cfapkg_ctx *ctx, const char *dir, struct cfapkg_venv **out)
{
	struct finder *f = cfa_calloc(1, sizeof(*f));
	enum cfapkg_err e;

	*out = NULL;
	if (!f || !(f->v = cfa_calloc(1, sizeof(*f->v))) ||
	    !(f->v->arena = cfa_calloc(1, sizeof(*f->v->arena)))) {
		if (f)
			cfa_free(f->v);
		cfa_free(f);
		return cfa_nomem(ctx);
	}
	f->ctx = ctx;
	cfa_arena_init(f->v->arena);
	e = open_venv(f, dir);
	if (e)
		cfapkg_venv_free(f->v);
	else
		*out = f->v;
	cfa_free(f->torch);
	cfa_free(f);
	return e;
}

void cfapkg_venv_free(struct cfapkg_venv *v)
{
	if (!v)
		return;
	cfa_arena_fini(v->arena);
	cfa_free(v->arena);
	cfa_free(v);
}
