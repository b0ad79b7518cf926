/*
 * explain_text.c - problem records to sentences: what is blocked, which
 * fact or constraint blocks it, and what the user can do.
 */
#include <stdio.h>
#include <string.h>

#include "render.h"

const char *problem_kind_name(enum cfapkg_problem_kind k)
{
	/* By enum value: the JSON "kind" of a problem (docs/cli.md). */
	static const char *const names[] = {
		[CFAPKG_PROBLEM_UNKNOWN_NAME] = "unknown-name",
		[CFAPKG_PROBLEM_NO_VERSION] = "no-version",
		[CFAPKG_PROBLEM_GPU_UNSUPPORTED] = "gpu-unsupported",
		[CFAPKG_PROBLEM_OS_UNSUPPORTED] = "os-unsupported",
		[CFAPKG_PROBLEM_SYSTEM_MISSING] = "system-missing",
		[CFAPKG_PROBLEM_DRIVER_TOO_OLD] = "driver-too-old",
		[CFAPKG_PROBLEM_HIP_RUNTIME] = "hip-runtime",
		[CFAPKG_PROBLEM_EXPERIMENTAL] = "experimental",
		[CFAPKG_PROBLEM_MISSING_DEP] = "missing-dependency",
		[CFAPKG_PROBLEM_CONFLICT] = "conflict",
		[CFAPKG_PROBLEM_SAME_NAME] = "same-name",
		[CFAPKG_PROBLEM_PINNED] = "pinned",
		[CFAPKG_PROBLEM_REQUIRES] = "requires",
		[CFAPKG_PROBLEM_OTHER] = "other",
		[CFAPKG_PROBLEM_GLIBC_TOO_OLD] = "glibc-too-old",
		[CFAPKG_PROBLEM_NOT_HERE] = "not-here",
		[CFAPKG_PROBLEM_NOT_INSTALLABLE] = "not-installable"};
	/* A kind past the end of the table reads "other" rather than an index
	 * out of bounds. */
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "other";
}

/* An empty list from the library reads "none" in the sentence. */
static const char *or_none(const char *s)
{
	return s && *s ? s : "none";
}

/* "zluda 6 and 6-preview.69", "hip-sdk 7.2.0, 7.1.1 and 6.4.2" or "zluda";
 * true when that names several versions. */
static bool part(const struct cfapkg_problem *p, char *buf, size_t len)
{
	const char *name = p->package ? p->package : "?";
	const char *last = p->versions ? strrchr(p->versions, ',') : NULL;

	if (!p->versions)
		cli_fit(buf, len, "%s", name);
	else if (!last)
		cli_fit(buf, len, "%s %s", name, p->versions);
	else
		cli_fit(buf, len, "%s %.*s and%s", name, (int)(last - p->versions), p->versions,
		        last + 1);
	return last != NULL;
}

/* The singular or plural form of a verb phrase. */
#define VERB(many, one, more) ((many) ? (more) : (one))

/* The fact is the target the plan is for, and have what gpus.json calls it; the
 * way out names the versions that do support it, or says none does. */
static void gpu_text(const struct cfapkg_problem *p, const char *who, bool many, char *buf,
                     size_t len)
{
	int n = snprintf(buf, len, "%s %s %s%s%s%s", who,
	                 VERB(many, "does not support", "do not support"), p->fact,
	                 p->have ? " (" : "", p->have ? p->have : "", p->have ? ")" : "");
	/* The way out is added only when the first part fit whole. */
	if (n > 0 && (size_t)n < len)
		cli_fit(buf + n, len - (size_t)n, p->alternatives ? "; versions that do: %s"
		        : "; no version of %s does",
		        p->alternatives ? p->alternatives : p->package);
}

/* cfapkg never installs system parts (a ROCm, a HIP SDK): the sentence says
 * so, with the recipe's hint on where to get one. */
static void system_text(const struct cfapkg_problem *p, const char *who, bool many, char *buf,
                        size_t len)
{
	cli_fit(buf, len,
	        "%s %s not installed on this machine (installed: %s); cfapkg does not install "
	        "system parts: %s",
	        who, VERB(many, "is", "are"), or_none(p->have),
	        p->hint ? p->hint : "install it yourself");
}

/* One sentence per record, cut to buf when longer: these go on one line of a
 * plan's output, after the part they are about. */
