/*
 * cfapkg.h - the one public header of libcfapkg.
 *
 * libcfapkg turns recipes (JSON descriptions of the parts of a CUDA-on-AMD
 * stack) and machine facts (OS, GPU target, driver, HIP runtimes and SDKs)
 * into a plan, using libsolv.  The library never prints: results come back
 * as data, problems as records that a front end renders.
 *
 * A front end should use the high-level calls: cfapkg_facts_choose for
 * the machine, cfapkg_env_plan to show what an install would do,
 * cfapkg_trans_begin/_prepare/_commit to change an environment (it takes
 * the writer lock, downloads, unpacks, links and switches), cfapkg_verdict_*
 * for doctor, cfapkg_env_rollback for a rollback, cfapkg_launch_* for
 * a run.  The lower groups (plan, fetch, unpack) are those calls' parts,
 * public for tools that need one step alone; each group's opening says
 * which calls are its front door.
 *
 * Names: one word per idea.  A lockfile (struct cfapkg_lockfile) is the
 * exact set an environment's generation holds; its parts are
 * cfapkg_lockfile_part; the root's writer lock (cfapkg_writer_lock) is the
 * mutex that lets one cfapkg change a root at a time.
 *
 * Ownership: every pointer a function returns is either "borrowed" (valid
 * until the named owner is freed) or "owned".  An owned object is freed
 * with its own cfapkg_*_free; owned text and plain arrays of text or
 * records (the "Owned: cfapkg_free" results) with cfapkg_free.  Every
 * free function accepts NULL.  A record the caller holds and a call fills
 * with allocated members (a detected machine, a probe's answer) is
 * emptied with its cfapkg_*_clear.
 *
 * Lists: a list is always a pointer to its first element and a count of
 * elements; none is walked by index until a call says "no more".  In a
 * struct they are a member NAME and a member nNAME beside it (a
 * lockfile's parts and nparts; an array that runs beside another takes
 * the first one's count: a mirror result's prefixes and folders,
 * nprefixes).  An object's list is read with one call that returns the
 * array and sets *n (cfapkg_recipes, cfapkg_plan_items,
 * cfapkg_kept_items); a call that can fail returns its error and the
 * list through (out, n); cfapkg_components alone fills the caller's
 * array (out, max).  An empty list is a count of 0, its pointer
 * possibly NULL.  Who owns it: a list read from an object or a struct is
 * borrowed from that owner, valid while it lives and never freed on its
 * own; a list a call makes for the caller is owned, and its call says
 * how it goes: cfapkg_free(*out) for one allocation that holds its
 * records and their text (cfapkg_env_marks, cfapkg_env_damage,
 * cfapkg_bench, the text lists of cfapkg_env_list), or a typed free given
 * the array and its count where each element holds allocations of its
 * own (cfapkg_channel_list_free, cfapkg_channel_updates_free,
 * cfapkg_history_free, cfapkg_stack_caches_free,
 * cfapkg_lockfile_fetch_free).  Lists of text that a call makes end with
 * a NULL as well; a command line (argv, as cfapkg_exec, cfapkg_run_capture
 * and cfapkg_bench_opts take it) is the one list known by its NULL end
 * alone, as the system's exec takes it.
 *
 * Text: a public struct holds text as a pointer, allocated as long as it
 * is, and nothing is cut to fit.  A fixed array is kept only for a form of
 * fixed length (a SHA-256's 64 hex digits, a UTC time) or a name of a
 * closed set cfapkg checks itself (an OS, a gfx target); a list kept short
 * by design says so and counts what it left out (a GPU lookup's picks and
 * more, a fix's steps).
 */
#ifndef CFAPKG_H
#define CFAPKG_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CFAPKG_API __attribute__((visibility("default")))
#else
#define CFAPKG_API
#endif

/** @defgroup errors One error model
 * Each call returns a stable code; the context keeps a one-line detail of
 * the first failure (naming the file, component or URL and what to do).
 * Numbers are never reused. */
#define CFAPKG_ERRORS(X)                                                   \
	X(OK, 0, "success")                                                \
	X(NOMEM, 1, "out of memory")                                       \
	X(USAGE, 2, "invalid argument")                                    \
	X(IO, 3, "input/output error")                                     \
	X(RECIPE, 4, "invalid recipe")                                     \
	X(VERSION, 5, "invalid version or constraint")                     \
	X(NOTFOUND, 6, "not found")                                        \
	X(FACTS, 7, "invalid machine facts")                               \
	X(SOLVER, 8, "solver failure")                                     \
	X(UNSUPPORTED, 9, "not supported on this platform")                \
	X(NETWORK, 10, "network error")                                    \
	X(INTEGRITY, 11, "downloaded data does not match its recipe")      \
	X(OFFLINE, 12, "offline: the network may not be used")            \
	X(BUSY, 13, "another cfapkg is changing this root")                \
	X(LOCKFILE, 14, "invalid lockfile or generation record")           \
	X(UNSOLVABLE, 15, "no set of versions fits this machine")          \
	X(INTERRUPTED, 16, "interrupted")

enum cfapkg_err {
#define CFAPKG_ERR_ENUM(name, num, text) CFAPKG_E_##name = num,
	CFAPKG_ERRORS(CFAPKG_ERR_ENUM)
#undef CFAPKG_ERR_ENUM
};

/** Short text for a code ("invalid recipe").  Static storage. */
CFAPKG_API const char *cfapkg_strerror(enum cfapkg_err err);

/** @defgroup context Context
 * One context per thread of work: it holds the recipes, the root and the
 * first failure's detail.  Contexts share nothing. */
struct cfapkg_ctx;
struct cfa_arena;

/** Frees owned text and plain arrays the library returned. */
CFAPKG_API void cfapkg_free(void *p);

/** A new context, or NULL when out of memory.  Owned: cfapkg_ctx_free. */
CFAPKG_API struct cfapkg_ctx *cfapkg_ctx_new(void);
CFAPKG_API void cfapkg_ctx_free(struct cfapkg_ctx *ctx);

/** The detail of the first failure since the last clear ("" if none).
 * Borrowed, valid until the next call on ctx. */
CFAPKG_API const char *cfapkg_ctx_error(const struct cfapkg_ctx *ctx);
CFAPKG_API void cfapkg_ctx_clear_error(struct cfapkg_ctx *ctx);

/** Where cfapkg keeps its data.  NULL picks CFAPKG_ROOT, else the
 * platform's user data folder (XDG_DATA_HOME/cfapkg, %LOCALAPPDATA%\cfapkg). */
CFAPKG_API enum cfapkg_err cfapkg_ctx_set_root(struct cfapkg_ctx *ctx, const char *dir);
/** Borrowed, valid until the next set_root or ctx_free. */
CFAPKG_API const char *cfapkg_ctx_root(const struct cfapkg_ctx *ctx);

/** Adds a folder of recipes, searched after the built-in ones: a recipe in
 * a later folder replaces a built-in recipe of the same name. */
CFAPKG_API enum cfapkg_err cfapkg_ctx_add_recipe_dir(struct cfapkg_ctx *ctx, const char *dir);

/** Whether plans read recipe folders through their cached indexes (on by
 * default; off, every recipe of every folder is parsed, as the cache is
 * checked against). */
CFAPKG_API void cfapkg_ctx_set_recipe_index(struct cfapkg_ctx *ctx, bool on);

/** Test hook: the Nth allocation from now fails (0 turns it off).  Gives
 * how many allocations the failure planned before was still away: 0 once
 * it has happened, so that a sweep knows when a run no longer reached it
 * (a run may succeed through a failure it tolerates, a cache not written). */
CFAPKG_API unsigned long cfapkg_debug_fail_alloc(unsigned long nth);

CFAPKG_API const char *cfapkg_version_string(void);
/** A library cfapkg runs with, and its version as the library reports it
 * at run time.  Static storage. */
struct cfapkg_component {
	const char *name;     /* "libsolv", "libcurl", "libarchive", "OpenSSL", "cJSON" */
	const char *version;  /* "" when the library does not say */
};
/** Fills out with up to max components; returns how many there are. */
CFAPKG_API size_t cfapkg_components(struct cfapkg_component *out, size_t max);
/** The folder of the built-in recipes: beside the program (recipes/ or
 * ../share/cfapkg/recipes), else the source tree it was built from.
 * Static storage. */
CFAPKG_API const char *cfapkg_builtin_recipe_dir(void);

/** One writer at a time per root: takes ROOT/lock (waiting up to
 * timeout_ms; CFAPKG_E_BUSY with a message naming the lock file when
 * another cfapkg kept it).  Readers never take it.  A holder that dies
 * releases it, and the next holder cleans up what it left (see
 * cfapkg_recover).  Owned: cfapkg_writer_unlock. */
struct cfapkg_writer_lock;
CFAPKG_API enum cfapkg_err cfapkg_writer_lock(struct cfapkg_ctx *ctx, unsigned timeout_ms,
                                            struct cfapkg_writer_lock **out);
CFAPKG_API void cfapkg_writer_unlock(struct cfapkg_writer_lock *lock);

/** @defgroup recipes Recipes (read-only views, borrowed from the context)
 * What the context loaded from the built-in folder, the folders added and
 * the channels: read with cfapkg_recipes and cfapkg_recipe_find.
 * A front end never builds one; it reads them to list and explain. */
enum cfapkg_kind {
	CFAPKG_KIND_PACKAGE, /* downloaded, verified and unpacked by cfapkg */
	CFAPKG_KIND_SYSTEM,  /* installed by the user (driver, HIP SDK); detected */
	CFAPKG_KIND_META,    /* no files: a named set of requirements */
	CFAPKG_KIND_USER     /* files the user supplies, known by fingerprint */
};
enum cfapkg_status {
	CFAPKG_STATUS_VALIDATED,
	CFAPKG_STATUS_CANDIDATE,
	CFAPKG_STATUS_EXPERIMENTAL
};

/** A requirement, conflict or provide, as written, with the machine
 * condition under which it applies (empty lists: always). */
struct cfapkg_dep {
	const char *text;          /* "libtorch-cuda >=2.3,<2.4" */
	const char *name;          /* "libtorch-cuda" */
	const char *const *os;     /* applies only on these OSes */
	size_t nos;
	const char *const *gfx;    /* applies only on these GPU targets */
	size_t ngfx;
	const struct cfa_range *range; /* parsed constraint (internal) */
};

struct cfapkg_artifact {       /* one archive of a source that has several */
	const char *url;
	const char *const *mirrors;
	size_t nmirrors;
	const char *sha256;        /* lower-case hex */
	int64_t size;              /* bytes */
	const char *format;
	unsigned strip;
};

struct cfapkg_deb_pin {        /* one .deb of an APT source, pinned by the recipe itself */
	const char *name, *version;
	const char *file;          /* under the repository: "pool/main/r/rocblas/..." */
	const char *sha256;
	int64_t size;
	const char *suite;         /* the suite whose index listed it, or NULL */
	const char *depends;       /* its Pre-Depends and Depends as the index wrote them, or NULL */
	const char *provides;      /* its Provides, or NULL */
};

struct cfapkg_apt_source {     /* packages of a repository in Debian's layout */
	const char *repository;    /* base URL: "https://repo.radeon.com/rocm/apt/6.4.1" */
	const char *suite;         /* "noble" */
	const char *component;     /* "main" */
	const char *arch;          /* Debian's name: "amd64" */
	const char *index;         /* the index under the repository; NULL: the
	                              uncompressed dists/SUITE/COMPONENT/binary-ARCH/Packages */
	const char *index_sha256;  /* the index the recipe was written against */
	int64_t index_size;        /* -1 when not recorded */
	const char *const *packages; /* "NAME=VERSION", versions as Debian spells them;
	                              "NAME": the newest the index lists */
	size_t npackages;
	/* Trusted by the repository's OpenPGP key instead of a pinned index
	 * (recipe key "signed_by"): dists/SUITE/InRelease is verified with gpgv
	 * and the index's SHA-256 and size are taken from it.  Linux only. */
	const char *key_fingerprint; /* the pinned key (upper-case hex), or NULL */
	const char *key_url;       /* where that key is fetched the first time */
	const char *keyring;       /* a keyring file of the system's, or NULL */
	/* The pinned form: each .deb with its own pin (no index is read; the
	 * source's artifacts are these .debs), one per package (npackages of
	 * them, packages their "NAME=VERSION"); NULL for the index form. */
	const struct cfapkg_deb_pin *pins;
	bool pinned;               /* the pinned form: known before its pins are read */
	const char *const *mirrors;  /* more base URLs of the same repository */
	size_t nmirrors;
	const char *seen;          /* where the pins were read: suites and InRelease Dates */
};

struct cfapkg_source {
	const char *platform;      /* "windows-x86_64", "linux-x86_64" */
	/* Several archives unpacked in order into one prefix (url is NULL,
	 * size their sum), or an APT source (url NULL, size -1: the index
	 * gives the .debs at install). */
	const struct cfapkg_artifact *artifacts;
	size_t nartifacts;
	const struct cfapkg_apt_source *apt;
	const char *url;           /* NULL when not known */
	const char *const *mirrors;
	size_t nmirrors;
	const char *sha256;        /* lower-case hex, NULL when not known */
	int64_t size;              /* bytes, -1 when not known */
	const char *format;        /* zip, 7z, tar.gz, tar.xz, tar.zst, tar.bz2, deb */
	unsigned strip;            /* leading folders to drop when unpacking */
	const char *unavailable;   /* why this cannot be installed, or NULL */
	int64_t unpacked_size;     /* bytes once unpacked, -1 when not recorded */
	/* A download without a size is bounded by this cap (-1: the fetch's
	 * default, CFAPKG_MAX_UNKNOWN_SIZE or --max-size). */
	int64_t max_size;
	const char *provenance;    /* where its SHA-256 (and size) were seen, or NULL */
	/* Pinned on this machine by trusting its first download (the root's
	 * first-use file): when it was recorded, "YYYY-MM-DDTHH:MM:SSZ";
	 * NULL for a pin the recipe itself carries. */
	const char *first_use;
};

struct cfapkg_file_rule {      /* layout: expose/rename a file of the package */
	const char *path;          /* inside the package */
	const char *as;            /* name it must have in the environment */
};

struct cfapkg_user_file {      /* a user-supplied file known by fingerprint */
	const char *name;
	const char *sha256;
};

struct cfapkg_env_var {
	const char *name;
	const char *value;         /* may use {prefix} and {gfx} */
};

struct cfapkg_gpu_status {
	const char *gfx;           /* "gfx1200" or "*" */
	enum cfapkg_status status;
};

struct cfapkg_version {
	const char *version;       /* upstream spelling: "6-preview.69" */
	const struct cfapkg_recipe *recipe;
	const struct cfapkg_dep *requires;
	size_t nrequires;
	const struct cfapkg_dep *conflicts;
	size_t nconflicts;
	const struct cfapkg_dep *provides;
	size_t nprovides;
	const char *const *os;     /* machine constraints; empty: any */
	size_t nos;
	const char *const *arch;
	size_t narch;
	const char *const *gfx;    /* GPU targets supported; empty: any */
	size_t ngfx;
	const struct cfapkg_gpu_status *status;
	size_t nstatus;
	const struct cfapkg_source *sources;
	size_t nsources;
	const struct cfapkg_user_file *user_files;
	size_t nuser_files;
	const struct cfapkg_file_rule *layout;
	size_t nlayout;
	const char *launcher;      /* program that starts others under this part */
	const char *const *path;   /* runtime PATH entries, relative to the prefix */
	size_t npath;
	const struct cfapkg_env_var *env;
	size_t nenv;
	const char *const *stage;  /* files to place beside a program ("*.dll") */
	size_t nstage;
	const char *note;
	const struct cfa_ver *parsed; /* internal */
	/* internal: a plan reads a version's needs first and the rest (its
	 * sources' archive lists and mirrors, APT packages and pins, user
	 * files, layout, runtime, note) once it is picked; until then this
	 * says where they wait, and those fields are empty */
	const struct cfa_pending *pending;
};

struct cfapkg_note {           /* a sentence about a virtual name */
	const char *name;          /* "miopen" */
	const char *const *os;
	size_t nos;
	const char *text;
};

struct cfapkg_recipe {
	const char *name;
	const char *summary;
	const char *license;
	const char *homepage;
	enum cfapkg_kind kind;
	const char *fact;          /* system parts: "driver", "hip_runtime", "hip_sdk" */
	const char *install_hint;  /* system and user parts: how the user gets it */
	const struct cfapkg_version *versions; /* newest first */
	size_t nversions;
	const struct cfapkg_note *notes;
	size_t nnotes;
	const char *file;          /* the recipe file it came from */
	/* "upstream": where new versions are announced (a GitHub-releases-shaped
	 * list), and the pattern whose one group maps a tag to a version; NULL
	 * when not given (see cfapkg_recipe_releases_url) */
	const char *upstream_releases;
	const char *upstream_tag;
	const char *origin;        /* "built-in", "folder DIR" or "channel NAME
	                              (index N, URL)": what put it in the set */
};

/** Loads every recipe folder (built-in first, then the added ones, then
 * CFAPKG_RECIPES, a path list).  Idempotent. */
CFAPKG_API enum cfapkg_err cfapkg_recipes_load(struct cfapkg_ctx *ctx);
/** Parses one recipe file on its own (for tools and tests).  The recipe is
 * borrowed from ctx. */
