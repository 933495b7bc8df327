/*
 * pyroscope.c - see pyroscope.h.
 */
#include "store/pyroscope.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static void label_value(struct buf *b, const char *s)
{
	for (; *s; s++) {
		char c = *s;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
		buf_add(b, ok ? s : "_", 1);
	}
}

int pyro_deliver(struct http_conn *c, const struct store_window *w,
		 struct sf_err *err)
{
	struct buf name = { 0 }, pq = { 0 }, body = { 0 };
	buf_printf(&name, "%s{host=", c->url->path);
	label_value(&name, w->host);
	if (w->kernel[0]) {
		buf_str(&name, ",kernel=");
		label_value(&name, w->kernel);
	}
	if (w->labels && w->labels[0]) {	/* checked: no escaping needed */
		buf_str(&name, ",");
		buf_str(&name, w->labels);
	}
	buf_str(&name, "}");
	uint64_t from = w->start_ns / 1000000000ULL;
	uint64_t until = (w->start_ns + w->duration_ns + 999999999ULL) / 1000000000ULL;
	buf_str(&pq, "/ingest?name=");
	http_urlencode(&pq, name.data ? name.data : "", name.len);
	buf_printf(&pq, "&from=%" PRIu64 "&until=%" PRIu64 "&sampleRate=%u"
		   "&spyName=stackfold&units=samples&aggregationType=sum"
		   "&format=folded", from, until > from ? until : from + 1,
		   w->hz ? w->hz : 99);
	buf_add(&pq, "", 1);
	for (size_t i = 0; i < w->nstacks; i++) {
		const struct win_stack *k = &w->stacks[i];
		buf_add(&body, k->comm, k->comm_len);
		for (uint32_t f = 0; f < k->nframes; f++) {
			buf_add(&body, ";", 1);
			buf_add(&body, w->frames[k->frame0 + f].s,
				w->frames[k->frame0 + f].len);
		}
		buf_printf(&body, " %" PRIu64 "\n", k->count);
	}
	int ret = name.oom || pq.oom || body.oom
		? sf_err_set(err, ENOMEM, "out of memory")
		: http_post(c, pq.data, "text/plain", body.data, body.len, NULL, 0,
			    30, err);
	buf_free(&name);
	buf_free(&pq);
	buf_free(&body);
	return ret;
}
