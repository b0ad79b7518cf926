/*
 * dynlib.c - dlopen and LoadLibrary behind one interface, and a crash in a
 * loaded library ending the process at once.
 */
#include "platform/dynlib.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
static void reason(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#endif

/* A reason into why (may be NULL); one too long for it ends in "..." so
 * that the cut shows. */
static void reason(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(why, len, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n >= len && len > 4)
		memcpy(why + len - 4, "...", 4);
}

#ifdef _WIN32
#include <windows.h>

const char *cfa_dl_os(void)
{
	return "windows";
}

char cfa_dl_path_sep(void)
{
	return ';';
}

/* UTF-8 to a new UTF-16 string (free), or NULL: paths of any length. */
static wchar_t *widen(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
	wchar_t *w = n > 0 ? malloc((size_t)n * sizeof(wchar_t)) : NULL;

	if (w && MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n) != n) {
		free(w);
		w = NULL;
	}
	return w;
}

void *cfa_dl_open(const char *path, char *why, size_t len)
{
	wchar_t *w = widen(path);
	HMODULE h;

	if (!w) {
		reason(why, len, "cannot convert the name (out of memory, or not UTF-8)");
		return NULL;
	}
	/* Search the library's own folder for its dependencies, as a program
	 * folder would. */
	h = LoadLibraryExW(w, NULL, strchr(path, '\\') || strchr(path, '/')
	                                ? LOAD_WITH_ALTERED_SEARCH_PATH : 0);
	free(w);
	if (!h)
		reason(why, len, "LoadLibrary error %lu", (unsigned long)GetLastError());
	return (void *)h;
}

void *cfa_dl_sym(void *lib, const char *name)
{
	return (void *)GetProcAddress((HMODULE)lib, name);
}

int cfa_dl_exists(const char *path)
{
	wchar_t *w = widen(path);
	DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;

	free(w);
	return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

/* The last filter before the system's own handling: Windows consults it
 * before Windows Error Reporting, and Wine before it starts winedbg (Wine
 * does not look at the error mode there). */
static LONG WINAPI end_process(EXCEPTION_POINTERS *e)
{
	TerminateProcess(GetCurrentProcess(), e->ExceptionRecord->ExceptionCode);
	return EXCEPTION_EXECUTE_HANDLER; /* not reached */
}

void cfa_dl_crash_ends_process(void)
{
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
	SetUnhandledExceptionFilter(end_process);
}
#else
#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/stat.h>

const char *cfa_dl_os(void)
{
	return "linux";
}

char cfa_dl_path_sep(void)
{
	return ':';
}

void *cfa_dl_open(const char *path, char *why, size_t len)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		const char *e = dlerror();
		reason(why, len, "%s", e ? e : "cannot load");
	}
	return h;
}

void *cfa_dl_sym(void *lib, const char *name)
{
	return dlsym(lib, name);
}

int cfa_dl_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The signal already ends the process; only the core file goes, which
 * could take long to write with a GPU driver's mappings in it. */
void cfa_dl_crash_ends_process(void)
{
	struct rlimit core;

	if (getrlimit(RLIMIT_CORE, &core) == 0) {
		core.rlim_cur = 0;
		setrlimit(RLIMIT_CORE, &core);
	}
}
#endif