CFAPKG_API enum cfapkg_err cfapkg_recipe_parse_file(struct cfapkg_ctx *ctx, const char *path,
                                                    const struct cfapkg_recipe **out);
/** The loaded recipes, sorted by name.  Borrowed from ctx. */
CFAPKG_API const struct cfapkg_recipe *const *cfapkg_recipes(const struct cfapkg_ctx *ctx,
                                                            size_t *n);
CFAPKG_API const struct cfapkg_recipe *cfapkg_recipe_find(const struct cfapkg_ctx *ctx,
                                                          const char *name);
/** Recipe names like name, for "did you mean": one holds the other, or
 * they are a typo or two apart.  Comma-separated, in name order; NULL when
 * none is (or out of memory).  Owned: cfapkg_free. */
CFAPKG_API char *cfapkg_recipe_suggest(const struct cfapkg_ctx *ctx, const char *name);
/** The same rule over any list of names (commands, options). */
CFAPKG_API char *cfapkg_names_suggest(const char *name, const char *const *names, size_t n);
/** Status of a version on a GPU target, after the GPU's own project status
 * (an experimental GPU makes every part experimental). */
CFAPKG_API enum cfapkg_status cfapkg_version_status(const struct cfapkg_ctx *ctx,
                                                    const struct cfapkg_version *v,
                                                    const char *gfx);
/** True when the version lists no GPU targets or lists gfx. */
CFAPKG_API bool cfapkg_version_supports_gfx(const struct cfapkg_version *v, const char *gfx);
/** The source for "os-arch", or NULL (as for an arch NULL: not known). */
CFAPKG_API const struct cfapkg_source *cfapkg_version_source(const struct cfapkg_version *v,
                                                             const char *os, const char *arch);
CFAPKG_API const char *cfapkg_status_name(enum cfapkg_status s);
CFAPKG_API const char *cfapkg_kind_name(enum cfapkg_kind k);
/** The length of the name a spec, provide or pin starts with ("zluda" of
 * "zluda>=7", "cublas" of "cublas = 11"). */
CFAPKG_API size_t cfapkg_spec_name_len(const char *spec);
/** Whether spec is about name: its name is name, whole. */
CFAPKG_API bool cfapkg_spec_names(const char *spec, const char *name);

/** @defgroup versions Versions
 * Versions as upstream spells them ("7-preview.10", "6.4.2",
 * "5.3.0+dfsg-2"), ordered by one comparison the solver uses too. */
/** Compares two upstream spellings: <0, 0, >0.  Returns CFAPKG_E_VERSION
 * through *err (when not NULL) if either does not parse. */
CFAPKG_API int cfapkg_version_compare(const char *a, const char *b, enum cfapkg_err *err);
/** True when version satisfies constraint (">=2.3,<2.4", "==2.3.0+cu118"). */
CFAPKG_API enum cfapkg_err cfapkg_version_matches(struct cfapkg_ctx *ctx, const char *version,
                                                  const char *constraint, bool *out);

/** @defgroup upkeep Keeping recipes current ('cfapkg recipe add-version', 'outdated')
 * A new version is written into the recipe file as text, next to the
 * others and indented like them: nothing else in the file changes. */
struct cfapkg_new_source {
	const char *platform;      /* "windows-x86_64" */
	const char *url;
	const char *format;        /* NULL: cfapkg_recipe_check_version guesses it from the URL */
	int strip;                 /* -1: the newest version's for the platform (none: left out) */
	const char *sha256;        /* what the download gave, before cfapkg_recipe_add_version */
	int64_t size;
};
struct cfapkg_new_version {
	const char *version;       /* "6-preview.80" */
	struct cfapkg_new_source *sources;
	size_t nsources;
};
/** The file 'recipe add-version' edits for r: the one cfapkg reads it from.
 * Refused (CFAPKG_E_USAGE) in the built-in folder of an installed cfapkg
 * (a reinstall would undo the edit; a build tree's source checkout is
 * fine) or not read from a file (a channel's), and (CFAPKG_E_NOTFOUND)
 * outside the added folders when any were added
 * (cfapkg_ctx_add_recipe_dir).  Borrowed from r. */
CFAPKG_API enum cfapkg_err cfapkg_recipe_edit_file(struct cfapkg_ctx *ctx,
                                                   const struct cfapkg_recipe *r,
                                                   const char **file);
/** Checks nv against r before anything is downloaded: a package recipe,
 * a version that parses and that r lacks, OS-ARCH keys the format takes,
 * one source each, http(s) URLs, a format (guessed from the URL when
 * NULL) and strip 0..16 (taken from the newest version when -1). */
CFAPKG_API enum cfapkg_err cfapkg_recipe_check_version(struct cfapkg_ctx *ctx,
                                                       const struct cfapkg_recipe *r,
                                                       struct cfapkg_new_version *nv);
/** Writes nv (checked, with each source's sha256 and size) as the first
 * version of r's file: the newest version's shape (requires, conflicts,
 * provides, os, arch, gfx, layout, launcher, runtime) copied as written,
 * never its status, note or sources; then loads the file again and puts
 * the old text back when it does not load.  Atomic (a temporary file
 * renamed over it). */
CFAPKG_API enum cfapkg_err cfapkg_recipe_add_version(struct cfapkg_ctx *ctx,
                                                     const struct cfapkg_recipe *r,
                                                     const struct cfapkg_new_version *nv);
/** The archive format a URL's name ends in (zip, 7z, tar.gz, .tgz,
 * tar.xz, tar.zst, tar.bz2, tar, deb), or NULL.  Static storage. */
CFAPKG_API const char *cfapkg_format_from_url(const char *url);

struct cfapkg_release_asset {
	const char *name;          /* "zluda-windows-9c8b43f.zip" */
	const char *url;           /* its browser_download_url */
	int64_t size;              /* -1 when not given */
	const char *platform;      /* guessed from the name ("windows-x86_64"), or NULL */
	const char *format;        /* guessed from the name, NULL when not an archive */
	bool pick;                 /* the one add-version would take for its platform
	                              (a platform of the recipe's newest version) */
};
struct cfapkg_release {
	const char *tag;           /* "v6-preview.80" */
	const char *version;       /* "6-preview.80" */
	bool prerelease;
	const char *published_at;  /* NULL when not given */
	const struct cfapkg_release_asset *assets;
	size_t nassets;
};
struct cfapkg_releases {
	const char *newest;        /* the recipe's newest version */
	const struct cfapkg_release *newer; /* upstream versions newer than it, newest first */
	size_t nnewer;
	size_t nread;              /* releases read, drafts left out */
	const char *const *skipped; /* tags that name no version */
	size_t nskipped;
	struct cfa_arena *arena;   /* internal */
};
/** Where r's releases are listed: its upstream.releases, else the GitHub
 * API's list for a https://github.com/OWNER/REPO homepage; the variable
 * CFAPKG_GITHUB_API replaces https://api.github.com in either.  *out NULL
 * when r names neither.  Owned: cfapkg_free. */
CFAPKG_API enum cfapkg_err cfapkg_recipe_releases_url(struct cfapkg_ctx *ctx,
                                                      const struct cfapkg_recipe *r, char **out);
/** Reads a releases list fetched from url (GitHub's shape: [{"tag_name",
 * "draft", "prerelease", "published_at", "assets": [{"name",
 * "browser_download_url", "size"}]}]) against r: tags become versions
 * (upstream.tag's group, else the tag less a leading "v"), drafts are left
 * out.  Owned: cfapkg_releases_free. */
CFAPKG_API enum cfapkg_err cfapkg_releases_read(struct cfapkg_ctx *ctx,
                                                const struct cfapkg_recipe *r, const char *path,
                                                const char *url, struct cfapkg_releases **out);
CFAPKG_API void cfapkg_releases_free(struct cfapkg_releases *rel);

/** A set of Debian packages read from a repository folder in Debian's
 * layout (dists/SUITE/InRelease or Release, dists/SUITE/COMPONENT/binary-
 * ARCH/Packages, .xz or .gz), for pinning them in a recipe ('cfapkg recipe
 * deb-set').  Each suite's index must be the one its InRelease lists (by
 * SHA-256 and size); the InRelease's signature is not checked here (apt
 * checked it when it fetched the lists).  The closure of the roots
 * ("NAME" or "NAME=VERSION") is read from Depends and Pre-Depends, each
 * requirement met from the first suite that can; it stops at the C library
 * (libc6), whose highest floor becomes glibc. */
struct cfapkg_deb_suite_info {
	const char *suite;         /* as asked: "sid" */
	const char *archive_suite; /* the Release's Suite: "unstable" */
	const char *codename;
	const char *date;          /* the Release's Date: "Fri, 30 Oct 2026 08:08:01 UTC" */
	const char *valid_until;   /* NULL when none */
	bool clearsigned;          /* read from an InRelease */
	const char *index_path;    /* "main/binary-amd64/Packages", as the Release lists it */
	const char *index_sha256;
	int64_t index_size;
};
struct cfapkg_deb_member {
	const char *name, *version;
	const char *suite;         /* the suite whose index it came from */
	const char *filename;      /* "pool/main/..." */
	const char *sha256;
	int64_t size;
	const char *depends;       /* Pre-Depends and Depends as written ("" when none) */
	const char *provides;      /* NULL when none */
	const char *gpu_arch;      /* X-Rocm-Gpu-Architecture, NULL when absent */
};
struct cfapkg_deb_set {
	const struct cfapkg_deb_suite_info *suites;
	size_t nsuites;
	const struct cfapkg_deb_member *members;   /* sorted by name */
	size_t nmembers;
	const char *glibc;         /* the highest libc6 floor's upstream part: "2.42"; NULL: none */
	const char *glibc_by;      /* the package asking for it: "libedit2 3.1-20260512-1" */
	struct cfa_arena *arena;   /* internal */
};
CFAPKG_API enum cfapkg_err cfapkg_deb_set_read(struct cfapkg_ctx *ctx, const char *repo_dir,
                                               const char *component, const char *arch,
                                               const char *const *suites, size_t nsuites,
                                               const char *const *roots, size_t nroots,
                                               struct cfapkg_deb_set **out);
CFAPKG_API void cfapkg_deb_set_free(struct cfapkg_deb_set *set);

/** @defgroup gpus GPU table (recipes/gpus.json)
 * Targets and the products people know them by.  A front end resolves
 * what a user typed with cfapkg_gpu_lookup (one match, the candidates, or
 * the nearest) before setting the "gpu" fact. */
struct cfapkg_gpu_target {
	const char *gfx;           /* "gfx1200" */
	const char *generation;    /* "RDNA4" */
	uint32_t kfd_version;      /* KFD gfx_target_version, 0 if unknown */
	enum cfapkg_status status; /* the project's status for this target */
	const char *min_hip_sdk;   /* NULL when no floor is recorded */
	bool apu;                  /* an integrated GPU (APU) target */
	const char *hsa_override;  /* HSA_OVERRIDE_GFX_VERSION it runs under on Linux
	                              ("10.3.0"), NULL when it needs none */
	bool hipblaslt;            /* hipBLASLt ships kernels for it (true when not recorded) */
	bool rocblas_overlay;      /* the SDK's rocBLAS leaves it out: Tensile files come
	                              from an overlay */
};
struct cfapkg_gpu_device {
	uint16_t vendor, device;
	int revision;              /* -1: any revision */
	const char *chip;
	const char *gfx;
	const char *name;
};
CFAPKG_API const struct cfapkg_gpu_target *cfapkg_gpu_target_find(struct cfapkg_ctx *ctx,
                                                                  const char *gfx);
/** The device entry for a PCI id and revision (exact revision first, then
 * an any-revision entry), or NULL. */
CFAPKG_API const struct cfapkg_gpu_device *cfapkg_gpu_device_find(struct cfapkg_ctx *ctx,
                                                                  uint16_t vendor,
                                                                  uint16_t device, int revision);
/** What a GPU named by a person resolves to (cfapkg_gpu_lookup). */
enum cfapkg_gpu_match {
	CFAPKG_GPU_FOUND,          /* one target (gfx); picks: the devices that fit */
	CFAPKG_GPU_AMBIGUOUS,      /* devices of several targets fit: picks are they */
	CFAPKG_GPU_UNKNOWN,        /* no device fits: picks are the nearest names or ids */
	CFAPKG_GPU_UNKNOWN_TARGET  /* a target gpus.json lacks: picks are the nearest targets */
};
#define CFAPKG_GPU_PICKS 12
struct cfapkg_gpu_pick {
	const struct cfapkg_gpu_target *target; /* NULL when gpus.json lacks the device's */
	const struct cfapkg_gpu_device *device; /* NULL for a pick that is a target */
};
struct cfapkg_gpu_lookup {
	enum cfapkg_gpu_match match;
	char gfx[16];              /* CFAPKG_GPU_FOUND: the target ("gfx1100") */
	struct cfapkg_gpu_pick picks[CFAPKG_GPU_PICKS]; /* one per product name */
	unsigned npicks;
	unsigned more;             /* products that fit beyond picks */
};
/** Resolves what a person calls a GPU: a target in any case (GFX1100), a
 * gpus.json device name, whole or a part that fits one target, ignoring
 * case, spaces and the words AMD and Radeon ("RX 7900 XTX", 7900xtx), or a
 * PCI id VVVV:DDDD[:RR].  Fails only when the recipes cannot be loaded;
 * out->match says what was found.  Without a GPU table, only a target. */
CFAPKG_API enum cfapkg_err cfapkg_gpu_lookup(struct cfapkg_ctx *ctx, const char *text,
                                             struct cfapkg_gpu_lookup *out);
/** The GPU table's devices, in its order (none without a table); loads
 * the recipes first when they are not.  Borrowed from ctx. */
CFAPKG_API enum cfapkg_err cfapkg_gpu_devices(struct cfapkg_ctx *ctx,
                                              const struct cfapkg_gpu_device **out, size_t *n);
/** Whether pattern fits d as cfapkg_gpu_lookup reads it, in part: a
 * name's part, a target's beginning (gfx11), a PCI id's part (1002:744c). */
CFAPKG_API bool cfapkg_gpu_device_matches(const struct cfapkg_gpu_device *d,
                                          const char *pattern);

/** @defgroup facts Machine facts
 * What the solver knows about the machine.  A fact that is not known is
 * not checked (and the plan says so); a known fact binds.
 *
 * Facts are held whole, however long and however many, as a detected
 * machine is: text is allocated, NULL when it is not known; a list is an
 * array and its count.  The two fixed arrays hold names from a closed set
 * that cfapkg checks itself, each marked so.  Whoever holds facts owns
 * them: cfapkg_facts_clear frees them, and cfapkg_facts_copy is how they
 * are copied (assigning the struct would share its text).  Every function
 * that fills facts takes storage that is zeroed or holds facts. */
struct cfapkg_facts {
	char os[16];               /* closed set: "windows" | "linux" (checked when set;
	                              cfapkg_host_os's names); "" when not known */
	char *arch;                /* as the system names it: "x86_64"; NULL when not known */
	char gfx[16];              /* closed set: a target, "gfx" and 3 to 5 hex digits
	                              (checked when set); "" when not known */
	char *driver;              /* the driver's version: NULL when not known */
	bool hip_runtimes_known;
	unsigned *hip_runtimes;    /* HIP runtime majors present */
	size_t nhip_runtimes;
	bool hip_sdks_known;
	char **hip_sdks;           /* installed HIP SDK / ROCm versions: each set */
	size_t nhip_sdks;
	char *glibc;               /* the C library (Linux): "2.36"; NULL when not known */
};
/** Frees what facts hold and zeroes them all; safe on zeroed facts, on
 * NULL, and twice. */
CFAPKG_API void cfapkg_facts_clear(struct cfapkg_facts *f);
/** A deep copy of from into to, which must be zeroed or hold facts: it is
 * cleared first (and left cleared on failure).  CFAPKG_E_NOMEM when the
 * copy could not all be held. */
CFAPKG_API enum cfapkg_err cfapkg_facts_copy(const struct cfapkg_facts *from,
                                             struct cfapkg_facts *to);
/** Host OS and architecture into f, which must be zeroed or hold facts: it
 * is cleared first; everything else unknown.  CFAPKG_E_NOMEM when the
 * architecture's name could not be held. */
CFAPKG_API enum cfapkg_err cfapkg_facts_init_host(struct cfapkg_facts *f);
/** Sets one fact from text: key is os, arch, gpu, driver, glibc, hip-runtime
 * (adds one; "none" empties the list and marks it known) or hip-sdk (the
 * same).  gpu takes what cfapkg_gpu_lookup resolves to one known target,
 * and keeps that target. */
CFAPKG_API enum cfapkg_err cfapkg_facts_set(struct cfapkg_ctx *ctx, struct cfapkg_facts *f,
                                            const char *key, const char *value);
/** Reads a facts JSON file ({"os","arch","gpu","driver","glibc",
 * "hip_runtimes":[6], "hip_sdks":["6.4.2"]}) over f, or the file 'cfapkg report' writes (told
 * by its "report_format"): that machine's OS, architecture, GPU (its
 * override, else the selected GPU's target), driver, HIP runtimes and
 * SDKs. */
CFAPKG_API enum cfapkg_err cfapkg_facts_load(struct cfapkg_ctx *ctx, struct cfapkg_facts *f,
                                             const char *path);

