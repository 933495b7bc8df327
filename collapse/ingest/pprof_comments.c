/* pprof_comments.c - see pprof_comments.h. */
#include "ingest/pprof_comments.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "model/profile.pb-c.h"

/* The metadata field the key w[0..kl) names, or NULL. */
static struct pprof_str *meta_field(struct pprof_comments *c, const char *w,
				    size_t kl)
{
	static const struct {
		const char *key;
		size_t off;
	} meta[] = {
		{ "host", offsetof(struct pprof_comments, host) },
		{ "kernel", offsetof(struct pprof_comments, kernel) },
		{ "bpftrace", offsetof(struct pprof_comments, bpftrace) },
		{ "cmdline", offsetof(struct pprof_comments, cmdline) },
	};
	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
		if (strlen(meta[i].key) == kl && !memcmp(w, meta[i].key, kl))
			return (struct pprof_str *)((char *)c + meta[i].off);
	return NULL;
}

/* One "key=V" word (the value's number read up to its first non-digit). */
static void counter_word(struct pprof_comments *c, const char *w, size_t kl)
{
	const char *v = w + kl + 1;
	if (kl == 7 && !memcmp(w, "samples", 7)) {
		sf_sat_addto(&c->samples, strtoull(v, NULL, 10));
		return;
	}
	for (size_t i = 0; i < LOSS_N; i++) {
		if (strlen(loss_table[i].key) != kl || memcmp(w, loss_table[i].key, kl))
			continue;
		if (!strncmp(v, "unknown", 7))
			c->unknown[i] = true;
		else
			sf_sat_addto(&c->loss[i], strtoull(v, NULL, 10));
		return;
	}
}

/* One comment: blank-separated words; cmdline= takes the rest. */
static void parse_one(struct pprof_comments *c, const char *s)
{
	for (const char *w = s; *w;) {
		size_t n = strcspn(w, " "), kl;
		const char *eq = memchr(w, '=', n);
		if (eq) {
			kl = (size_t)(eq - w);
			struct pprof_str *f = meta_field(c, w, kl);
			bool rest = f == &c->cmdline;
			if (f && !f->s)
				*f = (struct pprof_str){ eq + 1, rest ? strlen(eq + 1) : n - kl - 1 };
			if (rest)
				return;
			if (!f)
				counter_word(c, w, kl);
		}
		w += n;
		w += *w == ' ';
	}
}

void pprof_comments_parse(struct pprof_comments *c,
			  const Perftools__Profiles__Profile *pp)
{
	*c = (struct pprof_comments){ 0 };
	for (size_t i = 0; i < pp->n_comment; i++)
		if (pp->comment[i] >= 0 && (size_t)pp->comment[i] < pp->n_string_table)
			parse_one(c, pp->string_table[pp->comment[i]]);
}
