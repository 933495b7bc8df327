/*
 * push_cli.c - see push_cli.h.
 */
#include "cmd/push_cli.h"

#include <stdio.h>
#include <string.h>

#include "cmds.h"

int push_cli_add(struct push_cli *p, char *url)
{
	struct sf_err e = { "" };
	if (p->n >= SPOOL_MAX_TARGETS) {
		fprintf(stderr, "stackfold: continuous: at most %d --push targets\n",
			SPOOL_MAX_TARGETS);
		return EXIT_USAGE;
	}
	if (store_url_parse(url, &p->urls[p->n], &e)) {
		fprintf(stderr, "stackfold: continuous: --push: %s\n", e.msg);
		return EXIT_USAGE;
	}
	/* blank the password in argv: /proc/PID/cmdline shows argv's bytes */
	char *at = strchr(url, '@'), *colon = strstr(url, "://");
	colon = colon ? strchr(colon + 3, ':') : NULL;
	if (at && colon && colon < at)
		memset(colon + 1, 'x', (size_t)(at - colon - 1));
	p->n++;
	return -1;
}

int push_cli_host(const char *host)
{
	struct sf_err e = { "" };
	if (store_host_check(host, &e)) {
		fprintf(stderr, "stackfold: continuous: --host: %s\n", e.msg);
		return EXIT_USAGE;
	}
	return -1;
}

int push_cli_label(struct push_cli *p, const char *kv)
{
	struct sf_err e = { "" };
	if (labels_add(&p->labels, kv, &e)) {
		fprintf(stderr, "stackfold: continuous: --label: %s\n", e.msg);
		return EXIT_USAGE;
	}
	return -1;
}

/* --push-cacert on every HTTPS target; a CA with none is a mistake (a
 * clickhouse:// meant as clickhouses:// would send in clear).  0 or 1
 * (said). */
static int push_cli_cacert(struct push_cli *p)
{
	struct sf_err e = { "" };
	unsigned ntls = 0;
	for (unsigned i = 0; i < p->n; i++) {
		if (!p->urls[i].tls)
			continue;
		if (store_url_cacert(&p->urls[i], p->cacert_file, &e)) {
			fprintf(stderr, "stackfold: continuous: --push-cacert: %s\n", e.msg);
			return 1;
		}
		ntls++;
	}
	if (!ntls)
		fprintf(stderr, "stackfold: continuous: --push-cacert needs an HTTPS "
			"--push (clickhouses://, pyroscopes:// or https://)\n");
	return ntls ? 0 : 1;
}

int push_cli_finish(struct push_cli *p)
{
	struct sf_err e = { "" };
	if (p->labels.n && !p->n) {
		fprintf(stderr, "stackfold: continuous: --label needs --push "
			"(labels are a store's)\n");
		return EXIT_USAGE;
	}
	if (p->store_max_age && !p->n) {
		fprintf(stderr, "stackfold: continuous: --push-max-age needs "
			"--push (it deletes from a store)\n");
		return EXIT_USAGE;
	}
	if (p->cacert_file && push_cli_cacert(p))
		return EXIT_USAGE;
	for (unsigned i = 0; p->auth_file && i < p->n; i++)
		if (!p->urls[i].password[0] &&
		    store_url_auth_file(&p->urls[i], p->auth_file, &e)) {
			fprintf(stderr, "stackfold: continuous: --push-auth: %s\n", e.msg);
			return EXIT_USAGE;
		}
	for (unsigned i = 0; i < p->n; i++)
		if (!p->urls[i].tls && p->urls[i].password[0]) {
			fprintf(stderr, "stackfold: continuous: warning: %s: the "
				"password goes over plain HTTP, to whatever "
				"listens on that port (use clickhouses:// with "
				"--push-cacert, or a port only root can bind; "
				"docs/security.md)\n", p->urls[i].text);
			break;	/* once */
		}
	return -1;
}

static void push_log(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "stackfold: %s\n", line);
}

int push_cli_start(const struct push_cli *p, const char *dir,
		   const char *host, struct spool **out)
{
	*out = NULL;
	if (!p->n)
		return 0;
	struct sf_err e = { "" };
	struct spool_opts o = { .dir = dir, .host = host,
				.store_max_age = p->store_max_age,
				.labels = p->labels.n ? p->labels.text : NULL,
				.urls = p->urls, .nurls = p->n,
				.log = push_log };
	*out = spool_start(&o, &e);
	if (!*out) {
		fprintf(stderr, "stackfold: continuous: --push: %s\n", e.msg);
		return EXIT_IO;
	}
	return 0;
}
