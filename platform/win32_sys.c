/*
 * win32_sys.c - Windows queries for detection and running programs:
 * registry, System32, file versions, DXGI adapters, the user's folders
 * other programs cache under, and a program run with its output captured
 * and a timeout.
 */
#define WIN32_LEAN_AND_MEAN
/* For the C call macros of DXGI's COM interfaces (IDXGIFactory1_EnumAdapters1
 * and the like). */
#define COBJMACROS
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <dxgi.h>

#include "platform/platform.h"
#include "platform/win32_util.h"

double cfa_plat_now(void)
{
	LARGE_INTEGER f, c;

	/* The performance counter never fails on Windows XP and later; the
	 * tick count is only a fallback of millisecond grain. */
	if (!QueryPerformanceFrequency(&f) || !QueryPerformanceCounter(&c))
		return (double)GetTickCount64() / 1000.0;
	return (double)c.QuadPart / (double)f.QuadPart;
}

void cfa_plat_sleep_ms(unsigned ms)
{
	Sleep(ms);
}

/* Appends one argument quoted the way CommandLineToArgvW splits it; false
 * when it does not fit in cap (with its terminator). */
static bool quote_arg(const wchar_t *a, wchar_t *out, size_t *n, size_t cap)
{
	/* The rules: backslashes are literal except before a quote, where
	 * 2n backslashes and a quote give n backslashes and open or close a
	 * quoted part, and 2n + 1 give n and a literal quote. */
	size_t slashes = 0;
	/* An empty argument must be written "" or it would vanish. */
	bool quote = !*a || wcspbrk(a, L" \t\"") != NULL, fits = true;

	/* PUT always leaves room for the terminator, and notes a character
	 * that did not fit. */
#define PUT(c)                             \
	do {                               \
		if (*n + 1 < cap)          \
			out[(*n)++] = (c); \
		else                       \
			fits = false;      \
	} while (0)
	if (quote)
		PUT(L'"');
	for (; *a; a++) {
		if (*a == L'\\') {
			slashes++;
		} else if (*a == L'"') {
			for (; slashes; slashes--)
				PUT(L'\\');
			PUT(L'\\');
		} else {
			slashes = 0;
		}
		PUT(*a);
	}
	if (quote) {
		for (; slashes; slashes--)
			PUT(L'\\'); /* doubled before the closing quote */
		PUT(L'"');
	}
#undef PUT
	out[*n] = 0;
	return fits;
}

/* The command line for argv in *out (free); ENOMEM, or E2BIG when it is
 * longer than CreateProcessW takes (32767 characters): a program given a
 * cut argument would act on something else than asked. */
static int command_line(const char *const *argv, wchar_t **out)
{
	size_t cap = 32768, n = 0, i;
	wchar_t *cmd = malloc(cap * sizeof(wchar_t));
	int rc = 0;

	*out = NULL;
	if (!cmd)
		return ENOMEM;
	cmd[0] = 0;
	for (i = 0; argv[i] && !rc; i++) {
		wchar_t *w = cfa_win_widen(argv[i]);
		/* Arguments are separated by one space. */
		if (i && n + 1 < cap)
			cmd[n++] = L' ';
		else if (i)
			rc = E2BIG;
		/* An argument too long to widen at all is too long for any
		 * command line: that is E2BIG, not a lack of memory. */
		if (!w)
			rc = MultiByteToWideChar(CP_UTF8, 0, argv[i], -1, NULL, 0) > (int)cap ? E2BIG
			                                                                    : ENOMEM;
		else if (!rc && !quote_arg(w, cmd, &n, cap))
			rc = E2BIG;
		free(w);
	}
	if (rc)
		free(cmd);
	else
		*out = cmd;
	return rc;
}

