/*
 * ctx.h - the context every call carries: error detail, data root, recipe
 * folders, and the loaded recipes and GPU table (in one arena).
 */
#ifndef CFA_CTX_H
#define CFA_CTX_H

#include "cfapkg.h"
#include "core/arena.h"
#include "core/cache_key.h"
#include "core/compat.h"

struct cfa_gpus;
struct cfa_recipe_image;

struct cfapkg_ctx {
	char err[1024];              /* first failure's detail, one line */
	char *err_long;              /* the whole detail when err could not hold it */
	enum cfapkg_err err_code;
	char *root;
	char **recipe_dirs;          /* added with cfapkg_ctx_add_recipe_dir */
	size_t nrecipe_dirs, recipe_dirs_cap;
	bool loaded;                 /* every recipe of every source */
	bool gpus_loaded;            /* the recipe folders' GPU tables */
	bool no_index;               /* recipe folders are parsed whole, no index */
	/* Only the recipes a request can reach (cfa_recipes_load_reaching),
	 * and the names it was asked for. */
	bool partial;
	const char **reach_names;
	size_t nreach_names;
	/* Recipes that cannot be installed on the platform were left out
	 * (a plan that fails then reads them all, to name them). */
	bool narrowed;
	const char *reach_os, *reach_arch;
	/* That load's reach record key, or a whole load's key (all its
	 * sources' keys; "" when it has none), and the stamp of
	 * ROOT/first-use.json as its pins were laid over the recipes ("" when
	 * there is none): with the request and facts, what a plan is solved
	 * on (solver/plan_memo.c). */
	char reach_key[65];
	char first_use_stamp[64];
	/* A whole load's sources as it reads them (cfa_load_key_add): its
	 * reach_key once done, unless a source had no key. */
	struct cfa_key load_key;
	bool load_unkeyed;
	struct cfa_arena arena;      /* recipes, versions, strings */
	struct cfapkg_recipe **recipes; /* sorted by name */
	size_t nrecipes, recipes_cap;
	struct cfa_gpus *gpus;       /* NULL until first needed */
	/* The images a plan's load read heads from, kept open until the plan
	 * has read the details of what it picked (cfa_recipe_images_close). */
	struct cfa_recipe_image **images;
	size_t nimages, images_cap;
	/* ROOT/cache/recipes once made for this root: every cache path of
	 * a command is under it, and making it once saves a stat and a
	 * mkdir per path. */
	char *recipe_cache;
};

/* Records the first failure's detail and returns err.  A later failure
 * keeps the first detail: callers above only pass the code along. */
enum cfapkg_err cfa_fail(struct cfapkg_ctx *ctx, enum cfapkg_err err, const char *fmt, ...)
	CFA_PRINTF(3, 4);
enum cfapkg_err cfa_nomem(struct cfapkg_ctx *ctx);
/* The failure recorded already, with more said after it (" (what to do)"),
 * under code err: for a caller that knows the way out a callee's message
 * cannot.  Out of memory the first message stays as it was. */
enum cfapkg_err cfa_fail_more(struct cfapkg_ctx *ctx, enum cfapkg_err err, const char *fmt, ...)
	CFA_PRINTF(3, 4);

/* The built-in recipe folder (cfapkg_builtin_recipe_dir), or NULL with
 * CFAPKG_E_NOMEM when it could not be worked out for want of memory. */
enum cfapkg_err cfa_builtin_recipe_dir(struct cfapkg_ctx *ctx, const char **out);

/* Test hook for the crash tests: when CFAPKG_CRASH_AFTER=N is set, the
 * Nth call kills the process on the spot.  Placed between the steps of
 * every change to a root. */
void cfa_crash_point(void);


#endif