/** @defgroup settings Defaults from cfapkg.conf
 * Settings ("key = value" lines, "#" comments) from the system's file
 * (/etc/cfapkg/cfapkg.conf, %ProgramData%\cfapkg\cfapkg.conf;
 * CFAPKG_SYSTEM_CONFIG=FILE names another, empty for none), the user's
 * ($XDG_CONFIG_HOME/cfapkg/cfapkg.conf, ~/.config/cfapkg/cfapkg.conf,
 * %APPDATA%\cfapkg\cfapkg.conf; CFAPKG_CONFIG=FILE), then the root's
 * (ROOT/cfapkg.conf), a later one winning; then the environment
 * (CFAPKG_PARALLEL, CFAPKG_RETRIES, CFAPKG_STALL_TIMEOUT, CFAPKG_OFFLINE,
 * CFAPKG_CA_BUNDLE, CFAPKG_ENV; libcurl's https_proxy, http_proxy,
 * ALL_PROXY and no_proxy beat proxy and no-proxy lines).  Keys: parallel,
 * retries, stall-timeout, offline, proxy, no-proxy, ca-bundle, env.  An
 * unknown key or a bad value is CFAPKG_E_USAGE naming the file and line
 * (or the variable).  Options on a command line beat every setting. */
struct cfapkg_settings;
CFAPKG_API enum cfapkg_err cfapkg_settings_load(struct cfapkg_ctx *ctx,
                                                struct cfapkg_settings **out);
CFAPKG_API void cfapkg_settings_free(struct cfapkg_settings *s);
/** A setting's value (NULL: not set) and where it came from ("FILE:LINE",
 * a variable's name; NULL when not set).  s may be NULL. */
CFAPKG_API const char *cfapkg_setting(const struct cfapkg_settings *s, const char *key,
                                      const char **from);
/** A true/false setting: true only when set and true. */
CFAPKG_API bool cfapkg_setting_switch(const struct cfapkg_settings *s, const char *key);
/** Every known key, set or not, as cfapkg_setting gives it. */
struct cfapkg_setting {
	const char *key;           /* "parallel" */
	const char *value;         /* NULL: not set */
	const char *from;          /* "FILE:LINE" or a variable's name; NULL when not set */
};
/** The known keys in name order.  Borrowed from s (none when s is NULL). */
CFAPKG_API const struct cfapkg_setting *cfapkg_settings_items(const struct cfapkg_settings *s,
                                                              size_t *n);
/** A settings file cfapkg looks for. */
struct cfapkg_settings_file {
	const char *role;          /* "system", "user", "root" */
	const char *path;          /* NULL when there is none to look for */
	bool found;                /* it was there and read */
};
/** The files in the order they are read (system, user, root).  Borrowed
 * from s (none when s is NULL). */
CFAPKG_API const struct cfapkg_settings_file *cfapkg_settings_files(
	const struct cfapkg_settings *s, size_t *n);

/** @defgroup detect Machine detection
 * Linux reads the KFD topology, PCI sysfs, the amdgpu module and ROCm
 * installs (CFAPKG_SYSROOT=DIR reads DIR/sys, DIR/proc, DIR/opt instead, on
 * any OS, describing a Linux machine: the test seam).  Windows asks DXGI, the display driver's registry
 * keys, System32 and the HIP SDK folders (running hipInfo.exe).
 *
 * What detection found is held whole, however long and however many:
 * text is allocated, NULL when it is not known (a field that says "set"
 * is never NULL in a detected machine); a list is an array and its
 * count.  cfapkg_machine_clear frees it all.  The few fixed arrays hold
 * short names from a closed set that cfapkg itself writes, each marked
 * so. */
struct cfapkg_gpu {
	unsigned index;
	char *name;                /* product name, or "AMD GPU 1002:XXXX (not in gpus.json)":
	                              set for every GPU detected */
	char gfx[16];              /* closed set: a target, "gfx" and 3 to 5 hex digits (decoded
	                              from KFD's number, or hipInfo's and gpus.json's checked
	                              for that form); "" when unknown */
	char *generation;          /* from gpus.json, NULL when unknown */
	char *chip;                /* from gpus.json, NULL when unknown */
	uint64_t vram_bytes;
	uint16_t vendor, device;
	int revision;              /* -1 when unknown */
	char pci_id[24];           /* closed set: written from the ids ("1002:7590 rev c0") */
	char source[16];           /* closed set: "kfd", "pci", "dxgi", "registry", "hipinfo" */
	bool integrated;
	bool known;                /* the device is in gpus.json */
	int status;                /* enum cfapkg_status of its target, -1 unknown */
	char *problem;             /* why its KFD facts could not be read, NULL when they were:
	                            * listed from its PCI identity, target from gpus.json */
};
struct cfapkg_hip_runtime {
	unsigned major;            /* one entry per major */
	char *file;                /* the library that shows it (on Windows with its
	                              version): set */
};
struct cfapkg_hip_sdk {
	char *version;             /* "6.4.2": set */
	char *path;                /* its folder: set */
	char source[16];           /* closed set: "/opt", "HIP_PATH", "HIP_PATH_xx",
	                              "Program Files" */
};
struct cfapkg_machine {
	char os[16];               /* closed set: cfapkg_host_os's names, "linux" below a
	                              CFAPKG_SYSROOT */
	char *arch;                /* as the system names it: "x86_64" */
	char *os_build;            /* "Debian GNU/Linux 12, kernel 6.1.0", "Windows 10.0.26100" */
	struct cfapkg_gpu *gpus;
	size_t ngpus;
	int selected;              /* index into gpus, -1 when none */
	int passed_over;           /* a discrete GPU not chosen (it could not be read) while an
	                            * integrated one was: probably the one meant; -1 when none */
	char gfx_override[16];     /* closed set: HSA_OVERRIDE_GFX_VERSION as a target, as gfx;
	                              "" when unset */
	char *driver;              /* the driver's version as it reports it */
	char *driver_source;       /* where it came from */
	char *driver_detail;       /* other driver facts (Windows DriverVersion, kernel) */
	struct cfapkg_hip_runtime *hip_runtimes; /* HIP runtime majors present */
	size_t nhip_runtimes;
	struct cfapkg_hip_sdk *hip_sdks;
	size_t nhip_sdks;
	char **warnings;           /* files that could not be read, and the like */
	size_t nwarnings;
	char *glibc;               /* the C library's version (Linux): "2.36" */
	char *glibc_source;        /* where it was read: "gnu_get_libc_version", a libc.so.6 */
};
/** Frees what a machine holds and zeroes it all; safe on a zeroed
 * machine, and twice. */
CFAPKG_API void cfapkg_machine_clear(struct cfapkg_machine *m);
/** Detects this machine into m, which must be zeroed or hold an earlier
 * detection: it is cleared first (cfapkg_machine_clear frees it after).
 * gpu_index < 0 picks the discrete GPU with the
 * most memory (else the first), preferring GPUs that could be read;
 * otherwise that GPU, or CFAPKG_E_NOTFOUND.  No AMD GPU is not an error:
 * ngpus is 0 and selected -1 (warnings say what could not be read).
 * CFAPKG_E_NOMEM when what was found could not all be held. */
CFAPKG_API enum cfapkg_err cfapkg_detect(struct cfapkg_ctx *ctx, int gpu_index,
                                         struct cfapkg_machine *m);
/** The detected facts, for planning: OS, architecture, the selected GPU's
 * target (the override when set), driver, glibc, HIP runtimes, HIP SDKs,
 * every one of them.  f must be zeroed or hold facts: it is cleared
 * first.  CFAPKG_E_NOMEM when they could not all be held. */
CFAPKG_API enum cfapkg_err cfapkg_machine_facts(const struct cfapkg_machine *m,
                                                struct cfapkg_facts *f);

/** @defgroup facts_choice Which machine a plan is for
 * The one rule every front end plans by: this machine, detected, unless
 * another is described (a facts file or a "gpu" fact); then the file;
 * then each fact set, in order, so that a fact set by hand always wins.
 * With nothing set and no AMD GPU here, the environment's active
 * generation serves with the facts it was planned with. */
enum cfapkg_facts_from {
	CFAPKG_FACTS_DETECTED,     /* this machine (facts set by hand change single facts) */
	CFAPKG_FACTS_REMEMBERED,   /* no AMD GPU here: the environment's remembered machine */
	CFAPKG_FACTS_DESCRIBED     /* another machine: a facts file or a named GPU */
};
struct cfapkg_facts_request {
	const char *env;           /* the environment planned for, whose remembered
	                              facts may serve; NULL: none may */
	const char *file;          /* a facts file (cfapkg_facts_load), NULL: none */
	int gpu_index;             /* which detected GPU; -1: as cfapkg_detect picks */
	const char *const *keys;   /* facts set in this order, as cfapkg_facts_set takes */
	const char *const *values; /* them (a "gpu" already resolved to one target) */
	size_t nkeys;
};
struct cfapkg_facts_choice {
	enum cfapkg_facts_from from;
	struct cfapkg_facts facts; /* what to plan with: owned by the choice */
	bool detected;             /* machine holds what detection read (its notes apply) */
	struct cfapkg_machine machine; /* owned by the choice */
	unsigned remembered_gen;   /* REMEMBERED: the generation that served; DETECTED:
	                              one planned for another GPU than this one; else 0 */
	struct cfapkg_facts remembered; /* that generation's facts: owned by the choice */
	bool other_os;             /* another OS named here: its driver, HIP runtimes and
	                              SDKs were dropped (not known) unless set too */
};
/** Chooses into c, which must be zeroed or hold an earlier choice: it is
 * cleared first (cfapkg_facts_choice_clear frees it after).  With no AMD
 * GPU here and none remembered, CFAPKG_E_NOTFOUND with detected true and
 * machine.selected -1; a bad fact or file as cfapkg_facts_set and
 * cfapkg_facts_load say. */
CFAPKG_API enum cfapkg_err cfapkg_facts_choose(struct cfapkg_ctx *ctx,
                                               const struct cfapkg_facts_request *req,
                                               struct cfapkg_facts_choice *c);
/** Frees the machine and the facts a choice holds and zeroes it all; safe
 * on a zeroed choice, and twice. */
CFAPKG_API void cfapkg_facts_choice_clear(struct cfapkg_facts_choice *c);

/** @defgroup plan Planning
 * One solve of requests on facts, with libsolv.  A front end showing what
 * an install would do calls cfapkg_env_plan (the environment's pins and
 * installed versions applied, as a transaction would); cfapkg_plan_solve
 * is the bare solve beneath it.  A plan that does not solve is not an
 * error: its problems say why, and cfapkg_plan_fix the way out. */
struct cfapkg_plan_opts {
	bool allow_experimental;
	const char *const *pins;   /* specs every solve must honour ("zluda==7-preview.10") */
	size_t npins;
	const char *const *prefer; /* specs to keep when they still fit (what is
	                              installed: "zluda==6-preview.69") */
	size_t nprefer;
	bool full_pool;            /* put every recipe in the pool, not only those the
	                              request can reach (for exporting the whole problem
	                              with cfapkg_plan_write_testcase) */
};

enum cfapkg_problem_kind {
	CFAPKG_PROBLEM_UNKNOWN_NAME,    /* request names nothing any recipe provides */
	CFAPKG_PROBLEM_NO_VERSION,      /* request matches no version */
	CFAPKG_PROBLEM_GPU_UNSUPPORTED, /* package does not support the GPU target */
	CFAPKG_PROBLEM_OS_UNSUPPORTED,  /* package not available for this OS/arch */
	CFAPKG_PROBLEM_SYSTEM_MISSING,  /* system part version not installed */
	CFAPKG_PROBLEM_DRIVER_TOO_OLD,  /* driver fact below a floor */
	CFAPKG_PROBLEM_HIP_RUNTIME,     /* driver lacks the needed HIP runtime */
	CFAPKG_PROBLEM_EXPERIMENTAL,    /* would need an experimental part */
	CFAPKG_PROBLEM_MISSING_DEP,     /* nothing provides what a package needs */
	CFAPKG_PROBLEM_CONFLICT,        /* two packages conflict */
	CFAPKG_PROBLEM_SAME_NAME,       /* two versions of one package asked for */
	CFAPKG_PROBLEM_PINNED,          /* a pin excludes what is needed */
	CFAPKG_PROBLEM_REQUIRES,        /* context: a package needs a name */
	CFAPKG_PROBLEM_OTHER,
	CFAPKG_PROBLEM_GLIBC_TOO_OLD,   /* the machine's C library is below a floor */
	CFAPKG_PROBLEM_NOT_HERE,        /* passed over: does not provide dep on this GPU */
	CFAPKG_PROBLEM_NOT_INSTALLABLE  /* passed over: cannot be installed (hint: why) */
};

/** One reason a request cannot be met.  Strings are borrowed from the
 * plan.  Versions of the same package blocked for the same reason are
 * merged into one record ("6.4.2, 6.2.4"). */
struct cfapkg_problem {
	enum cfapkg_problem_kind kind;
	unsigned group;            /* libsolv problem number, from 1 */
	const char *package;       /* the part that is blocked, or NULL */
	const char *versions;      /* its blocked versions, comma-separated */
	const char *dep;           /* the requirement or conflict as written */
	const char *other;         /* the other package (conflicts, same name) */
	const char *fact;          /* the machine fact in the way ("gfx1150") */
	const char *have;          /* what the machine has ("6.4.2") */
	const char *alternatives;  /* versions that would fit, comma-separated */
	const char *hint;          /* what the user can do, from the recipes */
	const char *raw;           /* libsolv's own text, for OTHER */
	bool beyond_experimental;  /* found by a second solve that allowed
	                              experimental parts: it blocks even then */
};

struct cfapkg_plan_item {
	const struct cfapkg_version *version;
	const struct cfapkg_source *source;   /* NULL for system, meta, user */
	enum cfapkg_status status;
	bool requested;
	bool installable;
	const char *why_not;                  /* when !installable; borrowed */
};

struct cfapkg_plan;

/** Solves specs (["pytorch-cuda-stack"], ["libtorch-cuda>=2.3,<2.4"]) for
 * the facts.  Returns CFAPKG_OK with a plan whether or not it is solvable
 * (see cfapkg_plan_solved); an error for bad specs or facts.  Owned:
 * cfapkg_plan_free.  The plan borrows recipes from ctx and holds its own
 * copy of the facts. */
CFAPKG_API enum cfapkg_err cfapkg_plan_solve(struct cfapkg_ctx *ctx,
                                             const struct cfapkg_facts *facts,
                                             const char *const *specs, size_t nspecs,
                                             const struct cfapkg_plan_opts *opts,
                                             struct cfapkg_plan **out);
CFAPKG_API void cfapkg_plan_free(struct cfapkg_plan *plan);
CFAPKG_API bool cfapkg_plan_solved(const struct cfapkg_plan *plan);
/** Items in install order (dependencies first).  Borrowed from plan. */
CFAPKG_API const struct cfapkg_plan_item *cfapkg_plan_items(const struct cfapkg_plan *plan,
                                                            size_t *n);
/** A plan that did not solve (cfapkg_plan_solved): why, one reason a
 * record.  Borrowed from plan. */
CFAPKG_API const struct cfapkg_problem *cfapkg_plan_problems(const struct cfapkg_plan *plan,
                                                             size_t *n);
/** A solved plan's passed-over versions: the other versions of each part
 * chosen, and the parts that provide what the set needs, each with why it
 * was not taken (the fact that rules it out, a name it does not provide on
 * this GPU, or that it cannot be installed while the chosen one can).
 * Records of one reason are merged ("6.4.2, 6.2.4"); group is 0.
 * Borrowed from plan. */
CFAPKG_API const struct cfapkg_problem *cfapkg_plan_passed(const struct cfapkg_plan *plan,
                                                           size_t *n);
/** Facts the plan could not check ("driver", "hip_runtime", "hip_sdk",
 * "glibc").  Borrowed from plan. */
CFAPKG_API const char *const *cfapkg_plan_unchecked(const struct cfapkg_plan *plan, size_t *n);
/** The facts the plan was solved for: its own copy, borrowed from plan. */
CFAPKG_API const struct cfapkg_facts *cfapkg_plan_facts(const struct cfapkg_plan *plan);

/** What the solver decided, one line per part of a solved plan (for
 * --verbose): why it is in the plan (the request, or the part whose
 * requirement it meets), how it ranked (installed, validated, candidate on
 * the GPU), and why each other version of its recipe was passed over (a
 * fact rules it out, experimental, a pin, cannot be fetched, ranked
 * lower, older).  Nothing for a plan that did not solve. */
CFAPKG_API enum cfapkg_err cfapkg_plan_decisions(const struct cfapkg_plan *plan,
                                                 void (*line)(void *arg, const char *text),
                                                 void *arg);

/** For a plan that did not solve: the fewest changes that make the same
 * request solve, found by solving again with them (a few dozen solves at
 * most), so that a message can lead with the way out.  NULL when the plan
 * solved, or no such change was found (a GPU no version supports, a name
 * misspelt). */
