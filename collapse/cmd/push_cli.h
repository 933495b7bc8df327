/*
 * push_cli.h - the --push options of `stackfold continuous`: the store
 * URLs (store/http.h), their credentials, and the spool (store/spool.h)
 * that delivers the windows, with its log lines on stderr.
 *
 * A password is read from --push-auth FILE ("USER:PASSWORD" or
 * "PASSWORD"), or from the URL; one given in the URL is blanked in argv
 * at once, so that ps shows it only for the instant before.  HTTPS
 * targets are verified against the CAs of --push-cacert FILE when given
 * (store_url_cacert()), else the system's.  Prints its
 * own errors ("stackfold: continuous: ...").
 */
#ifndef SF_CMD_PUSH_CLI_H
#define SF_CMD_PUSH_CLI_H

#include <stdint.h>

#include "store/labels.h"
#include "store/spool.h"

struct push_cli {
	struct store_url urls[SPOOL_MAX_TARGETS];
	unsigned n;
	const char *auth_file;
	const char *cacert_file;	/* --push-cacert */
	struct labels labels;	/* --label: on the windows this run writes */
	uint64_t store_max_age;	/* --push-max-age, seconds; 0 none */
};

/* --push URL: -1 to go on, or EXIT_USAGE (said). */
int push_cli_add(struct push_cli *p, char *url);
/* --host NAME: stored as given or refused (store_host_check()).  -1 to
 * go on, or EXIT_USAGE (said). */
int push_cli_host(const char *host);
/* --label KEY=VALUE: -1 to go on, or EXIT_USAGE (said). */
int push_cli_label(struct push_cli *p, const char *kv);
/* After the options: read --push-auth, check --push-cacert (it wants an
 * HTTPS target); --label and --push-max-age want a --push.  A password
 * for a plain HTTP target is warned about, once (anyone who can bind its
 * port while the store is down receives it).  -1 or EXIT_USAGE (said). */
int push_cli_finish(struct push_cli *p);
/* Start delivering DIR's windows (none to do without --push: NULL, 0).
 * 0, or EXIT_IO (said). */
int push_cli_start(const struct push_cli *p, const char *dir,
		   const char *host, struct spool **out);

#endif
