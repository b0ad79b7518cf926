/*
 * completion_model.c - what every shell's completion script is made from:
 * the commands with their options and subcommands (read from the usage
 * lines of the command table), the fixed values of options, the short
 * letters, and quoting for the scripts.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "render.h"
#include "completion.h"

/* A subcommand as usage lines write one: lower case, digits and dashes. */
static bool sub_word(const char *w, size_t n)
{
	size_t i;

	if (!n || w[0] < 'a' || w[0] > 'z')
		return false;
	for (i = 0; i < n; i++)
		if (!((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= '0' && w[i] <= '9') || w[i] == '-'))
			return false;
	return true;
}

/* The first word of an alternative, "create|remove NAME": each piece. */
static void add_subs(const char *p, char *out, size_t len)
{
	size_t word = strcspn(p, " "), used;

	while (word) {
		size_t n = strcspn(p, "|");
		if (n > word)
			n = word;
		used = strlen(out);
		/* A piece that is no subcommand (a placeholder) is skipped, and
		 * one that would not fit is left out rather than cut into
		 * another word. */
		if (sub_word(p, n) && used + n + 2 < len)
			cli_fit(out + used, len - used, "%s%.*s", used ? " " : "", (int)n, p);
		p += n + (n < word);
		word -= n + (n < word);
	}
}

/* "env create|remove NAME | list | show": the alternatives at the top
 * level (not inside [...]) each begin with a subcommand, or none. */
static void usage_subs(const char *usage, char *out, size_t len)
{
	const char *p = strchr(usage, ' ');
	bool start = true;
	int depth = 0;

	out[0] = '\0';
	for (p = p ? p + 1 : ""; *p; p++) {
		if (start)
			add_subs(p, out, len);
		start = false;
		if (*p == '[')
			depth++;
		else if (*p == ']')
			depth--;
		else if (depth == 0 && strncmp(p, " | ", 3) == 0) {
			p += 2;
			start = true;
		}
	}
}

/* A word of a usage line without its brackets and dots. */
static bool placeholder_is(const char *w, size_t n, const char *name)
{
	while (n && *w == '[') {
		w++;
		n--;
	}
	while (n && (w[n - 1] == ']' || w[n - 1] == '.'))
		n--;
	return n == strlen(name) && strncmp(w, name, n) == 0;
}

/* A SPEC or NAME that no option introduces names packages; env's NAME
 * names an environment. */
static enum comp_kind usage_args(const char *name, const char *usage)
{
	const char *p = usage, *prev = "";

	while (*p) {
		size_t n = strcspn(p, " ");
		/* A placeholder right after an option is that option's value,
		 * not a positional argument. */
		bool after_option = prev[0] == '-' || (prev[0] == '[' && prev[1] == '-');
		if (!after_option && p != usage &&
		    (placeholder_is(p, n, "SPEC") || placeholder_is(p, n, "NAME")))
			return strcmp(name, "env") == 0 ? COMP_ENVS : COMP_PACKAGES;
		prev = p;
		p += n;
		while (*p == ' ')
			p++;
	}
	return COMP_NONE;
}

/* The model is read from the same table the usage text comes from, so that no
 * script can offer what the command line would refuse. */
void comp_model_build(struct comp_model *m, const struct cli_commands *table)
{
	const char *name, *usage, *summary;
	unsigned long long opts;

	m->ncmd = 0;
	m->programs[0] = '\0';
	while (m->ncmd < COMP_MAX_COMMANDS &&
	       table->at(m->ncmd, &name, &opts, &usage, &summary)) {
		struct comp_command *c = &m->cmd[m->ncmd++];
		c->name = name;
		c->summary = summary;
		c->opts = opts | OPTS_GLOBAL;
		usage_subs(usage, c->subs, sizeof(c->subs));
		c->args = usage_args(name, usage);
		if (table->takes_program(m->ncmd - 1) &&
		    strlen(m->programs) + strlen(name) + 2 < sizeof(m->programs))
			cli_fit(m->programs + strlen(m->programs),
			        sizeof(m->programs) - strlen(m->programs), "%s%s",
			        m->programs[0] ? " " : "", name);
	}
}

/* Fixed words for the options whose values are a known set; files for the
 * placeholders that name one; nothing for a free value, which no list could
 * complete. */
enum comp_kind comp_option_value(enum opt_id id, const char *arg, const char **words)
{
	*words = "";
	if (id == OPT_ENV)
		return COMP_ENVS;
	if (id == OPT_SHELL || id == OPT_OS) {
		*words = id == OPT_SHELL ? "bash zsh fish powershell cmd" : "linux windows";
		return COMP_WORDS;
	}
	if (arg && (strcmp(arg, "FILE") == 0 || strcmp(arg, "DIR") == 0 || strcmp(arg, "PUB") == 0))
		return COMP_FILES;
	return COMP_NONE;
}

bool comp_takes(const struct comp_model *m, const char *cmd, enum opt_id id)
{
	size_t i;

	for (i = 0; cmd && i < m->ncmd; i++)
		if (strcmp(m->cmd[i].name, cmd) == 0)
			return m->cmd[i].opts & OPT_BIT(id);
	return OPTS_GLOBAL & OPT_BIT(id);
}

void comp_quoted(const char *s, bool fish)
{
	putchar('\'');
	/* fish escapes a quote inside quotes; a POSIX shell cannot, so there
	 * the quote is closed, an escaped one added and the quote opened
	 * again. */
	for (; *s; s++) {
		if (*s == '\'')
			fputs(fish ? "\\'" : "'\\''", stdout);
		else if (*s == '\\' && fish)
			fputs("\\\\", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

/* The option a command's short letter stands for, and whether it takes
 * a value there; false when the command has no such letter. */
static bool letter_in(const struct comp_command *c, char letter, bool *valued)
{
	const char *name, *arg, *help;
	enum opt_id id;
	size_t i;

	for (i = 0; cli_option_at(i, &name, &id, &arg, &help); i++)
		if ((c->opts & OPT_BIT(id)) && cli_opt_letter(id, c->opts) == letter) {
			*valued = arg != NULL;
			return true;
		}
	return false;
}

void comp_letters(const struct comp_model *m, char *all, size_t len)
{
	const char *name, *arg, *help;
	enum opt_id id;
	size_t i, n = 0;

	/* Each letter once, though several commands may give it meanings of
	 * their own: comp_letter_valued tells them apart. */
	for (i = 0; cli_option_at(i, &name, &id, &arg, &help) && n + 1 < len; i++) {
		char l = cli_opt_letter(id, OPT_BIT(id));
		if (l && !memchr(all, l, n))
			all[n++] = l;
	}
	all[n] = '\0';
	(void)m;
}

void comp_letter_valued(const struct comp_model *m, char letter, char *cmds, size_t len,
                        bool *everywhere)
{
	size_t i;
	bool valued, any = false;

	cmds[0] = '\0';
	*everywhere = true;
	for (i = 0; i < m->ncmd; i++) {
		if (!letter_in(&m->cmd[i], letter, &valued))
			continue;
		any = true;
		*everywhere = *everywhere && valued;
		if (valued && strlen(cmds) + strlen(m->cmd[i].name) + 2 < len)
			cli_fit_add(cmds, len, "%s%s", cmds[0] ? " " : "",
			            m->cmd[i].name);
	}
	/* A letter no command has is valued nowhere, not everywhere. */
	*everywhere = *everywhere && any;
}