#define CFAPKG_FIX_STEPS 4
struct cfapkg_plan_fix_step {
	const char *fact;          /* the fact it changes: "hip-sdk", "driver",
	                              "hip-runtime" (cfapkg_facts_set's keys) */
	const char *value;         /* "6.2.4" */
	const char *part;          /* what to get, in words: "hip-sdk 6.2.4" */
	const char *hint;          /* how to get it (the recipe's), or NULL */
};
struct cfapkg_plan_fix {
	bool found;
	bool allow_experimental;   /* and pass --allow-experimental */
	size_t nsteps;
	struct cfapkg_plan_fix_step steps[CFAPKG_FIX_STEPS];
};
CFAPKG_API const struct cfapkg_plan_fix *cfapkg_plan_fix(const struct cfapkg_plan *plan);

/** Writes the solved problem as a libsolv testcase folder (for testsolv). */
CFAPKG_API enum cfapkg_err cfapkg_plan_write_testcase(struct cfapkg_ctx *ctx,
                                                      const struct cfapkg_plan *plan,
                                                      const char *dir);

/** @defgroup fetch Downloads
 * Artifacts land in ROOT/downloads/<sha256>, verified as the bytes arrive
 * (SHA-256 and size; a transfer that runs past its declared size is cut).
 * A download in progress is ROOT/downloads/<name>.part and resumes from
 * there (a byte range guarded by If-Range, so a changed file restarts).
 * An artifact already in the cache costs no network. */
struct cfapkg_unpack_opts {
	unsigned strip;            /* leading folders to drop */
	uint64_t max_bytes;        /* 0 means 64 GiB */
	unsigned max_ratio;        /* unpacked bytes per archive byte; 0 means 1000 */
	bool hash_checked;         /* the archive matched its pinned SHA-256 (or
	                              will before the commit): zip's CRC-32s add
	                              nothing and are not computed */
	const char *label;         /* names the archive in messages ("zluda 7 from
	                              URL"); NULL: the archive's path */
	bool replace;              /* a NAME folder there is damaged (repair): the
	                              new one is built beside it and takes its
	                              name only once whole; the old one stays
	                              until then, whatever fails */
};
/** What an unpack made.  The calls that fill one overwrite it whole: clear
 * a result with cfapkg_unpack_result_clear before it is dropped or reused. */
struct cfapkg_unpack_result {
	char *path;                /* ROOT/store/NAME; NULL before it is known */
	uint64_t files, bytes;
	bool existed;              /* it was unpacked before; nothing was done */
};

struct cfapkg_fetch_item {
	const char *label;         /* for messages: "zluda 6-preview.69" */
	const char *const *urls;   /* the source, then its mirrors */
	size_t nurls;
	const char *sha256;        /* expected (hex), or NULL to learn it */
	int64_t size;              /* expected bytes, or -1 */
	const char *unpack_format; /* with unpack_name: also unpack into
	                              ROOT/store/unpack_name, while the bytes
	                              arrive when the format reads front to
	                              back (tar.*, zip), else from the file */
	const char *unpack_name;
	unsigned unpack_strip;
	bool unpack_replace;       /* cfapkg_unpack_opts.replace */
	bool unpack_set;           /* with unpack_format and unpack_name: one archive
	                              of a set (tar.* or deb; the items of one
	                              unpack_name, in order): all are unpacked while
	                              they arrive, several at once, into that one
	                              store folder, committed once every one is
	                              verified; if that cannot be done they stay in
	                              the cache, unpacked false, for
	                              cfapkg_unpack_set */
	bool user_urls;            /* the URLs were typed by the user ('prefetch'):
	                              file:// is read too, as for URLs a mirror rule
	                              made; other URLs are http(s) only */
	uint64_t max_size;         /* the cap without a size, from the recipe; 0:
	                              the opts' (an explicit opts cap wins) */
	bool https_only;           /* only https:// URLs (http:// to the loopback
	                              host too, which no network carries), each
	                              redirect too: for trusting a first download */
	/* results */
	enum cfapkg_err err;       /* CFAPKG_E_INTEGRITY when any URL served other
	                              bytes than pinned, else the last URL's */
	char *error;               /* why it failed, naming the URL; NULL when it
	                              did not */
	char *tried;               /* URLs given up before the last one tried, one
	                              "URL: why" a line (NULL when none): set also
	                              when a later URL served the file */
	char sha256_out[65];
	uint64_t size_out;
	char *path;                /* the verified file in the cache; NULL when it
	                              failed, or unpacked while it downloaded and
	                              is not kept (keep_archives) */
	bool from_cache;           /* no network was needed */
	uint64_t resumed_from;     /* bytes kept from an earlier attempt */
	unsigned attempts;
	bool unpacked;             /* in the store (unpacked now or before) */
	bool streamed;             /* unpacked while it downloaded */
	struct cfapkg_unpack_result unpack;
	uint64_t kept;             /* after a failure: the bytes its .part keeps in
	                              ROOT/downloads for the next run to resume */
};

struct cfapkg_fetch_progress {
	const struct cfapkg_fetch_item *item;
	uint64_t done, total;      /* total 0 when not known */
	bool finished;
	unsigned attempt;          /* the item's attempts so far (a new one: a retry) */
	uint64_t resumed;          /* of done, the bytes this attempt started with
	                              (kept from before): not this attempt's work */
};

/** What a download is doing, for a front end that says more (--verbose):
 * each URL tried and why it failed.  Called on the fetch's threads, one
 * call at a time, like the progress callback. */
enum cfapkg_fetch_event_kind {
	CFAPKG_FETCH_CACHED,       /* in the download cache: no network */
	CFAPKG_FETCH_TRYING,       /* an attempt at url starts (from: a resume) */
	CFAPKG_FETCH_FAILED,       /* it failed (why); retry_in > 0: that URL again
	                              after so many seconds; next_url: the next URL
	                              is tried; neither: the download gives up */
	CFAPKG_FETCH_VERIFIED      /* url served the file, and it matched */
};
struct cfapkg_fetch_event {
	const struct cfapkg_fetch_item *item;
	enum cfapkg_fetch_event_kind kind;
	const char *url;
	unsigned attempt;          /* at this URL, from 1 */
	uint64_t from;             /* TRYING: bytes already in the .part */
	const char *why;           /* FAILED */
	double retry_in;
	bool next_url;
};

/** The most a download without a declared size may bring (4 GiB), unless
 * cfapkg_fetch_opts.max_unknown_size (the user's cap, first) or the item's
 * max_size (the recipe's) says otherwise: an endless body is cut there and
 * deleted instead of filling the disk. */
#define CFAPKG_MAX_UNKNOWN_SIZE (4ull << 30)

struct cfapkg_fetch_opts {
	unsigned parallel;         /* downloads at once; 0 means 4 */
	unsigned attempts;         /* per URL: failed attempts in a row that added
	                              no bytes before giving up (after timeouts,
	                              stalls, dropped connections, 5xx, 408, 429);
	                              one that added bytes resets the count; 1
	                              means no retry at all; 0 means 5.  Never
	                              more than 100 attempts per URL in all */
	bool offline;              /* fail before any network use */
	const char *ca_bundle;     /* PEM file of trusted CAs, or NULL */
	unsigned stall_secs;       /* cut an attempt when nothing arrives for this
	                              long (from its start or its last byte); 0
	                              means 30 */
	uint64_t max_unknown_size; /* cap when no size is declared; 0 means
	                              CFAPKG_MAX_UNKNOWN_SIZE */
	bool keep_archives;        /* keep an archive unpacked while it downloaded,
	                              made durable in the cache (a mirror, offline
	                              use); false: CFAPKG_KEEP_ARCHIVES=1 decides.
	                              Not kept, it is never flushed to the disk:
	                              the store folder is the copy that lasts */
	void (*progress)(void *arg, const struct cfapkg_fetch_progress *p);
	void *progress_arg;
	const char *proxy;         /* CURLOPT_PROXY (NULL: libcurl's variables) */
	const char *no_proxy;      /* hosts reached directly (NULL: no_proxy's) */
	/* Each attempt and its outcome (arg: progress_arg); NULL: not asked. */
	void (*event)(void *arg, const struct cfapkg_fetch_event *ev);
	/* Set (to nonzero, by a signal handler) to stop every transfer as soon
	 * as it can: the .part files keep what arrived (the items' kept), the
	 * downloads fail with CFAPKG_E_INTERRUPTED, nothing is committed. */
	const volatile sig_atomic_t *interrupt;
	/* Read an APT source's whole index every time, rather than what it
	 * gave for the same packages before (ROOT/apt/lookups, keyed by the
	 * index's SHA-256): the same answers, for comparing them. */
	bool no_index_cache;
};

/** Frees what a fetch left in an item (error, tried, path) and sets it
 * NULL: each cfapkg_fetch does so first, so one item may be fetched again;
 * the caller clears an item it made before letting it go.  The item's own
 * fields (label, urls...) are the caller's and stay. */
CFAPKG_API void cfapkg_fetch_item_clear(struct cfapkg_fetch_item *it);
/** Fetches items into the download cache, several at once.  Each item
 * gets its own result; the return value is CFAPKG_OK only when every item
 * succeeded (else the first failure's code, with its detail in ctx).  An
 * item not in the cache is tried first at the rewrites the mirror rules
 * give its first URL (cfapkg_mirrors_expand), then at its own URLs in
 * order; any failure, a SHA-256 or size mismatch included, moves to the
 * next URL. */
CFAPKG_API enum cfapkg_err cfapkg_fetch(struct cfapkg_ctx *ctx, struct cfapkg_fetch_item *items,
                                        size_t n, const struct cfapkg_fetch_opts *opts);

/** The bytes an archive is expected to take once unpacked: unpacked_size
 * when the recipe records it (>= 0), else an estimate, CFAPKG_UNPACK_ESTIMATE
 * times the archive's size (a plain tar: its size).  size < 0: 0. */
#define CFAPKG_UNPACK_ESTIMATE 3
CFAPKG_API uint64_t cfapkg_unpacked_estimate(const char *format, int64_t size,
                                             int64_t unpacked_size);
/** Refuses (CFAPKG_E_IO) to start when the file system holding the root
 * has less free space than download_bytes (archives not yet in the cache)
 * plus unpack_bytes (what they unpack to, cfapkg_unpacked_estimate): the
 * message names both numbers, the free space and the root, and what to do.
 * Free space that cannot be learned lets it pass.  A test seam:
 * CFAPKG_TEST_FREE_BYTES=N stands in for the free space. */
CFAPKG_API enum cfapkg_err cfapkg_check_space(struct cfapkg_ctx *ctx, uint64_t download_bytes,
                                              uint64_t unpack_bytes);

/** What a file given to cfapkg_add_file is to the recipes. */
struct cfapkg_added_file {
	char sha256[65];
	const char *recipe;        /* the recipe and version that expect it */
	const char *version;       /* (borrowed from ctx) */
	char *what;                /* "user file cublas64_11.dll", "the
	                              windows-x86_64 download", "archive 2 of the
	                              linux-x86_64 set", "the linux-x86_64 APT index",
	                              "libamd_comgr2 of the linux-x86_64 APT index";
	                              owned: cfapkg_added_file_clear */
};
/** Adds a file the user supplies to the download cache, only if a recipe
 * expects its SHA-256: a user file (known only by fingerprint, like the
 * reference overlay's DLLs), a source's archive, an archive of a set, an
 * APT source's pinned index, or a .deb that index names (when the index
 * is in the cache).  An archive added so is a download like any other:
 * an install finds it in the cache, with --offline too. */
CFAPKG_API enum cfapkg_err cfapkg_add_file(struct cfapkg_ctx *ctx, const char *path,
                                           struct cfapkg_added_file *out);
/** Frees what cfapkg_add_file filled in (safe on a zeroed one, and twice). */
CFAPKG_API void cfapkg_added_file_clear(struct cfapkg_added_file *a);

/** @defgroup first_use Trust on first use ('cfapkg recipe trust')
 * For a download nobody has pinned (LibTorch's Linux zip, TheRock's
 * Windows tarballs), the user may choose to trust what the server sends
 * the first time: it is fetched over HTTPS and its SHA-256 and size are
 * recorded in ROOT/first-use.json, with the URL, the date and a warning
 * that it was not checked against anyone else's pin.  Every recipe load
 * then lays the pin over that source (first_use set, "unavailable"
 * cleared), so plan and info mark it and each later download is verified
 * against it.  A recipe that pins the source itself wins. */
struct cfapkg_first_use_pin {
	const char *recipe, *version, *platform; /* the source, as the recipe names it */
	const char *url;           /* the source's URL when it was trusted */
	const char *sha256;
	int64_t size;
	const char *format;        /* the source's format then (NULL: not recorded) */
	const char *recorded;      /* "YYYY-MM-DDTHH:MM:SSZ" */
	const char *status;        /* "applied", or why the loaded recipes do not use it */
};
struct cfapkg_first_use {
	const struct cfapkg_first_use_pin *pins; /* in the order they were recorded */
	size_t npins;
	const char *file;          /* ROOT/first-use.json */
	struct cfa_arena *arena;   /* internal */
};
/** The root's pins trusted on first use, each judged against the loaded
 * recipes.  Owned: cfapkg_first_use_free. */
CFAPKG_API enum cfapkg_err cfapkg_first_use_list(struct cfapkg_ctx *ctx,
                                                 struct cfapkg_first_use **out);
CFAPKG_API void cfapkg_first_use_free(struct cfapkg_first_use *fu);
/** Downloads the source of recipe name, version (as spelt) and platform
 * ("linux-x86_64") and records its SHA-256 and size as trusted on first
 * use.  Refused before any download (CFAPKG_E_USAGE) when the recipe pins
 * the source already or it was trusted before (untrust it first), and
 * (CFAPKG_E_UNSUPPORTED) when the source is a set, an APT source, has no
 * URL, or its URL is not https:// (http:// to this machine itself, which
 * no network carries, is accepted: 127.0.0.1, [::1], localhost).  Mirror
 * rules' plain http:// and file:// rewrites are left out, redirects
 * follow https only, and the archive stays in the download cache.  item
 * gets the download's result (cfapkg_fetch_item_clear frees it).  The
 * caller holds the root's lock. */
CFAPKG_API enum cfapkg_err cfapkg_recipe_trust(struct cfapkg_ctx *ctx, const char *name,
                                               const char *version, const char *platform,
                                               const struct cfapkg_fetch_opts *opts,
                                               struct cfapkg_fetch_item *item);
/** Forgets a pin trusted on first use (CFAPKG_E_NOTFOUND when there is
 * none for that source).  The caller holds the root's lock. */
CFAPKG_API enum cfapkg_err cfapkg_recipe_untrust(struct cfapkg_ctx *ctx, const char *name,
                                                 const char *version, const char *platform);
/** The pins trusted on first use (of the named recipes; all: n 0) as
 * recipe fragments for a channel maintainer: {"format": 1, "warning",
 * "recipes": [{"name", "versions": [{"version", "sources": {PLATFORM:
 * SOURCE}}]}]}, each SOURCE the recipe's own source with the pin put in
 * (url, sha256, size, provenance; no "unavailable"), which a recipe takes
 * as it is.  Owned: cfapkg_free. */
CFAPKG_API enum cfapkg_err cfapkg_first_use_export(struct cfapkg_ctx *ctx,
                                                   const char *const *names, size_t n,
                                                   char **json);

/** @defgroup mirrors Mirror rules
 * URL rewrite rules, one "PREFIX REPLACEMENT" a line ('#' starts a comment
 * line; blank lines are skipped): a download whose URL starts with PREFIX
 * is tried first at REPLACEMENT followed by the rest of the URL.  Read from
 * ROOT/mirrors.conf, then the user's file: the one CFAPKG_MIRRORS names
 * when it is set (set and empty: none), else mirrors.conf in the user's
 * configuration folder ($XDG_CONFIG_HOME/cfapkg, ~/.config/cfapkg,
 * %APPDATA%\cfapkg).  A replacement is an http://, https:// or file://
 * URL, or an absolute path, which becomes a file:// URL.  file:// is read
 * only for URLs a rule made (or the user typed): a recipe's or lockfile's
 * own URLs stay http(s). */
struct cfapkg_mirror_rule {
	const char *prefix;        /* "https://github.com/" */
	const char *replacement;   /* "http://mirror.lab/gh/", "file:///srv/mirror/gh/" */
	const char *file;          /* the file it was read from */
	unsigned line;
};
struct cfapkg_mirrors {
	const struct cfapkg_mirror_rule *rules; /* the root's file first, then the user's */
	size_t nrules;
	const char *files[2];      /* ROOT/mirrors.conf and the user's file (NULL when
	                              there is none to look for) */
	bool found[2];             /* whether each was there */
	struct cfa_arena *arena;   /* internal */
};
/** Reads the rules.  A file that is not there has no rules, unless
 * CFAPKG_MIRRORS names it; a line that is not a rule is CFAPKG_E_USAGE
 * naming the file, the line and what to write.  Owned:
 * cfapkg_mirrors_free. */
CFAPKG_API enum cfapkg_err cfapkg_mirrors_load(struct cfapkg_ctx *ctx, struct cfapkg_mirrors **out);
CFAPKG_API void cfapkg_mirrors_free(struct cfapkg_mirrors *m);
/** The URLs to try for url, in order: the rewrite of every rule whose
 * prefix starts it (in the rules' order, repeats left out), then url.
 * *nrule: how many of them came from rules.  Owned: cfapkg_free(*out)
 * frees the list and its strings. */
