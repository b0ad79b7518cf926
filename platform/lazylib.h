/*
 * lazylib.h - shared libraries loaded on first use (Linux).  The dynamic
 * loader maps a program's libraries, and theirs, before main: libcurl
 * alone brings some forty (TLS, LDAP, Kerberos, SSH), libarchive ICU's
 * tables, libsolvext librpm.  Commands that never download, unpack or
 * write a solver testcase (plan, rollback, list, an install with nothing
 * to do) should not pay for them, nor for cJSON once the recipes are read
 * from their images, nor for libsolv when they neither solve nor read a
 * recipe cache (rollback, list, history).  So cfapkg does not link these;
 * platform/lazy_*.c define their functions under the same names, and the
 * first call of any of them loads the real library and binds all of its
 * functions at once.
 */
#ifndef CFA_LAZYLIB_H
#define CFA_LAZYLIB_H

#include <pthread.h>

struct cfa_lazylib {
	const char *soname;          /* "libcurl.so.4": the ABI the headers are for */
	const char *const *names;    /* the functions to bind, in the order of fns */
	void **fns;
	void (*bound)(void);         /* run once all are bound; NULL for none */
};

/* Loads lib and binds every function of names into fns.  A library or
 * function that cannot be found ends the process as the loader would have
 * at start-up: the name and the reason on standard error, exit status
 * 127.  Each binding file calls it under its own pthread_once, so the
 * first call from any thread binds and the others wait for it. */
void cfa_lazylib_bind(struct cfa_lazylib *lib);

/* The functions of one library, for its binding file: LAZY_FN(i) is the
 * bound function number i (a void *, cast by the caller). */
#define CFA_LAZYLIB(soname, names, count) CFA_LAZYLIB_THEN(soname, names, count, NULL)

/* The same, with bound run once the library's functions are bound (to
 * hand it settings made before it was loaded). */
#define CFA_LAZYLIB_THEN(soname, names, count, bound)                        \
	static void *lazy_fns[count];                                        \
	static struct cfa_lazylib lazy_lib = {soname, names, lazy_fns, bound}; \
	static pthread_once_t lazy_once = PTHREAD_ONCE_INIT;                 \
	static void lazy_load(void)                                          \
	{                                                                    \
		cfa_lazylib_bind(&lazy_lib);                                 \
	}                                                                    \
	static void *lazy_fn(unsigned i)                                     \
	{                                                                    \
		pthread_once(&lazy_once, lazy_load);                         \
		return lazy_fns[i];                                          \
	}

/* For a binding file's list of functions, X(return type, name,
 * parameters, arguments): its name, its number F_name, and its definition
 * calling the bound function. */
#define CFA_LAZY_NAME(ret, name, params, args) #name,
#define CFA_LAZY_ID(ret, name, params, args) F_##name,
#define CFA_LAZY_DEFINE(ret, name, params, args)                 \
	ret name params                                          \
	{                                                        \
		return ((ret(*) params)lazy_fn(F_##name))args;   \
	}

/* The same for a list's V(name, parameters, arguments): a function that
 * returns nothing. */
#define CFA_LAZY_VNAME(name, params, args) #name,
#define CFA_LAZY_VID(name, params, args) F_##name,
#define CFA_LAZY_VDEFINE(name, params, args)                     \
	void name params                                         \
	{                                                        \
		((void(*) params)lazy_fn(F_##name))args;         \
	}

#endif
