/*
 * explain_text.c - problem records to sentences: what is blocked, which
 * fact or constraint blocks it, and what the user can do.
 */
#include <stdio.h>
#include <string.h>

#include "render.h"

const char *problem_kind_name(enum cfapkg_problem_kind k)
{
	static const char *const names[] = {
		"unknown-name", "no-version",   "gpu-unsupported", "os-unsupported",
		"system-missing", "driver-too-old", "hip-runtime",  "experimental",
		"missing-dependency", "conflict", "same-name",     "pinned",
		"requires",     "other"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "other";
}

static const char *or_none(const char *s)
{
	return s && *s ? s : "none";
}

/* "zluda 6, 6-preview.69" or "zluda". */
static const char *part(const struct cfapkg_problem *p, char *buf, size_t len)
{
	if (p->versions)
		snprintf(buf, len, "%s %s", p->package ? p->package : "?", p->versions);
	else
		snprintf(buf, len, "%s", p->package ? p->package : "?");
	return buf;
}

static void gpu_text(const struct cfapkg_problem *p, const char *who, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s does not support %s", who, p->fact);
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, p->alternatives ? "; versions that do: %s"
		                                                   : "; no version of %s does",
		         p->alternatives ? p->alternatives : p->package);
}

static void system_text(const struct cfapkg_problem *p, const char *who, char *buf, size_t len)
{
	snprintf(buf, len,
	         "%s is not installed on this machine (installed: %s); cfapkg does not install "
	         "system parts: %s",
	         who, or_none(p->have), p->hint ? p->hint : "install it yourself");
}

const char *problem_text(const struct cfapkg_problem *p, const struct cfapkg_facts *f,
                         char *buf, size_t len)
{
	char who[512];

	part(p, who, sizeof(who));
	switch (p->kind) {
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
		gpu_text(p, who, buf, len);
		break;
	case CFAPKG_PROBLEM_OS_UNSUPPORTED:
		snprintf(buf, len, "%s is not available for %s-%s", who, f->os, f->arch);
		break;
	case CFAPKG_PROBLEM_SYSTEM_MISSING:
		system_text(p, who, buf, len);
		break;
	case CFAPKG_PROBLEM_DRIVER_TOO_OLD:
		snprintf(buf, len, "%s needs %s, but the driver is %s: %s", who, p->dep,
		         or_none(p->have), p->hint ? p->hint : "update the driver");
		break;
	case CFAPKG_PROBLEM_HIP_RUNTIME:
		snprintf(buf, len, "%s needs the HIP runtime %s in the driver, which has: %s; %s", who,
		         p->dep, or_none(p->have), p->hint ? p->hint : "update the driver");
		break;
	case CFAPKG_PROBLEM_EXPERIMENTAL:
		snprintf(buf, len,
		         "%s is experimental on %s; cfapkg does not choose experimental parts "
		         "unless you pass --allow-experimental",
		         who, p->fact);
		break;
	case CFAPKG_PROBLEM_MISSING_DEP:
		snprintf(buf, len, "%s needs %s, and nothing provides it on %s%s%s", who, p->dep,
		         f->os, p->hint ? ": " : "", p->hint ? p->hint : "");
		break;
	case CFAPKG_PROBLEM_CONFLICT:
		snprintf(buf, len, "%s conflicts with %s (%s)", who, or_none(p->other), p->dep);
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
		snprintf(buf, len, "%s needs %s", who, p->dep);
		break;
	case CFAPKG_PROBLEM_OTHER:
		snprintf(buf, len, "%s", p->raw ? p->raw : "the solver found a problem");
		break;
	}
	return buf;
}
