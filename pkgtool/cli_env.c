/*
 * cli_env.c - what a command works on: the environment --env or
 * cfapkg.conf names (else the default), that it exists, and the root's
 * writer lock, waited for as long as CFAPKG_LOCK_WAIT says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "render.h"

/* Ten minutes by default: long enough for another install's downloads,
 * short enough that a stuck writer is noticed. */
#define LOCK_WAIT_MS (10u * 60u * 1000u)

/* --env beats cfapkg.conf's "env", which beats the default. */
const char *env_from_cli(const struct cli *cli)
{
	const char *env = cli_value(cli, OPT_ENV);

	if (!env)
		env = cfapkg_setting(cli_settings(), "env", NULL);
	return env ? env : CFAPKG_DEFAULT_ENV;
}

/* A value that is not a number of seconds up to a day is ignored and the
 * default stands, so that a typo never makes cfapkg wait forever or not at
 * all. */
unsigned lock_wait_ms(void)
{
	const char *env = getenv("CFAPKG_LOCK_WAIT");
	unsigned long long secs;

	return env && cli_number(env, 86400, &secs) ? (unsigned)secs * 1000u : LOCK_WAIT_MS;
}

/* The name is checked before its existence, so that a bad name is told the rule
 * it breaks rather than that there is no such environment. */
int need_env(struct cfapkg_ctx *ctx, const char *env)
{
	enum cfapkg_err e = cfapkg_env_check_name(ctx, env);

	if (e)
		return report_error(ctx, e);
	if (!cfapkg_env_exists(ctx, env)) {
		cli_error("no environment \"%s\" ('cfapkg env list' shows "
		        "them)\n", env);
		return EXIT_NOTFOUND;
	}
	return EXIT_OK;
}

/* A first try that does not wait, so that the wait is announced before it
 * starts rather than looking like a hang. */
int take_lock(struct cfapkg_ctx *ctx, const struct cli *cli, struct cfapkg_writer_lock **lock)
{
	enum cfapkg_err e = cfapkg_writer_lock(ctx, 0, lock);

	if (e == CFAPKG_E_BUSY) {
		cfapkg_ctx_clear_error(ctx);
		if (!cli->quiet)
			fprintf(stderr, "Waiting for another cfapkg to finish with %s ...\n",
			        cfapkg_ctx_root(ctx));
		e = cfapkg_writer_lock(ctx, lock_wait_ms(), lock);
	}
	return e ? report_error(ctx, e) : EXIT_OK;
}
