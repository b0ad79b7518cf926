/*
 * posix_sys.c - running programs with a timeout, the user's folders other
 * programs cache under, and the Windows-only queries answered as "not
 * here".
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include "platform/platform.h"

static long long now_ms(void)
{
	struct timespec ts;
	/* Monotonic: a clock set back or forward during a run must not cut or
	 * stretch a timeout. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The forked child: standard input and error to /dev/null, output into the
 * pipe, then the program.  Never returns. */
static void child(const char *const *argv, int out)
{
	int null = open("/dev/null", O_RDWR);

	if (null >= 0) {
		dup2(null, 0);
		/* A probe's messages on stderr would mix into the user's
		 * terminal; only stdout is read. */
		dup2(null, 2);
	}
	dup2(out, 1);
	execv(argv[0], (char *const *)argv);
	/* exec failed: 127 is the shell's "command not found", and _exit
	 * skips the parent's atexit handlers and stdio buffers, which the
	 * child shares a copy of. */
	_exit(127);
}

double cfa_plat_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cfa_plat_sleep_ms(unsigned ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int cfa_plat_run_capture(const char *const *argv, unsigned timeout_ms, char *out, size_t len,
                         int *status)
{
	long long deadline = now_ms() + timeout_ms;
	size_t used = 0;
	int fds[2], st = 0, rc = 0;
	pid_t pid;

	if (pipe(fds) != 0)
		return errno;
	pid = fork();
	if (pid < 0) {
		rc = errno;
		close(fds[0]);
		close(fds[1]);
		return rc;
	}
	if (pid == 0)
		child(argv, fds[1]);
	/* The parent's copy of the write end must go, or the read below never
	 * sees end of file. */
	close(fds[1]);
	for (;;) {
		struct pollfd p = {fds[0], POLLIN, 0};
		long long left = deadline - now_ms();
		char sink[4096];
		ssize_t n;
		if (left <= 0) {
			kill(pid, SIGKILL);
			rc = ETIMEDOUT;
			break;
		}
		/* At most a second per wait so that the deadline is checked
		 * again even when poll is interrupted by a signal. */
		if (poll(&p, 1, (int)(left > 1000 ? 1000 : left)) <= 0)
			continue;
		/* Once out is full the rest is read into sink and dropped: a
		 * child blocked on a full pipe would never exit. */
		n = read(fds[0], used + 1 < len ? out + used : sink,
		         used + 1 < len ? len - used - 1 : sizeof(sink));
		/* End of file: the child closed its output, usually by
		 * exiting. */
		if (n <= 0)
			break;
		if (used + 1 < len)
			used += (size_t)n;
	}
	close(fds[0]);
	if (len)
		out[used < len ? used : len - 1] = '\0';
	/* Always reaped, the killed child too, so no zombie is left. */
	waitpid(pid, &st, 0);
	if (!rc)
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return rc;
}

const char *cfa_plat_getenv(const char *name, char *buf, size_t len)
{
	const char *v = getenv(name);
	size_t n;

	if (!v)
		return NULL;
	n = strlen(v);
	/* A value that does not fit is treated as unset, never cut: a cut
	 * number or path would be another one. */
	if (n >= len)
		return NULL;
	memcpy(buf, v, n + 1);
	return buf;
}

int cfa_plat_getenv_dup(const char *name, char **out)
{
	const char *v = getenv(name);

	if (!v)
		return ENOENT;
	return (*out = strdup(v)) ? 0 : ENOMEM;
}

int cfa_plat_config_dir(char **out)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	/* XDG_CONFIG_HOME counts only when absolute, as the XDG rules say. */
	const char *base = xdg && xdg[0] == '/' ? xdg : home, *tail;
	size_t n;

	if (!base || !*base)
		return ENOENT;
	tail = base == xdg ? "/cfapkg" : "/.config/cfapkg";
	n = strlen(base);
	if (!(*out = malloc(n + strlen(tail) + 1)))
		return ENOMEM;
	memcpy(*out, base, n);
	memcpy(*out + n, tail, strlen(tail) + 1);
	return 0;
}

int cfa_plat_system_config_dir(char **out)
{
	static const char dir[] = "/etc/cfapkg";

	if (!(*out = malloc(sizeof(dir))))
		return ENOMEM;
	memcpy(*out, dir, sizeof(dir));
	return 0;
}

/* a + b, or NULL. */
static char *concat(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	char *out = malloc(n + m + 1);

	if (out) {
		memcpy(out, a, n);
		memcpy(out + n, b, m + 1);
	}
	return out;
}

/* HOME first, as the shell and most programs use it; the password database
 * only when it is unset or empty (a service started without an
 * environment). */
static const char *home_dir(void)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (home && *home)
		return home;
	pw = getpwuid(getuid());
	/* getpwuid's result is static storage, overwritten by the next call:
	 * used right away. */
	return pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
}

