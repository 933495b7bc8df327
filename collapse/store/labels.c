/*
 * labels.c - see labels.h.
 */
#include "store/labels.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool key_ok(const char *k, size_t n)
{
	if (!n || n > LABEL_KEY_MAX || (k[0] >= '0' && k[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = k[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

static bool value_ok(const char *v)
{
	size_t n = strlen(v);
	if (!n || n > LABEL_VALUE_MAX)
		return false;
	for (; *v; v++) {
		char c = *v;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

static bool reserved(const char *k, size_t n)
{
	return (n == 4 && !memcmp(k, "host", 4)) ||
	       (n == 6 && !memcmp(k, "kernel", 6)) ||
	       (n >= 2 && !memcmp(k, "__", 2));
}

/* text: the labels joined by ',' */
static void join(struct labels *l)
{
	size_t off = 0;
	l->text[0] = 0;
	for (unsigned i = 0; i < l->n; i++)
		off += (size_t)snprintf(l->text + off, sizeof(l->text) - off,
					"%s%s", i ? "," : "", l->kv[i]);
}

int labels_add(struct labels *l, const char *kv, struct sf_err *err)
{
	const char *eq = strchr(kv, '=');
	size_t kl = eq ? (size_t)(eq - kv) : 0;
	if (!eq || !key_ok(kv, kl) || !value_ok(eq + 1))
		return sf_err_set(err, EINVAL, "label '%s' is not KEY=VALUE "
				  "(KEY: letters, digits, _; VALUE: letters, "
				  "digits, _ . -)", kv);
	if (reserved(kv, kl))
		return sf_err_set(err, EINVAL, "label key '%.*s' is the store's "
				  "own (use --host for the host)", (int)kl, kv);
	if (l->n >= LABELS_MAX)
		return sf_err_set(err, EINVAL, "at most %d labels", LABELS_MAX);
	unsigned at = 0;
	for (; at < l->n; at++) {
		size_t ol = strcspn(l->kv[at], "=");
		int c = strncmp(l->kv[at], kv, kl < ol ? kl : ol);
		if (!c && ol == kl)
			return sf_err_set(err, EINVAL, "label key '%.*s' given "
					  "twice", (int)kl, kv);
		if (c > 0 || (!c && ol > kl))
			break;
	}
	memmove(l->kv[at + 1], l->kv[at], (l->n - at) * sizeof(l->kv[0]));
	snprintf(l->kv[at], sizeof(l->kv[at]), "%s", kv);
	l->n++;
	join(l);
	return 0;
}