/* An inheritable temporary file that deletes itself when closed. */
static HANDLE temp_output(void)
{
	/* Inheritable, so the child can write to it as its standard
	 * output. */
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	wchar_t dir[MAX_PATH], path[MAX_PATH];

	if (!GetTempPathW(MAX_PATH, dir) || !GetTempFileNameW(dir, L"cfa", 0, path))
		return INVALID_HANDLE_VALUE;
	/* A file rather than a pipe: a pipe needs a thread draining it while
	 * the child runs, or a child writing more than the pipe holds blocks
	 * forever.  FILE_ATTRIBUTE_TEMPORARY keeps it in memory where the
	 * cache allows. */
	return CreateFileW(path, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa,
	                   CREATE_ALWAYS, FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE, NULL);
}

/* CreateProcessW with the error mode that children inherit set so that a
 * crash or a missing DLL in the child ends it instead of holding it behind
 * an error dialog (Windows Error Reporting) that no one will click.  Our
 * own error mode is put back: it is the children's, not ours. */
static BOOL create_quiet_process(wchar_t *exe, wchar_t *cmd, STARTUPINFOW *si,
                                 PROCESS_INFORMATION *pi)
{
	/* SetErrorMode has no getter: the old mode is read by setting one. */
	UINT mine = SetErrorMode(0);
	DWORD why;
	BOOL ok;

	SetErrorMode(mine | SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX |
	             SEM_NOOPENFILEERRORBOX);
	ok = CreateProcessW(exe, cmd, NULL, NULL, TRUE, CREATE_NO_WINDOW, NULL, NULL, si, pi);
	/* Kept across SetErrorMode so that the caller reads CreateProcessW's
	 * error. */
	why = GetLastError();
	SetErrorMode(mine);
	SetLastError(why);
	return ok;
}

int cfa_plat_run_capture(const char *const *argv, unsigned timeout_ms, char *out, size_t len,
                         int *status)
{
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	HANDLE tmp = temp_output();
	wchar_t *cmd = NULL, *exe = cfa_win_widen(argv[0]);
	DWORD code = 0, got = 0;
	int rc = command_line(argv, &cmd);

	out[0] = '\0';
	if (rc || tmp == INVALID_HANDLE_VALUE || !exe) {
		rc = rc ? rc : tmp == INVALID_HANDLE_VALUE ? EACCES : ENOMEM;
		goto out;
	}
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdOutput = tmp;
	si.hStdError = tmp;
	/* No standard input at all: the child cannot read from, or wait on,
	 * the user's console. */
	si.hStdInput = NULL;
	if (!create_quiet_process(exe, cmd, &si, &pi)) {
		rc = GetLastError() == ERROR_FILE_NOT_FOUND ? ENOENT : EACCES;
		goto out;
	}
	if (WaitForSingleObject(pi.hProcess, timeout_ms) != WAIT_OBJECT_0) {
		/* TerminateProcess only starts the ending; the bounded wait
		 * lets it finish without ever hanging the caller. */
		TerminateProcess(pi.hProcess, 1);
		WaitForSingleObject(pi.hProcess, 5000);
		rc = ETIMEDOUT;
	} else {
		GetExitCodeProcess(pi.hProcess, &code);
		*status = (int)code;
	}
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	/* The child wrote through its own copy of the handle, which shares
	 * this file position: rewind to read from the start. */
	SetFilePointer(tmp, 0, NULL, FILE_BEGIN);
	/* Only the first len - 1 bytes: the rest of a long output is
	 * dropped. */
	if (len > 1 && ReadFile(tmp, out, (DWORD)(len - 1), &got, NULL))
		out[got] = '\0';
out:
	if (tmp != INVALID_HANDLE_VALUE)
		CloseHandle(tmp);
	free(cmd);
	free(exe);
	return rc;
}

const char *cfa_plat_getenv(const char *name, char *buf, size_t len)
{
	wchar_t *w = cfa_win_widen(name);
	const wchar_t *v = w ? _wgetenv(w) : NULL;
	/* _wgetenv, not getenv: getenv's copy of the environment is in the
	 * ANSI code page and loses characters outside it. */
	const char *r = v && cfa_win_narrow(v, buf, len) == 0 ? buf : NULL;

	free(w);
	return r;
}

