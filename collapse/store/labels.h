/*
 * labels.h - the KEY=VALUE labels a pusher gives every window it sends
 * (`--label env=prod --label version=1.4`), and a query's label filters.
 *
 * Keys are [A-Za-z_][A-Za-z0-9_]* (at most 64 bytes, not "host", "kernel"
 * or a "__" prefix: those are the store's own), values [A-Za-z0-9_.-]+ (at
 * most 128 bytes): names that ClickHouse stores and Pyroscope's ingest
 * name ("APP{host=H,env=prod}") both take as they are, without escaping.
 * The set is kept sorted by key, one value a key, so that the same labels
 * are the same text ("env=prod,version=1.4") in every row.
 *
 * Nothing here prints; errors are -EINVAL with the reason in sf_err.
 */
#ifndef SF_STORE_LABELS_H
#define SF_STORE_LABELS_H

#include "base/util.h"

#define LABELS_MAX 16
#define LABEL_KEY_MAX 64
#define LABEL_VALUE_MAX 128

struct labels {
	unsigned n;
	char kv[LABELS_MAX][LABEL_KEY_MAX + LABEL_VALUE_MAX + 2];	/* "k=v" */
	char text[LABELS_MAX * (LABEL_KEY_MAX + LABEL_VALUE_MAX + 2)];
};

/* Add "KEY=VALUE" (its place by key).  0; -EINVAL (bad form, a value
 * too long, a key given twice, more than LABELS_MAX). */
int labels_add(struct labels *l, const char *kv, struct sf_err *err);

/* As labels_add(), for a query's filters: a key may come again with
 * other values (kept next to each other): any of them matches. */
int labels_add_any(struct labels *l, const char *kv, struct sf_err *err);

/* A host name (--host) the windows and the stores keep byte for byte:
 * 1 to 255 bytes of UTF-8 without blanks or control characters (a window
 * file's comment ends a word at a blank; the pprof writer replaces
 * invalid UTF-8).  0, or -EINVAL with the reason. */
int store_host_check(const char *host, struct sf_err *err);

#endif
