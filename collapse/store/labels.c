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

static int add(struct labels *l, const char *kv, bool any, struct sf_err *err)
{
	const char *eq = strchr(kv, '=');
	size_t kl = eq ? (size_t)(eq - kv) : 0;
	if (eq && key_ok(kv, kl) && strlen(eq + 1) > LABEL_VALUE_MAX)
		return sf_err_set(err, EINVAL, "label '%.*s': value too long "
				  "(%zu bytes; at most %d)", (int)kl, kv,
				  strlen(eq + 1), LABEL_VALUE_MAX);
	if (eq && strlen(kv) - 1 - strlen(eq + 1) > LABEL_KEY_MAX)
		return sf_err_set(err, EINVAL, "label key '%.20s...' too long "
				  "(at most %d bytes)", kv, LABEL_KEY_MAX);
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
		if (!c && ol == kl && (!any || !strcmp(l->kv[at], kv)))
			return sf_err_set(err, EINVAL, "label key '%.*s' given "
					  "twice", (int)kl, kv);
		if (!c && ol == kl)
			continue;	/* after the key's other values */
		if (c > 0 || (!c && ol > kl))
			break;
	}
	memmove(l->kv[at + 1], l->kv[at], (l->n - at) * sizeof(l->kv[0]));
	snprintf(l->kv[at], sizeof(l->kv[at]), "%s", kv);
	l->n++;
	join(l);
	return 0;
}

int labels_add(struct labels *l, const char *kv, struct sf_err *err)
{
	return add(l, kv, false, err);
}

int labels_add_any(struct labels *l, const char *kv, struct sf_err *err)
{
	return add(l, kv, true, err);
}

/* The length of the UTF-8 sequence at p (at most n bytes), 0 when it is
 * none (overlong forms, surrogates and past U+10FFFF refused). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	if (p[0] < 0x80)
		return 1;
	size_t k = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 &&
		   p[0] <= 0xef ? 3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
	if (!k || k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return k;
}

int store_host_check(const char *host, struct sf_err *err)
{
	size_t n = strlen(host);
	if (!n || n > 255)
		return sf_err_set(err, EINVAL, "'%.40s%s': 1 to 255 bytes", host,
				  n > 40 ? "..." : "");
	const unsigned char *p = (const unsigned char *)host;
	for (size_t i = 0; i < n;) {
		if (p[i] <= 0x20 || p[i] == 0x7f)
			return sf_err_set(err, EINVAL, "a blank or a control "
					  "character (byte %zu is 0x%02x): refused, "
					  "not cut", i + 1, p[i]);
		size_t k = utf8_len(p + i, n - i);
		if (!k)
			return sf_err_set(err, EINVAL, "host name not UTF-8 (byte "
					  "%zu is 0x%02x)", i + 1, p[i]);
		i += k;
	}
	return 0;
}