int cfa_plat_getenv_dup(const char *name, char **out)
{
	wchar_t *w = cfa_win_widen(name);
	const wchar_t *v = w ? _wgetenv(w) : NULL;
	int rc = !w ? ENOMEM : !v ? ENOENT : 0;

	if (!rc && !(*out = cfa_win_narrow_dup(v)))
		rc = ENOMEM;
	free(w);
	return rc;
}

/* The folder a variable names, with \cfapkg after it. */
static int cfapkg_under(const char *variable, char **out)
{
	char *base = NULL;
	int rc = cfa_plat_getenv_dup(variable, &base);
	size_t n;

	/* An empty value is as good as none: "\cfapkg" alone would be a
	 * folder at the root of the current drive. */
	if (!rc && !*base)
		rc = ENOENT;
	n = rc ? 0 : strlen(base);
	if (!rc && !(*out = malloc(n + sizeof("\\cfapkg"))))
		rc = ENOMEM;
	if (!rc) {
		memcpy(*out, base, n);
		memcpy(*out + n, "\\cfapkg", sizeof("\\cfapkg"));
	}
	free(base);
	return rc;
}

int cfa_plat_config_dir(char **out)
{
	/* The roaming profile: settings follow the user to other machines of
	 * a domain. */
	return cfapkg_under("APPDATA", out);
}

int cfa_plat_system_config_dir(char **out)
{
	/* %ProgramData% (C:\ProgramData): shared by all users, like /etc. */
	return cfapkg_under("ProgramData", out);
}

/* The first of names that is set and not empty: 0, ENOENT or ENOMEM. */
static int first_env(const char *const *names, size_t n, bool dir, char **out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int rc = cfa_plat_getenv_dup(names[i], out);
		if (rc == ENOMEM)
			return rc;
		if (!rc && **out && (!dir || cfa_plat_is_dir(*out)))
			return 0;
		/* Set but empty, or not a folder: freed, and the next name is
		 * tried. */
		if (!rc)
			free(*out);
		*out = NULL;
	}
	return ENOENT;
}

/* GetTempPathW's folder, without its last backslash. */
static int system_temp(char **out)
{
	wchar_t w[MAX_PATH + 2];
	DWORD n = GetTempPathW(MAX_PATH + 2, w);

	/* GetTempPathW returns the length needed when the buffer is too
	 * small; MAX_PATH + 1 is its documented maximum. */
	if (n == 0 || n > MAX_PATH + 1)
		return ENOENT;
	/* "C:\" keeps its backslash: "C:" alone means the current folder on
	 * drive C. */
	if (n > 3 && w[n - 1] == L'\\')
		w[n - 1] = L'\0';
	return (*out = cfa_win_narrow_dup(w)) ? 0 : ENOMEM;
}

int cfa_plat_user_dir(enum cfa_user_dir which, char **out)
{
	static const char *const home[] = {"USERPROFILE"};
	static const char *const cache[] = {"LOCALAPPDATA"};
	/* The order Python's tempfile tries them in. */
	static const char *const temp[] = {"TMPDIR", "TEMP", "TMP"};
	int rc;

	*out = NULL;
	if (which == CFA_USER_HOME)
		return first_env(home, 1, false, out);
	if (which == CFA_USER_CACHE)
		return first_env(cache, 1, false, out);
	rc = first_env(temp, 3, true, out);
	return rc == ENOENT ? system_temp(out) : rc;
}

int cfa_plat_user_name(char **out)
{
	static const char *const names[] = {"LOGNAME", "USER", "LNAME", "USERNAME"};

	*out = NULL;
	/* USERNAME is the one Windows sets; the others come first, in the
	 * order of Python's getpass. */
	return first_env(names, sizeof(names) / sizeof(names[0]), false, out);
}

