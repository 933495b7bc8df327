/* reccache.c - see reccache.h. */
#include "ingest/reccache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int reccache_init(struct reccache *rc)
{
	memset(rc, 0, sizeof(*rc));
	return strtab_init(&rc->keys);
}

void reccache_release(struct reccache *rc)
{
	free(rc->buf);
	free(rc->ent);
	strtab_release(&rc->keys);
	memset(rc, 0, sizeof(*rc));
}

static int buf_add(struct reccache *rc, const char *s, size_t len)
{
	if (rc->len + len + 1 > rc->cap &&
	    sf_grow((void **)&rc->buf, &rc->cap, rc->len + len + 1, 1))
		return -ENOMEM;
	memcpy(rc->buf + rc->len, s, len);
	rc->len += len;
	rc->buf[rc->len++] = '\n';
	return 0;
}

/* Does the line end in "]: DIGITS"?  *digits points at them. */
static bool ends_entry(const char *s, size_t len, size_t *digits)
{
	size_t i = len;
	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i == len || i < 3 || s[i - 1] != ' ' || s[i - 2] != ':' ||
	    s[i - 3] != ']')
		return false;
	*digits = i;
	return true;
}

/* "@name[" starts an entry (before any ':'), as the parser sees it. */
static bool starts_entry(const char *s, size_t len)
{
	if (!len || s[0] != '@')
		return false;
	for (size_t i = 1; i < len; i++) {
		if (s[i] == '[')
			return true;
		if (s[i] == ':')
			return false;
	}
	return false;
}

/* Complete entry: look it up by its text without the count. */
static int finish(struct reccache *rc, size_t digits_at, size_t line_start,
		  struct reccache_entry *hit, uint64_t *count)
{
	size_t klen = line_start + digits_at;
	rc->klen = klen;
	if (!sf_parse_u64(rc->buf + klen, rc->len - 1 - klen, count) ||
	    *count > (uint64_t)INT64_MAX)
		return RC_MISS;	/* let the parser reject it */
	int64_t id = strtab_intern(&rc->keys, rc->buf, klen);
	if (id < 0)
		return -ENOMEM;
	if ((size_t)id < rc->ent_cap && rc->ent[id].sample) {
		*hit = rc->ent[id];
		rc->len = 0;
		rc->open = false;
		return RC_HIT;
	}
	return RC_MISS;
}

int reccache_line(struct reccache *rc, const char *line, size_t len,
		  struct reccache_entry *hit, uint64_t *count)
{
	size_t digits, start = rc->len;
	if (len && line[len - 1] == '\r')
		len--;
	if (!rc->open) {
		if (!starts_entry(line, len))
			return RC_PASS;
		rc->open = true;
		rc->len = 0;
		start = 0;
	} else if (!len || (line[0] != ' ' && line[0] != '\t' &&
			    line[0] != ',' && line[0] != ']')) {
		rc->open = false;
		return RC_REPLAY;	/* broken entry: the parser decides */
	}
	if (buf_add(rc, line, len))
		return -ENOMEM;
	bool closer = start == 0 || line[0] == ',' || line[0] == ']';
	if (closer && ends_entry(line, len, &digits)) {
		rc->open = false;
		return finish(rc, digits, start, hit, count);
	}
	return RC_CONSUMED;
}

int reccache_replay(struct reccache *rc,
		    int (*fn)(void *ctx, const char *line, size_t len),
		    void *ctx)
{
	size_t p = 0;
	int ret = 0;
	while (!ret && p < rc->len) {
		const char *nl = memchr(rc->buf + p, '\n', rc->len - p);
		size_t l = (size_t)(nl - (rc->buf + p));
		ret = fn(ctx, rc->buf + p, l);
		p += l + 1;
	}
	return ret;
}

size_t reccache_lines(const struct reccache *rc)
{
	size_t n = 0;
	for (const char *p = rc->buf, *e = rc->buf + rc->len;
	     p < e && (p = memchr(p, '\n', (size_t)(e - p))); p++)
		n++;
	return n;
}

int reccache_learn(struct reccache *rc, uint32_t sample, uint32_t flags)
{
	int64_t id = strtab_intern(&rc->keys, rc->buf, rc->klen);
	rc->len = 0;
	if (id < 0)
		return -ENOMEM;
	size_t old = rc->ent_cap;
	if (sf_grow((void **)&rc->ent, &rc->ent_cap, (size_t)id + 1,
		    sizeof(*rc->ent)))
		return -ENOMEM;
	if (rc->ent_cap > old)
		memset(rc->ent + old, 0, (rc->ent_cap - old) * sizeof(*rc->ent));
	if (sample)
		rc->ent[id] = (struct reccache_entry){ sample, flags };
	return 0;
}

void reccache_discard(struct reccache *rc)
{
	rc->len = 0;
	rc->open = false;
}