CFAPKG_API enum cfapkg_err cfapkg_mirrors_expand(struct cfapkg_ctx *ctx,
                                                 const struct cfapkg_mirrors *m, const char *url,
                                                 char ***out, size_t *n, size_t *nrule);

/** @defgroup channels Signed channels
 * A channel is a static folder (index.json, index.json.sig) that nginx or an
 * object store serves: every recipe of one channel version and its GPU
 * table, signed with ed25519.  A root keeps per channel the keys it trusts
 * and the last index it accepted (docs/channels.md). */
struct cfapkg_channel_build_opts {
	const char *name;          /* written into the index; clients check it */
	uint64_t version;          /* 0: one more than the index in the folder, else 1 */
	unsigned expires_days;     /* 0: 30 */
	const char *const *next_keys; /* public keys (text or .pub files) trusted
	                              for later versions besides the signing one:
	                              how a channel rotates its key */
	size_t nnext_keys;
};
/** Writes a new ed25519 key: the private half to private_file (readable by
 * its owner only; never written over), the public half to public_file and,
 * as base64, into pub_b64 (45 bytes are enough). */
CFAPKG_API enum cfapkg_err cfapkg_channel_keygen(struct cfapkg_ctx *ctx, const char *private_file,
                                                 const char *public_file, char *pub_b64,
                                                 size_t len);
/** Checks every recipe (and gpus.json) in dir as a client will, then writes
 * dir/index.json and dir/index.json.sig signed with key_file. */
CFAPKG_API enum cfapkg_err cfapkg_channel_build(struct cfapkg_ctx *ctx, const char *dir,
                                                const char *key_file,
                                                const struct cfapkg_channel_build_opts *o,
                                                uint64_t *version);

struct cfapkg_channel {
	const char *name, *url;
	const char *upstream;      /* the name its index gives */
	int priority;              /* higher wins for a recipe name several have */
	uint64_t version;          /* the accepted index, 0 when none */
	int64_t expires;           /* its expiry (Unix time), 0 when none */
	const char *const *key_ids; /* the keys trusted for the next version */
	size_t nkey_ids;
};
/** The root's channels, lowest priority first.  Owned:
 * cfapkg_channel_list_free. */
CFAPKG_API enum cfapkg_err cfapkg_channel_list(struct cfapkg_ctx *ctx,
                                               struct cfapkg_channel **out, size_t *n);
CFAPKG_API void cfapkg_channel_list_free(struct cfapkg_channel *list, size_t n);
/** Adds a channel: its index is fetched from url and must be signed by key
 * (a .pub file or its text) before anything is kept. */
CFAPKG_API enum cfapkg_err cfapkg_channel_add(struct cfapkg_ctx *ctx, const char *name,
                                              const char *url, const char *key, int priority,
                                              const struct cfapkg_fetch_opts *fo);
CFAPKG_API enum cfapkg_err cfapkg_channel_remove(struct cfapkg_ctx *ctx, const char *name);

enum cfapkg_channel_outcome {
	CFAPKG_CHANNEL_UPDATED,    /* a newer index was accepted */
	CFAPKG_CHANNEL_CURRENT,    /* the server has the accepted one */
	CFAPKG_CHANNEL_REFUSED     /* why says why; nothing changed */
};
struct cfapkg_channel_update {
	const char *name;
	enum cfapkg_channel_outcome outcome;
	uint64_t from, to;         /* versions before and after */
	enum cfapkg_err err;
	const char *why;
};
/** Fetches the index of one channel (name) or of every one (NULL) and
 * accepts each that is validly signed, newer and not expired.  Each gets
 * its outcome; the return value is the first refusal's.  Owned:
 * cfapkg_channel_updates_free. */
CFAPKG_API enum cfapkg_err cfapkg_channel_update(struct cfapkg_ctx *ctx, const char *name,
                                                 const struct cfapkg_fetch_opts *fo,
                                                 struct cfapkg_channel_update **out, size_t *n);
CFAPKG_API void cfapkg_channel_updates_free(struct cfapkg_channel_update *u, size_t n);
/** A Unix time as UTC "YYYY-MM-DDTHH:MM:SSZ" (an index's expiry). */
CFAPKG_API void cfapkg_format_utc(int64_t t, char buf[32]);

/** @defgroup unpack Unpacking into the store
 * An archive is unpacked into a staging folder beside the store, each file
 * hashed as it is written and then made read-only (no write bits; the
 * read-only attribute on Windows), a manifest written to
 * .cfapkg/manifest.json (the modes as stored),
 * everything synced, and the folder renamed to ROOT/store/NAME in one step.
 * Entries that could reach outside the folder (absolute, "..", drive
 * letters, UNC, backslash tricks, links pointing out), device files,
 * duplicates, names that collide on a case-insensitive file system, and
 * archives that expand past the size or ratio caps are refused. */
/** format: zip, 7z, tar, tar.gz, tar.xz, tar.zst, tar.bz2, deb (its
 * data.tar.*).  name: the store folder ("zluda-6-preview.69-e2959ed1"). */
CFAPKG_API enum cfapkg_err cfapkg_unpack(struct cfapkg_ctx *ctx, const char *archive,
                                         const char *format, const char *name,
                                         const struct cfapkg_unpack_opts *opts,
                                         struct cfapkg_unpack_result *out);

/** Several archives (artifacts[i] names archives[i]'s format and strip),
 * unpacked in order into the one store folder NAME, with one manifest: a
 * path that two of them hold is refused, as a duplicate in one archive is.
 * Formats: the tar family and deb. */
CFAPKG_API enum cfapkg_err cfapkg_unpack_set(struct cfapkg_ctx *ctx, const char *const *archives,
                                             const struct cfapkg_artifact *artifacts, size_t n,
                                             const char *name,
                                             const struct cfapkg_unpack_opts *opts,
                                             struct cfapkg_unpack_result *out);
/** Frees what a result holds and empties it; NULL is ignored. */
CFAPKG_API void cfapkg_unpack_result_clear(struct cfapkg_unpack_result *r);
/** The SHA-256 that names a set of archives in the store and in lockfiles:
 * of each archive's "SHA256 FORMAT STRIP" line, in order. */
CFAPKG_API void cfapkg_artifact_set_digest(const struct cfapkg_artifact *artifacts, size_t n,
                                           char hex[65]);

/** @defgroup env Environments, generations, lockfiles
 * ROOT/envs/ENV/N/ is generation N of an environment: lock.json (the
 * exact set, in the lockfile format), meta.json (when, which command, what
 * changed), runtime.json (what a launcher needs) and view/PART/ (hard links
 * into the store; symbolic links, then copies, where hard links fail).  A
 * generation never changes once written, except for what is learnt of it
 * later: marks.log (known-good, see cfapkg_env_mark), appended to.
 * ROOT/envs/ENV/current names the active one and is replaced by one
 * rename.  Every function that changes a root expects the caller to hold
 * cfapkg_writer_lock. */
#define CFAPKG_LOCK_FORMAT 2
/* Version 1 (no requires, provides or status per part) is still read, for
 * the generations an older cfapkg wrote, but never installed from. */
#define CFAPKG_LOCK_FORMAT_OLDEST 1
#define CFAPKG_DEFAULT_ENV "default"

struct cfapkg_lockfile_part {         /* one part of a locked set */
	const char *name;
	const char *version;
	enum cfapkg_kind kind;
	bool requested;
	const char *url;           /* packages: the source, its mirrors after */
	const char *const *mirrors;
	size_t nmirrors;
	const char *sha256;
	int64_t size;
	const char *format;
	unsigned strip;
	const char *store;         /* packages: folder under ROOT/store */
	uint64_t unpacked_size;    /* bytes once unpacked, as the recipe's source
	                              records them; 0: not known (a lockfile
	                              does not record it) */
	/* A package of several archives (a set, or the .debs an APT source's
	 * index named): all of them, unpacked in order into store; sha256
	 * then names the set (cfapkg_artifact_set_digest), url is NULL and
	 * size is the sum. */
	const struct cfapkg_artifact *artifacts;
	size_t nartifacts;
	/* An APT source whose index has not been read yet: no artifacts, no
	 * sha256 and no store until cfapkg_lockfile_resolve. */
	const struct cfapkg_apt_source *apt;
	const char *const *gfx;    /* GPU targets it supports; empty: any */
	size_t ngfx;
	const struct cfapkg_file_rule *layout;
	size_t nlayout;
	const char *launcher;
	const char *const *path;
	size_t npath;
	const struct cfapkg_env_var *env;
	size_t nenv;
	const char *const *stage;
	size_t nstage;
	const struct cfapkg_user_file *user_files; /* user parts: files by fingerprint */
	size_t nuser_files;
	/* Version 2: what cfapkg_lockfile_verify re-checks.  Requirements on the
	 * driver and the HIP runtime are machine facts, not parts: not listed. */
	const char *const *requires; /* on the lock's machine: "cublas==11" */
	size_t nrequires;
	const char *const *provides; /* "cublas=11", "cuda-driver-api" */
	size_t nprovides;
	int status;                /* enum cfapkg_status on the lock's GPU, -1: not known */
	int64_t max_size;          /* the cap of a download whose size is not known
	                              (the recipe's max_size), -1: the default */
};

struct cfapkg_lockfile {
	unsigned format;
	struct cfapkg_facts facts; /* the machine it was solved for: the lock's own
	                              (cfapkg_lockfile_free frees them) */
	const char *const *requests;
	size_t nrequests;
	const struct cfapkg_lockfile_part *parts; /* dependencies first */
	size_t nparts;
	const char *file;          /* the file it was read from; NULL when made from a plan */
	struct cfa_arena *arena;   /* internal */
};

/** The exact set a solved plan chose, for the specs that asked for it.
 * Fails (CFAPKG_E_UNSUPPORTED) when a part cannot be installed.  Owned:
 * cfapkg_lockfile_free. */
CFAPKG_API enum cfapkg_err cfapkg_lockfile_from_plan(struct cfapkg_ctx *ctx,
                                                 const struct cfapkg_plan *plan,
                                                 const char *const *specs, size_t nspecs,
                                                 struct cfapkg_lockfile **out);
/** Reads the index of each part from an APT source (fetched into the
 * download cache and checked against the recipe's pin) and records the
 * .debs it names as the part's archives, with their URLs, sizes and
 * SHA-256s.  A package the index lacks, or an index that is not the
 * pinned one, is an error naming the index and the package. */
CFAPKG_API enum cfapkg_err cfapkg_lockfile_resolve(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock,
                                               const struct cfapkg_fetch_opts *opts);
/** Reads a lockfile; errors name the file and the JSON path. */
CFAPKG_API enum cfapkg_err cfapkg_lockfile_read(struct cfapkg_ctx *ctx, const char *path,
                                            struct cfapkg_lockfile **out);
/** The lockfile text (JSON).  Owned: cfapkg_free. */
CFAPKG_API enum cfapkg_err cfapkg_lockfile_text(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                            char **out);
CFAPKG_API void cfapkg_lockfile_free(struct cfapkg_lockfile *lock);
struct cfapkg_lockfile_verify_opts {
	bool allow_experimental;   /* parts experimental on the GPU, or whose status
	                              there is not known, may be installed */
};
/** Whether a lock can be installed on a machine, trusting nothing in it:
 * version 2 or newer (an older one records no requirements: re-create it
 * with 'cfapkg lock'); every URL and mirror https:// or http://; the set
 * closed (each part's requirements met by a part that has that name, or
 * provides it, at a version that satisfies them); then the machine: same
 * OS and architecture, a GPU every part supports, the HIP SDKs it uses
 * installed, a driver no older; then, unless opts allow experimental
 * parts, no part experimental (or of unknown status) on the GPU, the GPU
 * not an experimental target, and the lock's statuses recorded for this
 * machine's GPU.  opts NULL: the defaults.  CFAPKG_E_LOCKFILE for what the
 * file lacks or gets wrong, CFAPKG_E_FACTS for what does not fit this
 * machine; each message names the file, the entry and what to do. */
CFAPKG_API enum cfapkg_err cfapkg_lockfile_verify(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                              const struct cfapkg_facts *facts,
                                              const struct cfapkg_lockfile_verify_opts *opts);
/** cfapkg_lockfile_verify with the default options (nothing experimental). */
CFAPKG_API enum cfapkg_err cfapkg_lockfile_check(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                             const struct cfapkg_facts *facts);
/** Brings a lock of an older version (an installed generation's) to the
 * current one: each part's requirements, provides and status on the lock's
 * GPU, from the loaded recipe of the same name and version.
 * CFAPKG_E_NOTFOUND names a part no recipe describes any more (or whose
 * recipe now names another download). */
CFAPKG_API enum cfapkg_err cfapkg_lockfile_upgrade(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock);
/** The part of that name, or NULL. */
CFAPKG_API const struct cfapkg_lockfile_part *cfapkg_lockfile_find(const struct cfapkg_lockfile *lock,
                                                                   const char *name);

/** Refuses names other than letters, digits, '.', '_', '-' (not first). */
CFAPKG_API enum cfapkg_err cfapkg_env_check_name(struct cfapkg_ctx *ctx, const char *env);
CFAPKG_API enum cfapkg_err cfapkg_env_create(struct cfapkg_ctx *ctx, const char *env);
/** Removes an environment (its store prefixes stay until cfapkg_gc).
 * "default" is refused (CFAPKG_E_USAGE): it always exists. */
CFAPKG_API enum cfapkg_err cfapkg_env_remove(struct cfapkg_ctx *ctx, const char *env);
CFAPKG_API bool cfapkg_env_exists(struct cfapkg_ctx *ctx, const char *env);
/** Environment names, sorted, NULL-terminated.  Owned: cfapkg_free. */
CFAPKG_API enum cfapkg_err cfapkg_env_list(struct cfapkg_ctx *ctx, char ***names, size_t *n);
/** The active generation (0: none yet). */
CFAPKG_API enum cfapkg_err cfapkg_env_current(struct cfapkg_ctx *ctx, const char *env,
                                              unsigned *gen);
/** A generation's lock (gen 0: the active one; CFAPKG_E_NOTFOUND when the
 * environment has none).  Owned: cfapkg_lockfile_free. */
CFAPKG_API enum cfapkg_err cfapkg_env_lockfile(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                           struct cfapkg_lockfile **out);
/** The facts the active generation was planned with (its lock's), a copy
 * into out (zeroed or holding facts: it is cleared first; the caller
 * clears it), and that generation's number; CFAPKG_E_NOTFOUND when the
 * environment has none.  A fact the plan did not know stays unknown (gfx
 * "", driver NULL and so on). */
CFAPKG_API enum cfapkg_err cfapkg_env_facts(struct cfapkg_ctx *ctx, const char *env, unsigned *gen,
                                            struct cfapkg_facts *out);
/** A file of a generation: ROOT/envs/ENV/N/what ("lock.json", "view"). */
CFAPKG_API enum cfapkg_err cfapkg_gen_path(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                           const char *what, char *buf, size_t len);

struct cfapkg_commit_result {
	unsigned generation;       /* the new active generation */
	unsigned previous;         /* the one before (0: none) */
	size_t hardlinks, symlinks, copies;
	bool checked;              /* its static checks passed and are recorded: it is
	                              CFAPKG_GEN_CHECKED, not known-good */
	size_t load_host;          /* libraries' needs met only by this system's own
	                              libraries (cfapkg_load_check): works here only */
	char *load_note;           /* the first of them, in words (NULL when none);
	                              cfapkg_commit_result_clear frees it */
};
/** Frees a commit result's text and empties it; NULL is ignored. */
CFAPKG_API void cfapkg_commit_result_clear(struct cfapkg_commit_result *r);
/** Writes a new generation from a lock whose packages are in the store,
 * runs its static checks (every file the parts promise is there), records
 * them (CFAPKG_GEN_CHECKED), and only then makes it current.  On any
 * failure the environment stays as it was.  command and changes are
 * recorded for history. */
CFAPKG_API enum cfapkg_err cfapkg_env_commit(struct cfapkg_ctx *ctx, const char *env,
                                             const struct cfapkg_lockfile *lock, const char *command,
                                             const char *const *changes, size_t nchanges,
                                             struct cfapkg_commit_result *out);
/** Makes an existing generation current (a rollback): one rename, no
 * network, no unpacking.  Recorded in history; a switch to the current
 * generation changes nothing and is not recorded (the active link is only
 * made again). */
CFAPKG_API enum cfapkg_err cfapkg_env_switch(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                             const char *command);

/** What is known of a generation.  Static checks prove only that its files
 * are in place; known-good means it was proven to work on this machine. */