bool cfa_plat_glibc_version(char *buf, size_t len)
{
	(void)buf, (void)len;
	return false; /* Windows has no glibc */
}

void cfa_plat_os_build(char *buf, size_t len)
{
	typedef LONG(WINAPI * rtl_get_version)(OSVERSIONINFOW *);
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
	/* RtlGetVersion, not GetVersionExW: the latter reports Windows 8 to
	 * programs whose manifest does not name later versions. */
	rtl_get_version get =
		ntdll ? (rtl_get_version)(void (*)(void))GetProcAddress(ntdll, "RtlGetVersion") : NULL;
	OSVERSIONINFOW v;

	memset(&v, 0, sizeof(v));
	v.dwOSVersionInfoSize = sizeof(v);

	if (get && get(&v) == 0 &&
	    snprintf(buf, len, "Windows %lu.%lu.%lu", v.dwMajorVersion, v.dwMinorVersion,
	             v.dwBuildNumber) < (int)len)
		return;
	/* No version to tell, or a buffer too small for it: the bare name. */
	if (snprintf(buf, len, "Windows") >= (int)len && len)
		buf[0] = '\0';
}

/* RegGetValueW's error as errno-style. */
static int reg_errno(LONG r)
{
	return r == ERROR_FILE_NOT_FOUND ? ENOENT : r == ERROR_OUTOFMEMORY ? ENOMEM : EACCES;
}

int cfa_plat_reg_string(const char *key, const char *value, char **out)
{
	wchar_t *k = cfa_win_widen(key), *v = cfa_win_widen(value), *data = NULL;
	DWORD size = 0;
	/* RRF_RT_REG_SZ also terminates the string, which RegQueryValueExW
	 * does not promise.  Only the registry view of this build's bitness
	 * is read (no KEY_WOW64_64KEY). */
	LONG r = k && v ? RegGetValueW(HKEY_LOCAL_MACHINE, k, v, RRF_RT_REG_SZ, NULL, NULL, &size)
	                : ERROR_OUTOFMEMORY;

	/* Sized by a first call; a value that grew in between is asked for
	 * again rather than cut. */
	while (r == ERROR_SUCCESS || r == ERROR_MORE_DATA) {
		/* size is in bytes; one more character is kept free for the
		 * terminator. */
		wchar_t *bigger = realloc(data, size + sizeof(wchar_t));
		if (!bigger) {
			r = ERROR_OUTOFMEMORY;
			break;
		}
		data = bigger;
		r = RegGetValueW(HKEY_LOCAL_MACHINE, k, v, RRF_RT_REG_SZ, NULL, data, &size);
		if (r == ERROR_SUCCESS)
			break;
	}
	free(k);
	free(v);
	if (r == ERROR_SUCCESS && !(*out = cfa_win_narrow_dup(data)))
		r = ERROR_OUTOFMEMORY;
	free(data);
	return r == ERROR_SUCCESS ? 0 : reg_errno(r);
}

int cfa_plat_reg_subkeys(const char *key, int (*fn)(const char *name, void *arg), void *arg)
{
	/* 255 characters is the registry's own limit for a key name. */
	wchar_t *k = cfa_win_widen(key), name[256];
	HKEY h;
	DWORD i, n;
	int rc = 0;

	if (!k || RegOpenKeyExW(HKEY_LOCAL_MACHINE, k, 0, KEY_READ, &h) != ERROR_SUCCESS) {
		free(k);
		return ENOENT;
	}
	free(k);
	for (i = 0; rc == 0; i++) {
		char *utf8;
		n = sizeof(name) / sizeof(name[0]);
		/* ERROR_NO_MORE_ITEMS ends the walk; any other error ends it
		 * too, with what was listed so far. */
		if (RegEnumKeyExW(h, i, name, &n, NULL, NULL, NULL, NULL) != ERROR_SUCCESS)
			break;
		if (!(utf8 = cfa_win_narrow_dup(name)))
			rc = ENOMEM;
		else
			rc = fn(utf8, arg);
		free(utf8);
	}
	RegCloseKey(h);
	return rc;
}

