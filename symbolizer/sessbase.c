/*
 * sessbase.c - what every part of a session uses: its warning queue
 * (sym_warn(), deduplicated, in order; sym_session_next_warning()) and its
 * interned strings (sym_strdup()).  Below session.c, process.c and
 * procjit.c, which call it, and calling none of them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "symbolizer_priv.h"

/* elfindex.c reports a corrupt cache entry it deleted and rebuilt as
 * "...; rebuilt" (its only channel for it): counted in index_corrupt. */
static void count_corrupt(struct sym_session *s, const char *msg)
{
	static const char tail[] = "; rebuilt";
	size_t n = strlen(msg), t = sizeof(tail) - 1;
	if (n >= t && !memcmp(msg + n - t, tail, t))
		s->stats.index_corrupt++;
}

void sym_warn_cb(void *ctx, const char *msg)
{
	struct sym_session *s = ctx;
	size_t before = s->warn_seen.n;
	count_corrupt(s, msg);
	int64_t id = strtab_intern_cstr(&s->warn_seen, msg);
	if (id < 0 || s->warn_seen.n == before)
		return;	/* out of memory, or said before */
	if (sf_grow((void **)&s->warnq, &s->warnq_cap, s->warnq_n + 1,
		    sizeof(*s->warnq)))
		return;
	s->warnq[s->warnq_n++] = (uint32_t)id;
}

void sym_warn(struct sym_session *s, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sym_warn_cb(s, msg);
}

const char *sym_session_next_warning(struct sym_session *s)
{
	if (!s || s->warnq_head >= s->warnq_n)
		return NULL;
	return strtab_get(&s->warn_seen, s->warnq[s->warnq_head++]);
}

const char *sym_strdup(struct sym_session *s, const char *str)
{
	int64_t id = strtab_intern_cstr(&s->strs, str);
	return id < 0 ? NULL : strtab_get(&s->strs, (uint32_t)id);
}