enum cfapkg_gen_state {
	CFAPKG_GEN_UNCHECKED,      /* no record of passed static checks */
	CFAPKG_GEN_CHECKED,        /* its static checks passed (an older cfapkg's
	                              "good" file reads as this, never as more) */
	CFAPKG_GEN_KNOWN_GOOD      /* a live 'cfapkg doctor' probe passed here, or
	                              the user marked it by hand */
};
enum cfapkg_mark_source {
	CFAPKG_MARK_DOCTOR,        /* the live probe: usable for dense/GEMM work */
	CFAPKG_MARK_HAND           /* the user's word: 'cfapkg mark-good', 'unmark' */
};
/** One mark or unmark, as history keeps it (ROOT/envs/ENV/N/marks.log). */
struct cfapkg_gen_mark {
	unsigned generation;
	bool good;                 /* marked known-good; false: the mark was taken away */
	enum cfapkg_mark_source by;
	char time[32];             /* UTC, ISO 8601 */
	const char *reason;        /* "usable: driver, cuBLAS, cuBLASLt OK",
	                              "doctor failed: cuda FAILED: cuInit returned 100" */
	const char *command;       /* the command line that did it; both "" when not
	                              recorded, and held by what holds the record */
};
/** "unchecked", "checked", "known-good".  Static storage. */
CFAPKG_API const char *cfapkg_gen_state_name(enum cfapkg_gen_state s);
CFAPKG_API const char *cfapkg_mark_source_name(enum cfapkg_mark_source by);
/** Marks a generation known-good (state CFAPKG_GEN_KNOWN_GOOD) or takes the
 * mark away (CFAPKG_GEN_CHECKED: what its static checks recorded stays), and
 * records who, why and the command in history (gen 0: the current one).
 * Every call is recorded, even one that leaves the state as it was. */
CFAPKG_API enum cfapkg_err cfapkg_env_mark(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                           enum cfapkg_gen_state state,
                                           enum cfapkg_mark_source by, const char *reason,
                                           const char *command);
/** A generation's state (gen 0: the current one); CFAPKG_E_NOTFOUND when
 * there is no such generation.  Its marks: cfapkg_env_marks. */
CFAPKG_API enum cfapkg_err cfapkg_env_gen_state(struct cfapkg_ctx *ctx, const char *env,
                                                unsigned gen, enum cfapkg_gen_state *state);
/** Every mark and unmark of a generation, oldest first, their text in the
 * same allocation.  Owned: cfapkg_free. */
CFAPKG_API enum cfapkg_err cfapkg_env_marks(struct cfapkg_ctx *ctx, const char *env, unsigned gen,
                                            struct cfapkg_gen_mark **out, size_t *n);

struct cfapkg_history_entry {
	unsigned generation;       /* created, or switched to */
	unsigned from;             /* switches: the generation before */
	bool is_switch;            /* a rollback rather than a new generation */
	char time[32];             /* UTC, ISO 8601 */
	char *command;             /* the command line that made it */
	char *changes;             /* "+zluda 6-preview.69, ~libtorch-cuda ..."; ""
	                              for a switch or a set that changed nothing */
	bool good, current, exists; /* good: known-good (state CFAPKG_GEN_KNOWN_GOOD) */
	/* generations only: */
	bool checked;              /* its static checks passed (state CHECKED or above) */
	enum cfapkg_gen_state state;
	struct cfapkg_gen_mark mark; /* the latest mark or unmark (mark.time "" and its
	                              text NULL: none), its text the entry's own;
	                              cfapkg_env_marks lists them all */
	size_t nmarks;
};
/** History, oldest first.  Owned: cfapkg_history_free(*out, *n). */
CFAPKG_API enum cfapkg_err cfapkg_env_history(struct cfapkg_ctx *ctx, const char *env,
                                              struct cfapkg_history_entry **out, size_t *n);
CFAPKG_API void cfapkg_history_free(struct cfapkg_history_entry *h, size_t n);

/** The generation a rollback from cur goes to: the newest earlier one
 * created (a rollback's switch creates none), or with known_good the
 * newest earlier one marked known-good, its mark in *why (may be NULL;
 * owned: cfapkg_free, one allocation with its text).
 * CFAPKG_E_NOTFOUND, the detail saying what to do, when there is none. */
CFAPKG_API enum cfapkg_err cfapkg_env_rollback_target(struct cfapkg_ctx *ctx, const char *env,
                                                      unsigned cur, bool known_good,
                                                      unsigned *target,
                                                      struct cfapkg_gen_mark **why);
/** What a rollback did: from the generation that was current to the one
 * now current (the same when it already was); with known_good, the
 * target's latest mark in why (owned: cfapkg_free; NULL otherwise). */
struct cfapkg_rollback {
	unsigned from, to;
	struct cfapkg_gen_mark *why;
};
/** A rollback as one call, so that every front end rolls back alike: to
 * generation `to`, or with to 0 to the one cfapkg_env_rollback_target
 * chooses, then cfapkg_env_switch, recorded in history as "rollback FROM
 * -> TO".  The current generation is read once, under the caller's writer
 * lock.  A 'current' that holds no number counts as 0 when `to` is given:
 * that is how it is set again. */
CFAPKG_API enum cfapkg_err cfapkg_env_rollback(struct cfapkg_ctx *ctx, const char *env,
                                               unsigned to, bool known_good,
                                               struct cfapkg_rollback *out);

/** The changes generation gen made, one line each ("+zluda 6-preview.69",
 * "libtorch-cuda 2.3.0+cu118 restored"), NULL-terminated (a history
 * entry's changes are the same, joined).  CFAPKG_E_NOTFOUND when
 * there is no such generation.  Owned: cfapkg_free. */
CFAPKG_API enum cfapkg_err cfapkg_env_gen_changes(struct cfapkg_ctx *ctx, const char *env,
                                                  unsigned gen, char ***lines, size_t *n);

/** Pins of an environment, NULL-terminated.  Owned: cfapkg_free. */
CFAPKG_API enum cfapkg_err cfapkg_env_pins(struct cfapkg_ctx *ctx, const char *env, char ***pins,
                                           size_t *n);
/** Solves specs for env as every command that changes it does (plan shows
 * what install would take): the environment's pins, then opts->pins; the
 * versions its current generation holds kept where they still fit.
 * opts->prefer is not used.  An environment that does not exist, or holds
 * nothing, has no pins and keeps nothing.  As cfapkg_plan_solve otherwise. */
CFAPKG_API enum cfapkg_err cfapkg_env_plan(struct cfapkg_ctx *ctx, const char *env,
                                           const struct cfapkg_facts *facts,
                                           const char *const *specs, size_t nspecs,
                                           const struct cfapkg_plan_opts *opts,
                                           struct cfapkg_plan **out);
/** Adds a pin (replacing one on the same name).  CFAPKG_E_NOTFOUND, with
 * nothing written, for a name no recipe has (naming similar ones) or a
 * constraint no version of the recipe meets (listing its versions);
 * loads the recipes for that. */
CFAPKG_API enum cfapkg_err cfapkg_env_pin(struct cfapkg_ctx *ctx, const char *env, const char *spec);
/** Removes the pin on a name; CFAPKG_E_NOTFOUND when there is none. */
CFAPKG_API enum cfapkg_err cfapkg_env_unpin(struct cfapkg_ctx *ctx, const char *env,
                                            const char *name);

/** Finishes or undoes what an interrupted cfapkg left: half-written
 * generations, staging folders, files being replaced, trash.  *cleaned
 * counts them. */
CFAPKG_API enum cfapkg_err cfapkg_recover(struct cfapkg_ctx *ctx, unsigned *cleaned);

/** One thing gc removes (or, in a dry run, would remove). */
enum cfapkg_gc_kind {
	CFAPKG_GC_GENERATION,      /* env's generation N */
	CFAPKG_GC_STORE,           /* a store folder (name) */
	CFAPKG_GC_DOWNLOAD,        /* an archive in ROOT/downloads (name: its SHA-256) */
	CFAPKG_GC_PART,            /* a partial download (name: NAME.part, or a lone
	                              NAME.part.meta); bytes count its .meta too */
	CFAPKG_GC_LOOKUP,          /* an APT lookup in ROOT/apt/lookups (name: its file)
	                              whose index no recipe pins and the download cache
	                              no longer holds, or that another cfapkg wrote */
	CFAPKG_GC_RECIPE_CACHE     /* a cache in ROOT/cache/recipes of a recipe folder no longer
	                              read, or a write cut short a day ago (name: its file) */
};
struct cfapkg_gc_item {
	enum cfapkg_gc_kind kind;
	const char *env;           /* generations: the environment; else NULL */
	unsigned generation;
	const char *name;          /* the entry's name in ROOT/store or ROOT/downloads;
	                              NULL for generations */
	uint64_t bytes;            /* a generation counts 0: its views are links */
	bool unpacked;             /* downloads: kept generations use it, and its store
	                              folder exists */
};
/** "generation", "store", "download", "partial", "lookup", "recipe-cache".  Static
 * storage. */
CFAPKG_API const char *cfapkg_gc_kind_name(enum cfapkg_gc_kind kind);

struct cfapkg_gc_result {
	size_t generations, prefixes, downloads;
	size_t unpacked;           /* of downloads: archives a kept generation uses
	                              whose store folder exists */
	size_t parts;              /* partial downloads given up (a day old) */
	size_t lookups;            /* APT lookups no longer of use */
	uint64_t bytes;            /* space freed */
	size_t recipe_caches;      /* caches of recipe folders no longer read */
	struct cfapkg_gc_item *items; /* each thing removed, in order (cfapkg_gc_run;
	                              cfapkg_gc leaves NULL) */
	size_t nitems;
};
struct cfapkg_gc_opts {
	unsigned keep;             /* generations to keep per environment (0: all) */
	bool dry_run;              /* decide and list, remove nothing */
	bool downloads_only;       /* only ROOT/downloads (cache clean): no generation
	                              or store folder goes */
};
/** cfapkg_gc with options; out->items lists what was (dry run: would be)
 * removed, decided by the same code either way.  The caller holds
 * cfapkg_writer_lock (also for a dry run, so that what it lists stays so).
 * Owned: cfapkg_gc_result_free. */
CFAPKG_API enum cfapkg_err cfapkg_gc_run(struct cfapkg_ctx *ctx, const struct cfapkg_gc_opts *o,
                                         struct cfapkg_gc_result *out);
CFAPKG_API void cfapkg_gc_result_free(struct cfapkg_gc_result *r);

/** What ROOT/downloads holds: verified archives (and files added with
 * add-file) and partial downloads (NAME.part with its .part.meta). */
struct cfapkg_downloads_info {
	uint64_t files, bytes;
	uint64_t parts, part_bytes;
};
CFAPKG_API enum cfapkg_err cfapkg_downloads_info(struct cfapkg_ctx *ctx,
                                                 struct cfapkg_downloads_info *out);

/** What ROOT/store holds: its folders (one per unpacked package), their
 * regular files and bytes (a file's bytes once: the views are hard links
 * to them). */
struct cfapkg_store_info {
	uint64_t folders, files, bytes;
};
CFAPKG_API enum cfapkg_err cfapkg_store_info(struct cfapkg_ctx *ctx,
                                             struct cfapkg_store_info *out);

/** A cache the stack's programs write outside ROOT (compiled kernels of
 * ZLUDA, MIOpen, Triton, TorchInductor, ROCm's comgr): safe to delete,
 * rebuilt (slowly) on next use; stale after a driver or SDK change. */
struct cfapkg_stack_cache {
	const char *name;          /* "zluda", "miopen", "triton", ... */
	const char *what;          /* "ZLUDA's compute cache" */
	const char *path;          /* its folder here; NULL when the folder it lies
	                              under is not known (no home folder) */
	const char *set_by;        /* the variable that named path; NULL: the
	                              program's default */
	bool present;              /* path is a folder */
	uint64_t files, bytes;     /* regular files under it (links not followed) */
};
/** This platform's stack caches, in a fixed order, with their sizes.
 * Owned: cfapkg_stack_caches_free. */
CFAPKG_API enum cfapkg_err cfapkg_stack_caches(struct cfapkg_ctx *ctx,
                                               struct cfapkg_stack_cache **out, size_t *n);
CFAPKG_API void cfapkg_stack_caches_free(struct cfapkg_stack_cache *c, size_t n);
/** Deletes one cache's folder and everything in it (nothing when it is
 * absent); the error names the folder. */
CFAPKG_API enum cfapkg_err cfapkg_stack_cache_remove(struct cfapkg_ctx *ctx,
                                                     const struct cfapkg_stack_cache *c);
/** Keeps, in each environment, the current generation and the keep newest
 * (0: all), then removes store prefixes no kept generation uses, archives
 * in ROOT/downloads no kept generation needs (unused, or unpacked in the
 * store: CFAPKG_KEEP_ARCHIVES=1 keeps those; an archive whose store folder
 * is missing stays), and partial downloads (NAME.part, NAME.part.meta)
 * last written more than a day ago.  Files added with cfapkg_add_file
 * stay.  The caller holds cfapkg_writer_lock. */
CFAPKG_API enum cfapkg_err cfapkg_gc(struct cfapkg_ctx *ctx, unsigned keep,
                                     struct cfapkg_gc_result *out);

/** Re-hashes the files of every store prefix an environment's active
 * generation uses (env NULL: every environment; each prefix once) against
 * its manifest (contents and permission bits), and checks the generation's
 * view against the store: an entry made as a hard link or a symbolic link
 * must be the store's own file (same device and inode; volume and file
 * index on Windows), one the generation lists as a copy (copies.json) must
 * hash to the manifest's digest.  Each difference goes to fn, naming the
 * environment, the generation and the path ("default generation 4:
 * view/zluda/c10.dll is not the store's file (replaced?)"; a part with
 * many such entries gets a few and a count).  CFAPKG_E_INTEGRITY when
 * there was any. */
CFAPKG_API enum cfapkg_err cfapkg_verify(struct cfapkg_ctx *ctx, const char *env,
                                         void (*fn)(void *arg, const char *problem), void *arg,
                                         size_t *files);

/** What is wrong with one part of a generation (a repair's work list). */
struct cfapkg_damage {
	const char *part;          /* "libtorch-cuda" */
	const char *version;
	const char *store;         /* its folder under ROOT/store; for a user part
	                              the file under ROOT/downloads */
	bool store_missing;        /* the folder or its manifest is gone (user part:
	                              the added file is gone): unpack (add) it again */
	bool store_damaged;        /* a file differs from the manifest (contents or
	                              permission bits): unpack it again */
	bool view_damaged;         /* the view does not hold the store's files: link
	                              it again (a new generation from the same lock).
	                              Set too when the store folder is missing: its
	                              view cannot be checked and must be relinked */
};
/** The parts of an environment's current generation that are damaged, by
 * the checks of cfapkg_verify (whose messages go to fn, which may be
 * NULL); parts that are whole are left out.  *gen: the generation checked
 * (0: none yet, and no list).  A store folder re-made by a repair gives
 * new files, so its views must be relinked after it.  CFAPKG_E_OK however
 * much is damaged.  Owned: cfapkg_free(*out) (one allocation). */
CFAPKG_API enum cfapkg_err cfapkg_env_damage(struct cfapkg_ctx *ctx, const char *env,
                                             void (*fn)(void *arg, const char *problem),
                                             void *arg, unsigned *gen,
                                             struct cfapkg_damage **out, size_t *n);

/** A part of an environment's set whose installed version is experimental
 * on the GPU at hand though validated on another ("zluda 7-preview.10 was
 * validated on gfx1200 only"): one entry per GPU it was validated on. */
struct cfapkg_unvalidated {
	const char *name;          /* "test-overlay" */
	const char *version;
	const char *validated_on;  /* "gfx1200" */
};
/** The parts of env's current generation experimental on gfx that a GPU
 * validated elsewhere, in *out (n entries; cfapkg_free(*out), one
 * allocation; the strings are the recipes', valid while ctx is).  Reads
 * the heads of those parts' recipes only, not every recipe whole.  An
 * environment with no readable set has none (a program still runs); a
 * recipe that cannot be read is an error naming its file. */
CFAPKG_API enum cfapkg_err cfapkg_env_unvalidated(struct cfapkg_ctx *ctx, const char *env,
                                                  const char *gfx,
                                                  struct cfapkg_unvalidated **out, size_t *n);

/** @defgroup trans Transactions: one change to an environment
 * As in libalpm and apk, the library runs the whole change; a front end
 * only asks and shows.  cfapkg_trans_begin takes the root's writer lock
 * and reads the environment; cfapkg_trans_prepare works out the new set
 * (solving, or from a lockfile, re-checked; an APT source's index is
 * fetched then, to learn its .debs) and what changes, including
 * packages whose store folder went missing; cfapkg_trans_commit checks the
 * free space, fetches and unpacks what the store lacks, then writes,
 * checks and switches to a new generation.  On any failure the
 * environment stays as it was.  cfapkg_trans_free releases the lock. */
enum cfapkg_trans_kind {
	CFAPKG_TRANS_INSTALL,      /* add the specs (or install exactly a lockfile) */
	CFAPKG_TRANS_REMOVE,       /* drop the named requests */
	CFAPKG_TRANS_UPDATE,       /* let the named parts (all: none named) move */
	CFAPKG_TRANS_REPAIR        /* the same set, store folders made whole again */
};

struct cfapkg_trans_opts {
	enum cfapkg_trans_kind kind;
	const char *env;           /* NULL: CFAPKG_DEFAULT_ENV */
	const char *const *args;   /* install: specs; remove, update: names */
	size_t nargs;
	const char *locked;        /* install: exactly this lockfile's set */
	const struct cfapkg_facts *facts; /* the machine to plan for: borrowed, as the
	                              rest, until cfapkg_trans_free (the new
	                              set's lock holds its own copy) */
	const char *const *pins;   /* besides the environment's own pins */
	size_t npins;
	bool allow_experimental;
	bool full_pool;
	const char *command;       /* recorded in history */
	unsigned lock_wait_ms;     /* how long to wait for another writer */
	void (*waiting)(void *arg, const char *lock_path); /* once, when another
	                              cfapkg holds the lock */
	void *arg;
	struct cfapkg_fetch_opts fetch; /* with its progress callback */
};