int cfa_plat_system_dir(char **out)
{
	/* With no buffer the call returns the length needed, terminator
	 * included; with one, the length written without it. */
	UINT n = GetSystemDirectoryW(NULL, 0);
	wchar_t *w = n ? malloc(n * sizeof(wchar_t)) : NULL;
	UINT got = w ? GetSystemDirectoryW(w, n) : 0;
	int rc = !n ? ENOENT : !w ? ENOMEM : (got == 0 || got >= n) ? ENOENT : 0;

	if (!rc && !(*out = cfa_win_narrow_dup(w)))
		rc = ENOMEM;
	free(w);
	return rc;
}

int cfa_plat_file_version(const char *path, char *buf, size_t len)
{
	wchar_t *w = cfa_win_widen(path);
	/* 0 for a file without a version resource (or no file): ENOENT. */
	DWORD size = w ? GetFileVersionInfoSizeW(w, NULL) : 0;
	/* fi points into data, the version block: it is read before data is
	 * freed. */
	VS_FIXEDFILEINFO *fi = NULL;
	UINT filen = 0;
	void *data = size ? malloc(size) : NULL;
	int rc = ENOENT;

	if (data && GetFileVersionInfoW(w, 0, size, data) &&
	    VerQueryValueW(data, L"\\\\", (void **)&fi, &filen) && fi && filen >= sizeof(*fi)) {
		/* A version cut to fit would be another version: too small a
		 * buffer is an error (ERANGE), as for strerror_r. */
		rc = snprintf(buf, len, "%u.%u.%u.%u", (unsigned)HIWORD(fi->dwFileVersionMS),
		              (unsigned)LOWORD(fi->dwFileVersionMS), (unsigned)HIWORD(fi->dwFileVersionLS),
		              (unsigned)LOWORD(fi->dwFileVersionLS)) < (int)len ? 0 : ERANGE;
	}
	free(data);
	free(w);
	return rc;
}

size_t cfa_plat_adapters(struct cfa_plat_adapter *out, size_t max)
{
	typedef HRESULT(WINAPI * create_factory)(REFIID, void **);
	/* Loaded at run time and kept loaded: a system without dxgi.dll still
	 * runs cfapkg, with no adapters to report. */
	HMODULE dxgi = LoadLibraryW(L"dxgi.dll");
	create_factory create =
		dxgi ? (create_factory)(void (*)(void))GetProcAddress(dxgi, "CreateDXGIFactory1") : NULL;
	IDXGIFactory1 *factory = NULL;
	IDXGIAdapter1 *adapter;
	size_t n = 0;
	UINT i;

	if (!create || FAILED(create(&IID_IDXGIFactory1, (void **)&factory)))
		return 0;
	for (i = 0; n < max && IDXGIFactory1_EnumAdapters1(factory, i, &adapter) == S_OK; i++) {
		DXGI_ADAPTER_DESC1 d;
		if (SUCCEEDED(IDXGIAdapter1_GetDesc1(adapter, &d)) &&
		    /* The Microsoft Basic Render Driver (WARP) is a software
		     * adapter, not a GPU. */
		    !(d.Flags & DXGI_ADAPTER_FLAG_SOFTWARE)) {
			/* Sized for any description DXGI gives: this never fails. */
			if (cfa_win_narrow(d.Description, out[n].description,
			                   sizeof(out[n].description)) != 0)
				out[n].description[0] = '\0';
			out[n].vendor = d.VendorId;
			out[n].device = d.DeviceId;
			out[n].subsys = d.SubSysId;
			out[n].revision = d.Revision;
			out[n].dedicated_memory = d.DedicatedVideoMemory;
			n++;
		}
		IDXGIAdapter1_Release(adapter);
	}
	IDXGIFactory1_Release(factory);
	return n;
}

