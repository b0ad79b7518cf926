/*
 * solv_linked.c - libsolv's version where libsolv is linked as usual (the
 * Windows build, or lazy loading turned off); lazy_solv.c answers where
 * it is loaded on first use.
 */
#include <solv/solvversion.h>

#include "platform/platform.h"

const char *cfa_plat_solv_version(void)
{
	return solv_version;
}