enum cfapkg_change_kind {
	CFAPKG_CHANGE_ADD,
	CFAPKG_CHANGE_REMOVE,
	CFAPKG_CHANGE_MOVE,        /* another version (or another artifact) */
	CFAPKG_CHANGE_RESTORE,     /* same version; its store folder is missing or
	                              damaged and is made again */
	CFAPKG_CHANGE_RELINK,      /* same version; its view is linked again */
	CFAPKG_CHANGE_RECORDS      /* the same set; the generation's own records
	                              (runtime.json), which do not read, are
	                              written again (name: "runtime.json") */
};
struct cfapkg_change {
	enum cfapkg_change_kind kind;
	const char *name;
	const char *from, *to;     /* versions: from NULL for ADD, to NULL for REMOVE */
	const char *text;          /* "+zluda 7", "-foo 1", "zluda 6 -> 7", "zluda 7
	                              (restored)" */
};

struct cfapkg_trans;
CFAPKG_API enum cfapkg_err cfapkg_trans_begin(struct cfapkg_ctx *ctx,
                                              const struct cfapkg_trans_opts *opts,
                                              struct cfapkg_trans **out);
/** CFAPKG_E_UNSOLVABLE when no set fits: cfapkg_trans_plan then holds the
 * problems. */
CFAPKG_API enum cfapkg_err cfapkg_trans_prepare(struct cfapkg_trans *t);
/** The solved plan (NULL for a lockfile install).  Borrowed. */
CFAPKG_API const struct cfapkg_plan *cfapkg_trans_plan(const struct cfapkg_trans *t);
/** The set before (NULL: nothing installed) and after.  Borrowed. */
CFAPKG_API const struct cfapkg_lockfile *cfapkg_trans_old(const struct cfapkg_trans *t);
CFAPKG_API const struct cfapkg_lockfile *cfapkg_trans_new(const struct cfapkg_trans *t);
CFAPKG_API const struct cfapkg_change *cfapkg_trans_changes(const struct cfapkg_trans *t,
                                                            size_t *n);
/** True when the environment already has this set, whole: no commit. */
CFAPKG_API bool cfapkg_trans_nothing_to_do(const struct cfapkg_trans *t);
/** Bytes the commit will download (what the store and cache lack). */
CFAPKG_API uint64_t cfapkg_trans_download_bytes(const struct cfapkg_trans *t);

/** Why a part kept its version when a newer one exists: each asked by
 * solving for the newer version in its place. */
enum cfapkg_kept_why {
	CFAPKG_KEPT_NEWEST,        /* it is the recipe's newest version */
	CFAPKG_KEPT_PINNED,        /* the environment's pin (holder) holds it */
	CFAPKG_KEPT_REQUEST,       /* the environment's request (holder) rules the newer out */
	CFAPKG_KEPT_STATUS,        /* the newer fits but has a lower status on this GPU */
	CFAPKG_KEPT_INSTALLED,     /* the newer fits: an install keeps what is there */
	CFAPKG_KEPT_MISFIT         /* the newer does not fit: problem says why */
};
struct cfapkg_kept {
	const char *name, *version; /* the part, as kept */
	const char *newest;        /* the recipe's newest version */
	const char *want;          /* "NAME==NEWEST", the request that asks for it */
	enum cfapkg_kept_why why;
	const char *holder;        /* PINNED: the pin; REQUEST: the request; else NULL */
	enum cfapkg_status status, newest_status; /* REQUEST, STATUS, INSTALLED: on the GPU */
	const struct cfapkg_problem *problem;      /* MISFIT: the first problem that is not
	                                              the chain of requirements above it */
};
struct cfapkg_kept_list;
/** The reasons for the parts of t's new set named in names (a spec's name
 * counts), or for every requested part when nnames is 0; a part whose
 * recipe is gone, or that the solver could not be asked about, is left
 * out.  Strings are borrowed from the list and t.  Owned:
 * cfapkg_kept_free. */
CFAPKG_API enum cfapkg_err cfapkg_trans_kept(struct cfapkg_ctx *ctx, const struct cfapkg_trans *t,
                                             const char *const *names, size_t nnames,
                                             struct cfapkg_kept_list **out);
/** The reasons, in the order of t's new set.  Borrowed from l (none when
 * l is NULL). */
CFAPKG_API const struct cfapkg_kept *cfapkg_kept_items(const struct cfapkg_kept_list *l,
                                                       size_t *n);
CFAPKG_API void cfapkg_kept_free(struct cfapkg_kept_list *l);

struct cfapkg_trans_result {
	struct cfapkg_commit_result commit; /* its text borrowed from the transaction */
	const struct cfapkg_fetch_item *items; /* what was fetched, each with its
	                              own result (also on failure); borrowed */
	size_t nitems;
};
CFAPKG_API enum cfapkg_err cfapkg_trans_commit(struct cfapkg_trans *t,
                                               struct cfapkg_trans_result *out);
CFAPKG_API void cfapkg_trans_free(struct cfapkg_trans *t);

/** Fetches and unpacks into the store every package of lock that the
 * store lacks (the caller holds the root's lock).  *items lists them with
 * their results (also on failure).  Owned: cfapkg_lockfile_fetch_free. */
CFAPKG_API enum cfapkg_err cfapkg_lockfile_fetch(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile *lock,
                                             const struct cfapkg_fetch_opts *opts,
                                             struct cfapkg_fetch_item **items, size_t *n);
CFAPKG_API void cfapkg_lockfile_fetch_free(struct cfapkg_fetch_item *items, size_t n);

/** @defgroup mirror_create A mirror of a set's downloads
 * Copies every download of a plan or generation into a folder that
 * nginx can serve, with the rules that send a root there
 * (cfapkg_mirror_create). */
enum cfapkg_mirror_how {
	CFAPKG_MIRROR_FROM_CACHE,  /* copied from the download cache */
	CFAPKG_MIRROR_DOWNLOADED,  /* fetched into the cache, then copied */
	CFAPKG_MIRROR_PRESENT      /* the folder held it already */
};
struct cfapkg_mirror_file {
	const char *part, *version;
	const char *url;           /* where clients ask for it */
	const char *path;          /* under the folder: "github.com/vosen/ZLUDA/..." */
	const char *sha256;
	int64_t size;
	bool index;                /* an APT source's Packages index */
	enum cfapkg_mirror_how how;
};
struct cfapkg_mirror_result {
	const struct cfapkg_mirror_file *files;
	size_t nfiles;
	const char *const *prefixes; /* the URL prefixes mirrored ("https://github.com/") */
	const char *const *folders;  /* the folder of each ("github.com", "host_8080") */
	size_t nprefixes;
	const char *example;       /* DIR/mirrors.conf.example */
	const char *const *left_out; /* parts not mirrored, each with why */
	size_t nleft_out;
	struct cfapkg_fetch_item *items; /* the downloads made, with their results */
	size_t nitems;
	struct cfa_arena *arena;   /* internal */
};
/** Copies every archive lock's packages need, and each APT source's index,
 * into dir at HOST/PATH of its URL (HOST_PORT when the URL names a port;
 * the path's %-escapes decoded, as a web server decodes them), so that a
 * web server serves dir as it is.  Each comes from the download cache when
 * it is there, else is fetched (the mirror rules apply); the copy takes
 * its name only once its SHA-256 is the pinned one.  Writes
 * dir/mirrors.conf.example: the rules a client needs, MIRROR standing for
 * the server's address.  Reads APT indexes first (cfapkg_lockfile_resolve).
 * User files are left out (each machine adds them).  The caller holds the
 * root's lock.  *out also on failure.  Owned: cfapkg_mirror_result_free. */
CFAPKG_API enum cfapkg_err cfapkg_mirror_create(struct cfapkg_ctx *ctx, struct cfapkg_lockfile *lock,
                                                const char *dir,
                                                const struct cfapkg_fetch_opts *opts,
                                                struct cfapkg_mirror_result **out);
CFAPKG_API void cfapkg_mirror_result_free(struct cfapkg_mirror_result *r);
/** A signed channel of exactly the recipes lock uses (each as its source
 * gave it, with the built-in GPU table) in dir, for a mirror: clients that
 * add it plan with the mirror's recipes. */
CFAPKG_API enum cfapkg_err cfapkg_channel_publish_set(struct cfapkg_ctx *ctx,
                                                      const struct cfapkg_lockfile *lock,
                                                      const char *dir, const char *key_file,
                                                      const struct cfapkg_channel_build_opts *o,
                                                      uint64_t *version);
/** Whether a package's store folder is there and whole (its manifest). */
CFAPKG_API bool cfapkg_store_has(struct cfapkg_ctx *ctx, const struct cfapkg_lockfile_part *part);
/** The bytes installing part would download: 0 when its store folder is
 * whole, else what the download cache lacks of its archives. */
CFAPKG_API uint64_t cfapkg_part_fetch_bytes(struct cfapkg_ctx *ctx,
                                            const struct cfapkg_lockfile_part *part);

/** @defgroup runtime Running programs under an environment
 * An environment's runtime for this machine (library paths, variables,
 * ZLUDA's launcher, the DLLs Windows needs beside a program).  A front end
 * runs a program with cfapkg_launch_prepare, then cfapkg_exec of its
 * cfapkg_launch_argv; the
 * staging calls are its parts. */
struct cfapkg_stage_file {
	const char *part;          /* the part it comes from */
	const char *from;          /* the file in the generation's view */
	const char *as;            /* its name beside the program */
};

struct cfapkg_runtime_part {
	const char *name, *version;
	enum cfapkg_kind kind;
	const char *prefix;        /* its folder here, NULL when not found */
};

struct cfapkg_runtime {
	unsigned generation;
	const char *env_name;
	const char *os, *gfx;      /* what the generation was made for */
	const char *const *path;   /* folders for PATH (and the library path on
	                              Linux), first wins */
	size_t npath;
	const struct cfapkg_env_var *env; /* variables to set, resolved */
	size_t nenv;
	const char *launcher;      /* program that starts others (Windows), or NULL */
	const struct cfapkg_stage_file *stage;
	size_t nstage;
	const char *const *warnings; /* parts that could not be resolved here */
	size_t nwarnings;
	const struct cfapkg_runtime_part *parts; /* every part, dependencies first */
	size_t nparts;
	struct cfa_arena *arena;   /* internal */
	const char *rocm_prefix;   /* the environment's own ROCm / HIP SDK folder (HIP_PATH,
	                              ROCM_PATH), NULL when programs use the system's */
	const char *const *path_removed; /* other ROCm folders taken off PATH (and the
	                              library path), so two HIP runtimes never mix */
	size_t npath_removed;
	int gpu_index;             /* HIP_VISIBLE_DEVICES, -1 when left alone */
	const char *rocblas_overlay; /* the part whose Tensile files rocBLAS reads, or NULL */
	const char *stable_dir;    /* ROOT/envs/ENV/active when the paths above go through
	                              it (they then follow the next update or rollback);
	                              NULL when they name the generation's own folder */
};

/** What a library of an environment needs that the environment does not
 * hold (cfapkg_load_check). */
struct cfapkg_load_issue {
	const char *part, *version; /* the part holding the library */
	const char *file;          /* the library or program */
	const char *needed;        /* its DT_NEEDED name that was not found */
	const char *host;          /* this system's own copy, NULL when it has none */
	const char *carrier;       /* a Debian set's: the package that should carry it, or NULL */
	const char *carrier_why;   /* "named in libamd-comgr3's Depends", or Debian's naming */
};
typedef void (*cfapkg_load_issue_fn)(void *arg, const struct cfapkg_load_issue *issue);
/** Reads the DT_NEEDED names of every ELF library and program directly in
 * the environment's folders on rt's library path (Linux; a Windows
 * runtime has none to read) and reports each name found neither in a
 * folder of the path, nor through the library's $ORIGIN RUNPATH, nor
 * among the C library's own (libc.so.6, libm.so.6, ld-linux-x86-64.so.2,
 * ...: the machine's).  *missing counts names this system lacks too (the
 * library cannot load), *host those only this system's libraries (below
 * CFAPKG_SYSROOT when set) provide.  Installing refuses a generation with
 * a missing name, naming the library, the name and the package that
 * should carry it, and warns about the others. */
CFAPKG_API enum cfapkg_err cfapkg_load_check(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt,
                                             cfapkg_load_issue_fn fn, void *arg, size_t *missing,
                                             size_t *host);

/** Reads a generation's runtime.json (gen 0: the current one) and resolves
 * it for this machine: a package's {prefix} is its view folder, a system
 * part's the folder where m found it (m may be NULL: then it stays
 * unresolved with a warning); {gfx} is the GPU target, a path ending in
 * /{gfx} falling back to its parent when that folder does not exist.
 * gpu_index >= 0 adds HIP_VISIBLE_DEVICES; < 0 picks, when m has several
 * GPUs, the one of the generation's target (discrete first).  When a part
 * brings its own HIP runtime, HIP_PATH and ROCM_PATH name it, its library
 * folder comes first and other ROCm folders go off the path; the target's
 * gpus.json entry adds HSA_OVERRIDE_GFX_VERSION (Linux, unless the user set
 * it) and DISABLE_ADDMM_CUDA_LT=1 (no hipBLASLt kernels).  Owned:
 * cfapkg_runtime_free. */
CFAPKG_API enum cfapkg_err cfapkg_runtime_load(struct cfapkg_ctx *ctx, const char *env,
                                               unsigned gen, const struct cfapkg_machine *m,
                                               int gpu_index, struct cfapkg_runtime **out);
CFAPKG_API void cfapkg_runtime_free(struct cfapkg_runtime *rt);
/** The value rt gives a path list variable ("PATH", "LD_LIBRARY_PATH"):
 * rt's folders, then the variable's current folders less rt's
 * path_removed, exactly as cfapkg_runtime_apply sets it.  Owned:
 * cfapkg_free. */
CFAPKG_API enum cfapkg_err cfapkg_runtime_path_value(struct cfapkg_ctx *ctx,
                                                     const struct cfapkg_runtime *rt,
                                                     const char *var, char **out);

/** What ROCm a runtime uses and whether its kernels cover the GPU. */
struct cfapkg_rocm_report {
	const char *prefix;        /* the ROCm / HIP SDK in use, NULL when none was found */
	bool from_env;             /* the environment's own (else the system's) */
	const char *gfx;           /* the target kernels are looked up for (override applied) */
	const char *tensile_dir;   /* the folder rocBLAS reads, NULL when unknown */
	const char *tensile_file;  /* the index file found there, NULL when none */
	const char *rocblas_overlay; /* the overlay part providing them, or NULL */
	bool hipblaslt;            /* hipBLASLt has kernels for the target: its files
	                              say (hipblaslt_dir), else gpus.json */
	const char *hipblaslt_dir; /* the folder of hipBLASLt's kernels read, NULL: none */
	const char *hipblaslt_file; /* a kernel file there for the target, NULL: none */
	const char *rocm_part;     /* the environment's part that brings the ROCm in use
	                              ("rocm-debian 6.4.3-5"), NULL when the system's */
	bool addmm_lt_disabled;    /* DISABLE_ADDMM_CUDA_LT=1 is in effect */
	const char *miopen;        /* the MIOpen library found, NULL when none */
	struct cfa_arena *arena;   /* internal */
};
/** Looks at the files of the ROCm rt uses (m may be NULL).  Owned:
 * cfapkg_rocm_report_free. */
CFAPKG_API enum cfapkg_err cfapkg_rocm_check(struct cfapkg_ctx *ctx,
                                             const struct cfapkg_runtime *rt,
                                             const struct cfapkg_machine *m,
                                             struct cfapkg_rocm_report **out);
CFAPKG_API void cfapkg_rocm_report_free(struct cfapkg_rocm_report *r);

/** Sets this process's environment for rt (PATH and, on Linux,
 * LD_LIBRARY_PATH get rt's folders in front; rt's variables are set).  A
 * later call first undoes the previous one, so one process can alternate
 * environments; rt NULL only undoes. */
CFAPKG_API enum cfapkg_err cfapkg_runtime_apply(struct cfapkg_ctx *ctx,
                                                const struct cfapkg_runtime *rt);

/** Sets (value NULL: removes) a variable of this process's environment,
 * which children and later cfapkg_runtime_load calls see.  0 or an errno
 * value. */
CFAPKG_API int cfapkg_setenv(const char *name, const char *value);

/** Places rt's stage files beside a program, in dir.  A file of the same
 * name that cfapkg did not put there is kept aside (NAME.cfapkg-saved) and
 * put back by cfapkg_unstage; dir/.cfapkg-staged.json records what was
 * done, written before each file is touched.  *count: files placed. */
CFAPKG_API enum cfapkg_err cfapkg_stage(struct cfapkg_ctx *ctx, const struct cfapkg_runtime *rt,
                                        const char *dir, size_t *count);
/** Restores dir as it was before cfapkg_stage: removes the files cfapkg
 * placed (unless changed since: those stay, and fn hears of them) and
 * puts saved files back.  CFAPKG_E_NOTFOUND when nothing was staged. */
CFAPKG_API enum cfapkg_err cfapkg_unstage(struct cfapkg_ctx *ctx, const char *dir,
                                          void (*fn)(void *arg, const char *note), void *arg,
                                          size_t *count);

