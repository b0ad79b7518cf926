/*
 * win32_thread.c - threads on Windows: the parallel loops (store checks,
 * recipe parsing, view links), the download threads, and the locks and
 * condition variables they share.
 */
#define WIN32_LEAN_AND_MEAN
#include "platform/platform.h"

#include <process.h>
#include <stdbool.h>
#include <stdlib.h>
#include <windows.h>

unsigned cfa_plat_cpu_count(void)
{
	SYSTEM_INFO si;

	GetSystemInfo(&si);
	return si.dwNumberOfProcessors > 0 ? (unsigned)si.dwNumberOfProcessors : 1;
}

struct thread_item {
	void (*fn)(void *item);
	void *item;
};

static DWORD WINAPI thread_main(LPVOID arg)
{
	struct thread_item *t = arg;
	t->fn(t->item);
	return 0;
}

#define MAX_THREADS 16

void cfa_plat_parallel(void (*fn)(void *item), void *base, size_t size, size_t n)
{
	struct thread_item items[MAX_THREADS];
	HANDLE h[MAX_THREADS];
	size_t i, nt = n < MAX_THREADS ? n : MAX_THREADS;

	/* One item runs here: a thread would only add its start. */
	if (n == 1) {
		fn(base);
		return;
	}
	for (i = 0; i < nt; i++) {
		items[i] = (struct thread_item){fn, (char *)base + i * size};
		h[i] = CreateThread(NULL, 0, thread_main, &items[i], 0, NULL);
		if (!h[i])
			fn(items[i].item);
	}
	for (i = nt; i < n; i++)
		fn((char *)base + i * size);
	for (i = 0; i < nt; i++)
		if (h[i]) {
			WaitForSingleObject(h[i], INFINITE);
			CloseHandle(h[i]);
		}
}

struct cfa_thread {
	HANDLE h;
	void (*fn)(void *);
	void *arg;
};

static unsigned __stdcall own_thread_main(void *arg)
{
	struct cfa_thread *t = arg;

	t->fn(t->arg);
	return 0;
}

int cfa_plat_thread_start(void (*fn)(void *), void *arg, struct cfa_thread **out)
{
	struct cfa_thread *t = malloc(sizeof(*t));

	if (!t)
		return ENOMEM;
	t->fn = fn;
	t->arg = arg;
	t->h = (HANDLE)_beginthreadex(NULL, 0, own_thread_main, t, 0, NULL);
	if (!t->h) {
		free(t);
		return EAGAIN;
	}
	*out = t;
	return 0;
}

void cfa_plat_thread_join(struct cfa_thread *t)
{
	if (!t)
		return;
	WaitForSingleObject(t->h, INFINITE);
	CloseHandle(t->h);
	free(t);
}

struct cfa_mutex {
	SRWLOCK lock;
};

struct cfa_mutex *cfa_plat_mutex_new(void)
{
	struct cfa_mutex *m = malloc(sizeof(*m));

	if (m)
		InitializeSRWLock(&m->lock);
	return m;
}

void cfa_plat_mutex_lock(struct cfa_mutex *m)
{
	if (m)
		AcquireSRWLockExclusive(&m->lock);
}

void cfa_plat_mutex_unlock(struct cfa_mutex *m)
{
	if (m)
		ReleaseSRWLockExclusive(&m->lock);
}

void cfa_plat_mutex_free(struct cfa_mutex *m)
{
	free(m);
}

struct cfa_cond {
	CONDITION_VARIABLE c;
};

struct cfa_cond *cfa_plat_cond_new(void)
{
	struct cfa_cond *c = malloc(sizeof(*c));

	if (c)
		InitializeConditionVariable(&c->c);
	return c;
}

void cfa_plat_cond_wait(struct cfa_cond *c, struct cfa_mutex *m)
{
	SleepConditionVariableSRW(&c->c, &m->lock, INFINITE, 0);
}

void cfa_plat_cond_broadcast(struct cfa_cond *c)
{
	WakeAllConditionVariable(&c->c);
}

void cfa_plat_cond_free(struct cfa_cond *c)
{
	free(c);
}
