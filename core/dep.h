/*
 * dep.h - constraints on names: "zluda", "zluda==7-preview.10",
 * "libtorch-cuda>=2.3,<2.4", "hip-sdk==6.4.*", "cublas = 11".
 *
 * Clauses are joined by commas and all must hold.  A clause whose version
 * has no build label and no Debian revision ignores both in what it is
 * matched against, so "==2.3.0" matches 2.3.0+cu118 and "==5.2.3" matches
 * 5.2.3-2, while "==2.3.0+cu118" and "==5.2.3-2" compare everything.
 */
#ifndef CFA_DEP_H
#define CFA_DEP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/arena.h"
#include "core/version.h"

#define CFA_NAME_MAX 128
#define CFA_RANGE_CLAUSES_MAX 8

enum cfa_op { CFA_OP_EQ, CFA_OP_NE, CFA_OP_GE, CFA_OP_LE, CFA_OP_GT, CFA_OP_LT };

struct cfa_clause {
	enum cfa_op op;
	struct cfa_ver ver;
};

struct cfa_range {
	const char *name;      /* NUL-terminated, arena-owned */
	const char *text;      /* canonical spelling: "libtorch-cuda>=2.3,<2.4" */
	unsigned nclauses;     /* 0: any version */
	struct cfa_clause *clauses;
};

/* Parses text into r; strings and clauses are allocated in a.  On failure
 * returns false with a short reason in *why (NULL why when out of memory). */
bool cfa_range_parse(struct cfa_arena *a, const char *text, struct cfa_range *r,
                     const char **why);
bool cfa_range_match(const struct cfa_range *r, const struct cfa_ver *v);
bool cfa_name_valid(const char *s, size_t n);
const char *cfa_op_text(enum cfa_op op);

struct cfapkg_facts;
struct cfapkg_dep;
/* Whether s is one of the n strings of list; NULL (a fact not known,
 * such as an arch) is in none. */
bool cfa_in_list(const char *s, const char *const *list, size_t n);
/* Whether a dependency applies on a machine: its OS and GPU conditions
 * hold (the one rule the solver and the lockfile checks share). */
bool cfa_dep_applies(const struct cfapkg_facts *f, const struct cfapkg_dep *d);

#endif
