/*
 * lazylib.c - loading a library on first use and binding its functions
 * (see lazylib.h for why).
 */
#include "platform/lazylib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

/* What the loader itself says when a needed library is missing, so that a
 * broken installation reads the same whether it shows at start or later. */
static void give_up(const char *soname, const char *why)
{
	fprintf(stderr, "cfapkg: error while loading shared libraries: %s: %s\n", soname, why);
	_exit(127);
}

void cfa_lazylib_bind(struct cfa_lazylib *lib)
{
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	unsigned i;

	if (!h)
		give_up(lib->soname, dlerror());
	for (i = 0; lib->names[i]; i++)
		if (!(lib->fns[i] = dlsym(h, lib->names[i])))
			give_up(lib->soname, dlerror());
	if (lib->bound)
		lib->bound();
	/* h stays open: the functions are used until the process ends. */
}