/** "windows" or "linux": the system cfapkg runs on. */
CFAPKG_API const char *cfapkg_host_os(void);
/** Finds a program the way a shell would (a name without a folder is
 * looked up in PATH, with the platform's executable suffixes). */
CFAPKG_API enum cfapkg_err cfapkg_find_program(struct cfapkg_ctx *ctx, const char *name,
                                               char *buf, size_t len);
/** Replaces this process with argv[0] (POSIX), or runs it and waits
 * (Windows); *status gets its exit status where this returns. */
CFAPKG_API enum cfapkg_err cfapkg_exec(struct cfapkg_ctx *ctx, const char *const *argv,
                                       int *status);
/** How args (a program and its arguments) start in rt's environment, as
 * 'cfapkg run' starts them: the program found as a shell would; on
 * Windows, with may_stage, rt's stage files placed beside it (the loader
 * looks there first) and the environment's launcher in front.  Apply rt
 * first (cfapkg_runtime_apply).  On failure *out still says what was
 * done (its program is NULL when none was found: CFAPKG_E_NOTFOUND).
 * Owned: cfapkg_launch_free. */
struct cfapkg_launch;
CFAPKG_API enum cfapkg_err cfapkg_launch_prepare(struct cfapkg_ctx *ctx,
                                                 const struct cfapkg_runtime *rt,
                                                 const char *const *args, size_t nargs,
                                                 bool may_stage, struct cfapkg_launch **out);
/** The command line to hand to cfapkg_exec, NULL-ended.  Borrowed. */
CFAPKG_API const char *const *cfapkg_launch_argv(const struct cfapkg_launch *l);
/** The program's path, NULL when it was not found.  Borrowed. */
CFAPKG_API const char *cfapkg_launch_program(const struct cfapkg_launch *l);
/** Files staged beside the program, and the folder (*dir, borrowed). */
CFAPKG_API size_t cfapkg_launch_staged(const struct cfapkg_launch *l, const char **dir);
CFAPKG_API void cfapkg_launch_free(struct cfapkg_launch *l);
/** Runs argv with its standard output captured (len-1 bytes kept) and a
 * time limit.  *status: the exit status, 128+N for a signal N; *timed_out
 * when it was killed at the limit. */
CFAPKG_API enum cfapkg_err cfapkg_run_capture(struct cfapkg_ctx *ctx, const char *const *argv,
                                              unsigned timeout_ms, char *out, size_t len,
                                              int *status, bool *timed_out);

/** @defgroup venv PyTorch in a Python virtual environment
 * A venv's torch package (ComfyUI's, SD.Next's) loads NVIDIA's CUDA
 * libraries under versioned names: from torch\lib on Windows
 * (cublas64_11.dll), from the nvidia-* wheels' folders that
 * libtorch_cuda.so's DT_RPATH names on Linux (libcublas.so.13).  Staging
 * puts the environment's ZLUDA files of those names there, keeping the
 * wheel's own beside them (NAME.cfapkg-saved) for cfapkg_unstage. */
struct cfapkg_torch_lib {
	const char *family;        /* "cublas", "cublaslt", "cusparse", "cufft", "cufftw",
	                              "cudnn", "nvrtc" */
	const char *name;          /* the name the build loads: "cublas64_11.dll", "libcublas.so.13" */
	const char *dir;           /* the folder the loader takes it from, relative to the
	                              venv; NULL when the venv has none (the loader would look
	                              on the system) */
	unsigned major;            /* the library's version in its name: 11 */
};

struct cfapkg_venv {
	const char *root;          /* the venv, absolute */
	const char *site;          /* its site-packages, relative to root */
	const char *python;        /* its interpreter, or NULL when there is none for this host */
	bool windows;              /* a Windows build (DLLs in torch\lib); else Linux (RPATH) */
	const char *torch_version; /* "2.11.0+cu130" */
	const char *cuda;          /* "13.0" */
	unsigned cuda_major;
	const char *search_path;   /* Linux: libtorch_cuda.so's DT_RPATH (or DT_RUNPATH) as written */
	bool runpath;              /* ... and it is a DT_RUNPATH (searched after LD_LIBRARY_PATH) */
	const struct cfapkg_torch_lib *libs;
	size_t nlibs;
	struct cfa_arena *arena;   /* internal */
};
/** Finds torch in the venv at dir (Lib\site-packages\torch, or
 * lib/pythonX.Y/site-packages/torch), reads its CUDA build from
 * torch/version.py and the CUDA libraries that build loads.  A venv
 * without torch, a CPU or ROCm build: CFAPKG_E_NOTFOUND or
 * CFAPKG_E_UNSUPPORTED, saying which.  Owned: cfapkg_venv_free. */
CFAPKG_API enum cfapkg_err cfapkg_venv_open(struct cfapkg_ctx *ctx, const char *dir,
                                            struct cfapkg_venv **out);
CFAPKG_API void cfapkg_venv_free(struct cfapkg_venv *v);

struct cfapkg_venv_placed {
	const char *path;          /* relative to the venv */
	const char *part, *version; /* the part it comes from; NULL for nvrtc_cuda.dll, a copy
	                              of the wheel's own nvrtc that ZLUDA's nvrtc loads */
	bool saved;                /* the wheel's file is kept as PATH.cfapkg-saved */
};
struct cfapkg_venv_staged {
	const struct cfapkg_venv *venv;
	const struct cfapkg_venv_placed *placed;
	size_t nplaced;
	const char *const *left;   /* libraries the build loads that the environment has
	                              no file for: left as the wheel's ("cufft64_10.dll") */
	size_t nleft;
	size_t restored;           /* files of an earlier staging put back: no longer served */
	struct cfa_arena *arena;   /* internal */
};
/** Stages rt's ZLUDA libraries into the venv at dir under the names its
 * torch loads (staged again: the record's files follow rt; names rt no
 * longer serves get the wheel's file back).  The sources are ZLUDA and
 * the parts that extend it (overlays: a later part wins); a CUDA
 * program's own copies, LibTorch's, never are.  On Windows a ZLUDA nvrtc
 * also gets the wheel's nvrtc as nvrtc_cuda.dll, the name it loads the
 * real one by.  Refused: an environment made for the other OS, and a
 * torch whose cuBLAS name rt has no file for (saying which ZLUDA versions
 * provide it, or that none does).  Recorded in dir and in the root's
 * list of staged venvs (cfapkg_venv_follow, cfapkg_venv_verify).  Owned:
 * cfapkg_venv_staged_free. */
CFAPKG_API enum cfapkg_err cfapkg_venv_stage(struct cfapkg_ctx *ctx,
                                             const struct cfapkg_runtime *rt, const char *dir,
                                             struct cfapkg_venv_staged **out);
CFAPKG_API void cfapkg_venv_staged_free(struct cfapkg_venv_staged *s);
/** Stages again, from env's current generation, every venv staged from
 * env (after an install, update, repair or rollback); fn hears of each
 * ("... now has zluda 6-preview.69's libraries") and of what failed.
 * *count: venvs staged again. */
CFAPKG_API enum cfapkg_err cfapkg_venv_follow(struct cfapkg_ctx *ctx, const char *env,
                                              void (*fn)(void *arg, const char *note), void *arg,
                                              size_t *count);
/** Checks the files staged into the venvs of env (NULL: all): each must
 * be there with the hash it was placed with, from the environment's
 * current generation; fn hears of each problem.  CFAPKG_E_INTEGRITY when
 * there was one.  *files: files checked. */
CFAPKG_API enum cfapkg_err cfapkg_venv_verify(struct cfapkg_ctx *ctx, const char *env,
                                              void (*fn)(void *arg, const char *problem),
                                              void *arg, size_t *files);
/** The environment the venv at dir was last staged from (*env, cfapkg_free),
 * NULL when cfapkg staged nothing there. */
CFAPKG_API enum cfapkg_err cfapkg_venv_env(struct cfapkg_ctx *ctx, const char *dir, char **env);

/** @defgroup doctor Checking that a stack works
 * Static checks of a generation (cfapkg_verify), then a live probe per
 * CUDA library in a child process (cfapkg_probe).  A front end feeds each probe result
 * to a cfapkg_verdict (cfapkg_verdict_new, _add_probe, _usable) and lets
 * it mark the generation known-good (_needs_mark, _mark): which probes
 * carry the GEMM check and what makes a stack usable is the verdict's. */
enum cfapkg_probe_status {
	CFAPKG_PROBE_OK,
	CFAPKG_PROBE_MISSING,      /* the library file is not there */
	CFAPKG_PROBE_FAILED,       /* a call returned an error */
	CFAPKG_PROBE_WRONG,        /* it ran, and computed a wrong result */
	CFAPKG_PROBE_TIMEOUT,
	CFAPKG_PROBE_CRASHED,
	CFAPKG_PROBE_SKIPPED       /* the CUDA driver library it needs is missing */
};

/** One probe's answer.  Its text is allocated, NULL when there is none:
 * cfapkg_probe_result_clear frees it.  A front end may build one too
 * (its own checks) with the text NULL or its own. */
struct cfapkg_probe_result {
	const char *library;       /* "cuda", "cublas", ... */
	enum cfapkg_probe_status status;
	char *file;                /* the file it loaded, or the name it looked for */
	char *detail;              /* what it did, or what failed */
	char *last_step;           /* the last call started (for hangs and crashes) */
};
/** Frees a result's text and empties it; NULL is ignored. */
CFAPKG_API void cfapkg_probe_result_clear(struct cfapkg_probe_result *r);

/** The libraries the probe checks, in order ("cuda" first).  Static
 * storage. */
CFAPKG_API const char *const *cfapkg_probe_libraries(size_t *n);
/** Runs cfapkg-probe (beside the program) for one library in a child
 * process, with the environment currently applied, the folders dirs
 * searched first, and a time limit.  *out is overwritten: clear it
 * before it is reused. */
CFAPKG_API enum cfapkg_err cfapkg_probe(struct cfapkg_ctx *ctx, const char *library,
                                        const char *const *dirs, size_t ndirs,
                                        unsigned timeout_ms, struct cfapkg_probe_result *out);
CFAPKG_API const char *cfapkg_probe_status_name(enum cfapkg_probe_status s);
/** Whether dense/GEMM work goes through library (the driver, cuBLAS,
 * cuBLASLt): its failure, even its absence, makes a stack unusable. */
CFAPKG_API bool cfapkg_probe_carries_gemm(const char *library);

/** The verdict of doctor's live probes on a generation, as every front
 * end should judge it: fed each library's result (and a venv's probe),
 * it says whether the stack is usable for dense/GEMM work, and marks the
 * generation known-good or takes that mark back.  Owned:
 * cfapkg_verdict_free. */
struct cfapkg_verdict;
CFAPKG_API struct cfapkg_verdict *cfapkg_verdict_new(void);
CFAPKG_API void cfapkg_verdict_free(struct cfapkg_verdict *v);
CFAPKG_API enum cfapkg_err cfapkg_verdict_add_probe(struct cfapkg_ctx *ctx,
                                                    struct cfapkg_verdict *v,
                                                    const struct cfapkg_probe_result *r);
/** A failure from another probe (the venv's PyTorch one): unusable. */
CFAPKG_API enum cfapkg_err cfapkg_verdict_add_failure(struct cfapkg_ctx *ctx,
                                                      struct cfapkg_verdict *v,
                                                      const char *what);
CFAPKG_API bool cfapkg_verdict_usable(const struct cfapkg_verdict *v);
/** Failures that are not a missing file (FAILED, WRONG RESULT, TIMEOUT,
 * CRASHED, a failing venv). */
CFAPKG_API unsigned cfapkg_verdict_hard(const struct cfapkg_verdict *v);
/** Every library not OK ("cufft, cudnn"), and what makes the stack
 * unusable ("cuda FAILED: cuInit returned 100"); "" when none.
 * Borrowed from v. */
CFAPKG_API const char *cfapkg_verdict_absent(const struct cfapkg_verdict *v);
CFAPKG_API const char *cfapkg_verdict_failed(const struct cfapkg_verdict *v);
/** Whether v changes generation gen's mark (*state: its state now), so a
 * front end takes the root's writer lock only when it must. */
CFAPKG_API enum cfapkg_err cfapkg_verdict_needs_mark(struct cfapkg_ctx *ctx,
                                                     const struct cfapkg_verdict *v,
                                                     const char *env, unsigned gen,
                                                     enum cfapkg_gen_state *state,
                                                     bool *needed);
/** Records v on gen (hold the root's writer lock): usable marks it
 * known-good, not usable takes the mark back; the reason names what
 * failed, what is absent and dirs (the folders searched first); command
 * is the command line history keeps.  *state: the state after. */
CFAPKG_API enum cfapkg_err cfapkg_verdict_mark(struct cfapkg_ctx *ctx,
                                               const struct cfapkg_verdict *v, const char *env,
                                               unsigned gen, const char *command,
                                               const char *const *dirs, size_t ndirs,
                                               enum cfapkg_gen_state *state);

/** The PyTorch probe: the venv's own interpreter imports torch, asks
 * torch.cuda.is_available(), the device's name, and multiplies two
 * matrices on the GPU against the same product on the CPU, with the
 * environment currently applied.  Each check names the library it points
 * at when it fails ("cublas" for a CUBLAS_STATUS error or a missing
 * libcublas.so.13). */
struct cfapkg_venv_check {
	const char *check;         /* "import torch", "CUDA available", "device", "matmul" */
	enum cfapkg_probe_status status;
	const char *library;       /* the library it points at, or NULL */
	const char *detail;
};
struct cfapkg_venv_loaded {
	const char *family;        /* "cublas", ... "cuda" for the driver */
	const char *path;          /* the file the process loaded */
};
struct cfapkg_venv_probe {
	const char *torch_version, *cuda;
	const struct cfapkg_venv_check *checks;
	size_t nchecks;
	const struct cfapkg_venv_loaded *loaded;
	size_t nloaded;
	struct cfa_arena *arena;   /* internal */
};
/** Runs the probe with v's interpreter, killed after timeout_ms.  Owned:
 * cfapkg_venv_probe_free. */
CFAPKG_API enum cfapkg_err cfapkg_venv_probe(struct cfapkg_ctx *ctx, const struct cfapkg_venv *v,
                                             unsigned timeout_ms, struct cfapkg_venv_probe **out);
CFAPKG_API void cfapkg_venv_probe_free(struct cfapkg_venv_probe *p);
/** Whether every check passed. */
CFAPKG_API bool cfapkg_venv_probe_ok(const struct cfapkg_venv_probe *p);

/** @defgroup bench Comparing two environments
 * Runs one command under two environments in turns (the order rotated)
 * and reads a number from each run; the front end judges on the medians
 * and prints every run. */
struct cfapkg_bench_run {
	unsigned index;            /* in the order run */
	unsigned env;              /* 0 or 1 */
	bool warmup;               /* discarded from the statistics */
	double wall_s;
	bool has_metric;
	double metric;             /* the number --metric captured */
	int status;                /* the exit status; -1 when it timed out */
};
struct cfapkg_bench_opts {
	const struct cfapkg_runtime *runtimes[2];
	unsigned runs, warmup;     /* per environment */
	const char *metric;        /* PCRE2 pattern with one group, or NULL */
	unsigned timeout_ms;       /* per run */
	const char *const *argv;   /* argv[0] a path */
	void (*on_run)(void *arg, const struct cfapkg_bench_run *run);
	void *arg;
};
struct cfapkg_bench_stats {
	size_t n;                  /* runs counted (not warm-up, exit 0, metric found) */
	double min, median, max, mean;
};
/** Runs argv (warmup + runs) times under each runtime, alternating A B A B.
 * Owned: cfapkg_free(*runs). */
CFAPKG_API enum cfapkg_err cfapkg_bench(struct cfapkg_ctx *ctx, const struct cfapkg_bench_opts *o,
                                        struct cfapkg_bench_run **runs, size_t *n);
/** Statistics of one environment's counted runs, of wall time or metric. */
CFAPKG_API void cfapkg_bench_stats(const struct cfapkg_bench_run *runs, size_t n, unsigned env,
                                   bool metric, struct cfapkg_bench_stats *out);
/** B over A: the ratio of the medians, and the spread of the per-round
 * ratios (round k: the k-th measured run of each, both counted). */
struct cfapkg_bench_ratio {
	double of_medians;         /* 0 when either has no counted run or A's is 0 */
	size_t rounds;             /* rounds with both runs counted and A's value not 0 */
	double min, max;           /* of the per-round ratios; 0 when rounds is 0 */
};
CFAPKG_API void cfapkg_bench_ratio(const struct cfapkg_bench_run *runs, size_t n, bool metric,
                                   struct cfapkg_bench_ratio *out);
/** A name for a metric regex: its literal text before the first capture
 * group ("TFLOPS: ([0-9.]+)" gives "TFLOPS"), or "metric".  Writes buf. */
CFAPKG_API const char *cfapkg_bench_metric_name(const char *regex, char *buf, size_t len);

/** @defgroup digest Content hashes
 * SHA-256 as cfapkg pins it, for tools that check a file by hand. */
/** SHA-256 of a file as 64 lower-case hex digits in hex[65]. */
CFAPKG_API enum cfapkg_err cfapkg_sha256_file(struct cfapkg_ctx *ctx, const char *path,
                                              char hex[65], uint64_t *size);

#ifdef __cplusplus
}
#endif
#endif