const char *problem_text(const struct cfapkg_problem *p, const struct cfapkg_facts *f,
                         char *buf, size_t len)
{
	/* who names the blocked part and its versions; many picks the plural
	 * of the verb when several versions are blocked alike. */
	char who[512];
	bool many = part(p, who, sizeof(who));

	switch (p->kind) {
	/* The suggestions are the library's, the same "did you mean" that info
	 * and pin give. */
	case CFAPKG_PROBLEM_UNKNOWN_NAME:
		snprintf(buf, len, "no recipe provides \"%s\"%s%s%s%s", p->package,
		         p->hint ? ": " : "", p->hint ? p->hint : "",
		         p->alternatives ? "; did you mean: " : " (cfapkg search lists them)",
		         p->alternatives ? p->alternatives : "");
		break;
	case CFAPKG_PROBLEM_NO_VERSION:
		snprintf(buf, len, "no version of %s matches \"%s\"; known versions: %s", p->package,
		         p->dep, or_none(p->alternatives));
		break;
	case CFAPKG_PROBLEM_GPU_UNSUPPORTED:
		gpu_text(p, who, many, buf, len);
		break;
	case CFAPKG_PROBLEM_OS_UNSUPPORTED:
		snprintf(buf, len, "%s %s not available for %s-%s", who, VERB(many, "is", "are"), f->os,
		         or_else(f->arch, "unknown"));
		break;
	case CFAPKG_PROBLEM_SYSTEM_MISSING:
		system_text(p, who, many, buf, len);
		break;
	case CFAPKG_PROBLEM_NOT_HERE:
		snprintf(buf, len, "%s %s not provide %s on %s%s%s%s%s%s%s", who,
		         VERB(many, "does", "do"), p->dep, p->fact, p->have ? " (" : "",
		         p->have ? p->have : "", p->have ? ")" : "",
		         p->alternatives ? "; only on " : "", p->alternatives ? p->alternatives : "",
		         "");
		break;
	case CFAPKG_PROBLEM_NOT_INSTALLABLE:
		snprintf(buf, len, "%s cannot be installed: %s", who, or_none(p->hint));
		break;
	case CFAPKG_PROBLEM_GLIBC_TOO_OLD:
		snprintf(buf, len, "%s %s %s; this machine has %s: %s", who,
		         VERB(many, "needs", "need"), p->dep, or_none(p->have),
		         p->hint ? p->hint : "plan for a newer system");
		break;
	case CFAPKG_PROBLEM_DRIVER_TOO_OLD:
		snprintf(buf, len, "%s %s %s, but the driver is %s: %s", who, VERB(many, "needs", "need"),
		         p->dep, or_none(p->have), p->hint ? p->hint : "update the driver");
		break;
	case CFAPKG_PROBLEM_HIP_RUNTIME:
		if (!p->dep) /* the runtime itself: this major is not on the machine */
			cli_fit(buf, len, "the HIP runtime %s is not on this machine, which has: %s; %s",
			        who, or_none(p->have), p->hint ? p->hint : "update the driver");
		else
			cli_fit(buf, len, "%s %s the HIP runtime %s in the driver, which has: %s; %s",
			        who, VERB(many, "needs", "need"), p->dep, or_none(p->have),
			        p->hint ? p->hint : "update the driver");
		break;
	case CFAPKG_PROBLEM_EXPERIMENTAL:
		snprintf(buf, len,
		         "%s %s experimental on %s%s%s%s; cfapkg does not choose experimental parts "
		         "unless you pass --allow-experimental",
		         who, VERB(many, "is", "are"), p->fact, p->have ? " (" : "",
		         p->have ? p->have : "", p->have ? ")" : "");
		break;
	case CFAPKG_PROBLEM_MISSING_DEP:
		snprintf(buf, len, "%s %s %s, and nothing provides it on %s%s%s", who,
		         VERB(many, "needs", "need"), p->dep, f->os, p->hint ? ": " : "",
		         p->hint ? p->hint : "");
		break;
	/* Two HIP runtime majors cannot load in one process: that conflict
	 * gets its own sentence, with the hint to keep to one major. */
	case CFAPKG_PROBLEM_CONFLICT:
		if (p->fact && strcmp(p->fact, "hip_runtime") == 0)
			cli_fit(buf, len, "%s and %s use different HIP runtime majors (%s); %s", who,
			        or_none(p->other), or_none(p->have), p->hint ? p->hint : "");
		else
			cli_fit(buf, len, "%s %s with %s (%s)", who,
			        VERB(many, "conflicts", "conflict"), or_none(p->other), p->dep);
		break;
	case CFAPKG_PROBLEM_SAME_NAME:
		snprintf(buf, len,
		         "only one version of %s can be in an environment, but both %s and %s are "
		         "asked for; drop one of the requests",
		         p->package, p->versions, or_none(p->other));
		break;
	case CFAPKG_PROBLEM_PINNED:
		snprintf(buf, len, "the pin %s rules out the version of %s that is needed",
		         p->dep ? p->dep : "?", p->package ? p->package : "?");
		break;
	case CFAPKG_PROBLEM_REQUIRES:
		snprintf(buf, len, "%s %s %s%s%s", who, VERB(many, "needs", "need"), p->dep,
		         p->hint ? ": " : "", p->hint ? p->hint : "");
		break;
	/* A rule type cfapkg does not describe keeps libsolv's own words. */
	case CFAPKG_PROBLEM_OTHER:
		snprintf(buf, len, "%s", p->raw ? p->raw : "the solver found a problem");
		break;
	}
	return buf;
}