static const char *temp_dir(void)
{
	static const char *const vars[] = {"TMPDIR", "TEMP", "TMP"};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		/* A variable naming a folder that does not exist is skipped,
		 * as Python's tempfile does. */
		if (v && *v && cfa_plat_is_dir(v))
			return v;
	}
	return "/tmp";
}

int cfa_plat_user_dir(enum cfa_user_dir which, char **out)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = home_dir();

	*out = NULL;
	if (which == CFA_USER_TEMP)
		/* concat with "" is a copy: every result is the caller's to
		 * free, whichever source it came from. */
		*out = concat(temp_dir(), "");
	else if (which == CFA_USER_CACHE && xdg && xdg[0] == '/')
		*out = concat(xdg, "");
	else if (!home)
		return ENOENT;
	else
		*out = concat(home, which == CFA_USER_CACHE ? "/.cache" : "");
	return *out ? 0 : ENOMEM;
}

int cfa_plat_user_name(char **out)
{
	/* The order Python's getpass.getuser tries them in. */
	static const char *const vars[] = {"LOGNAME", "USER", "LNAME", "USERNAME"};
	struct passwd *pw;
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return (*out = strdup(v)) ? 0 : ENOMEM;
	}
	pw = getpwuid(getuid());
	if (!pw || !pw->pw_name || !*pw->pw_name)
		return ENOENT;
	return (*out = strdup(pw->pw_name)) ? 0 : ENOMEM;
}

bool cfa_plat_is_real_dir(const char *path)
{
	struct stat st;
	/* lstat: a symbolic link to a folder is not a real folder. */
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Only Windows has a build number to report; here the answer is always
 * empty. */
void cfa_plat_os_build(char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
}

bool cfa_plat_glibc_version(char *buf, size_t len)
{
#if defined(__GLIBC__)
	/* The running C library, not the one built against: the machine's. */
	const char *v = gnu_get_libc_version();
	size_t n = strlen(v);

	if (n >= len)
		return false;
	memcpy(buf, v, n + 1);
	return true;
#else
	(void)buf, (void)len;
	return false;
#endif
}

/* The Windows-only queries answer ENOSYS, so callers need no #ifdef of their
 * own. */
int cfa_plat_reg_string(const char *key, const char *value, char **out)
{
	(void)key, (void)value, (void)out;
	return ENOSYS;
}

int cfa_plat_reg_subkeys(const char *key, int (*fn)(const char *name, void *arg), void *arg)
{
	(void)key, (void)fn, (void)arg;
	return ENOSYS;
}

int cfa_plat_system_dir(char **out)
{
	(void)out;
	return ENOSYS;
}

int cfa_plat_file_version(const char *path, char *buf, size_t len)
{
	(void)path, (void)buf, (void)len;
	return ENOSYS;
}

size_t cfa_plat_adapters(struct cfa_plat_adapter *out, size_t max)
{
	(void)out, (void)max;
	return 0;
}

struct cfa_lock {
	int fd;
};

int cfa_plat_lock(const char *path, unsigned timeout_ms, struct cfa_lock **out)
{
	long long deadline = now_ms() + timeout_ms;
	struct cfa_lock *l;
	/* The lock file is never deleted: removing it while another process
	 * waits on it would let two processes lock two different files of one
	 * name. */
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	/* flock locks belong to the open file, not the process, and go away
	 * when it is closed: a killed holder frees the lock without help. */
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK || now_ms() >= deadline) {
			int e = errno == EWOULDBLOCK ? ETIMEDOUT : errno;
			close(fd);
			return e;
		}
		/* Polled: flock has no wait with a timeout. */
		cfa_plat_sleep_ms(50);
	}
	l = malloc(sizeof(*l));
	if (!l) {
		close(fd);
		return ENOMEM;
	}
	l->fd = fd;
	*out = l;
	return 0;
}

void cfa_plat_unlock(struct cfa_lock *lock)
{
	if (!lock)
		return;
	flock(lock->fd, LOCK_UN);
	close(lock->fd);
	free(lock);
}

int cfa_plat_setenv(const char *name, const char *value)
{
	int rc = value ? setenv(name, value, 1) : unsetenv(name);
	return rc == 0 ? 0 : errno;
}

int cfa_plat_exec(const char *const *argv, int *status)
{
	(void)status;
	/* execv replaces the process without flushing stdio: output still
	 * buffered would be lost. */
	fflush(NULL);
	execv(argv[0], (char *const *)argv);
	return errno;
}

bool cfa_plat_boot_id(char out[9])
{
	char buf[64];
	size_t n = 0, i;
	/* Linux's random UUID for this boot, like "6f0e1c2a-..."; its first
	 * eight hex digits are enough to tell boots apart. */
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY);
	ssize_t got = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	for (i = 0; got > 0 && i < (size_t)got && n < 8; i++)
		if ((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f'))
			out[n++] = buf[i];
	out[n] = '\0';
	return n == 8;
}