struct cfa_lock {
	HANDLE h;
};

int cfa_plat_lock(const char *path, unsigned timeout_ms, struct cfa_lock **out)
{
	ULONGLONG deadline = GetTickCount64() + timeout_ms;
	wchar_t *w = cfa_win_widen(path);
	struct cfa_lock *l;
	OVERLAPPED ov;
	HANDLE h;

	if (!w)
		return ENOMEM;
	/* Shared so that other processes can open the file to wait for the
	 * lock; OPEN_ALWAYS creates it the first time. */
	h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
	                OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return EACCES;
	for (;;) {
		memset(&ov, 0, sizeof(ov));
		/* One byte at offset 0 is the lock; the system drops it when
		 * the handle closes, a killed holder's too. */
		if (LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov))
			break;
		if (GetTickCount64() >= deadline) {
			CloseHandle(h);
			return ETIMEDOUT;
		}
		Sleep(50);
	}
	l = malloc(sizeof(*l));
	if (!l) {
		CloseHandle(h);
		return ENOMEM;
	}
	l->h = h;
	*out = l;
	return 0;
}

void cfa_plat_unlock(struct cfa_lock *lock)
{
	OVERLAPPED ov;

	if (!lock)
		return;
	memset(&ov, 0, sizeof(ov));
	UnlockFileEx(lock->h, 0, 1, 0, &ov);
	CloseHandle(lock->h);
	free(lock);
}

int cfa_plat_setenv(const char *name, const char *value)
{
	wchar_t *n = cfa_win_widen(name), *v = value ? cfa_win_widen(value) : NULL;
	/* An empty value removes the variable: Windows has no variable set to
	 * "". */
	int rc = n && (v || !value) && _wputenv_s(n, v ? v : L"") == 0 ? 0 : EINVAL;

	free(n);
	free(v);
	return rc;
}

int cfa_plat_exec(const char *const *argv, int *status)
{
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	wchar_t *cmd = NULL, *exe = cfa_win_widen(argv[0]);
	DWORD code = 1;
	int rc = command_line(argv, &cmd);

	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	fflush(NULL);
	if (rc || !exe) {
		rc = rc ? rc : ENOMEM;
	/* Windows cannot replace a process: the program runs as a child with
	 * the same console and handles, and its exit status is handed back
	 * for the caller to exit with. */
	} else if (!CreateProcessW(exe, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
		rc = GetLastError() == ERROR_FILE_NOT_FOUND ? ENOENT : EACCES;
	} else {
		WaitForSingleObject(pi.hProcess, INFINITE);
		GetExitCodeProcess(pi.hProcess, &code);
		CloseHandle(pi.hThread);
		CloseHandle(pi.hProcess);
		*status = (int)code;
	}
	free(cmd);
	free(exe);
	return rc;
}

bool cfa_plat_boot_id(char out[9])
{
	/* Windows gives no boot identifier that every process can read
	 * cheaply. */
	out[0] = '\0';
	return false;
}

bool cfa_plat_file_stamp(const char *path, char out[64])
{
	WIN32_FILE_ATTRIBUTE_DATA d;
	wchar_t *w = cfa_win_path(path);
	BOOL ok = w && GetFileAttributesExW(w, GetFileExInfoStandard, &d);

	free(w);
	/* Size and last write time, in 100 ns units; no inode, as the
	 * attributes do not carry the file ID. */
	return ok && snprintf(out, 64, "%lu.%lu.%lu.%lu", (unsigned long)d.nFileSizeHigh,
	                      (unsigned long)d.nFileSizeLow,
	                      (unsigned long)d.ftLastWriteTime.dwHighDateTime,
	                      (unsigned long)d.ftLastWriteTime.dwLowDateTime) < 64;
}
