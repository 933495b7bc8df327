/* out_folded.c - FlameGraph folded stacks: `frame;...;frame COUNT`. */
#include "output/out.h"
#include "model/losses.h"

#include <errno.h>
#include <inttypes.h>

/* " KEY=VALUE", blanks, '%' and control bytes as %XX */
static void put_word(FILE *out, const char *key, const char *v)
{
	fprintf(out, " %s=", key);
	for (; *v; v++)
		if ((unsigned char)*v <= ' ' || *v == '%' || *v == 0x7f)
			fprintf(out, "%%%02X", (unsigned char)*v);
		else
			fputc(*v, out);
}

static void put_num(FILE *out, const char *key, uint64_t v)
{
	if (v)
		fprintf(out, " %s=%" PRIu64, key, v);
}

/* The capture's provenance (report.h's PROVENANCE line), when known. */
static void put_provenance(FILE *out, const struct profile *p)
{
	const struct pf_meta *m = &p->meta;
	const struct pf_counters *c = &p->counters;
	if (!m->hz && !m->duration_nanos)
		return;		/* not a capture's */
	fputs("# stackfold:", out);
	put_num(out, "hz", m->hz);
	put_num(out, "start_ns", m->time_nanos);
	put_num(out, "duration_ns", m->duration_nanos);
	for (size_t i = 0; i < LOSS_N; i++)	/* pprof's comment's keys */
		if (i != LOSS_UNSYMBOLIZED_FRAMES)	/* counted when read */
			put_num(out, loss_table[i].key, loss_value(c, (enum loss_id)i));
	if (m->bpftrace_version)
		put_word(out, "bpftrace", profile_str(p, m->bpftrace_version));
	if (m->kernel_release)
		put_word(out, "kernel", profile_str(p, m->kernel_release));
	if (m->hostname)
		put_word(out, "host", profile_str(p, m->hostname));
	if (m->cmdline)
		put_word(out, "cmdline", profile_str(p, m->cmdline));
	fputc('\n', out);
}

int out_folded_write(FILE *out, const struct out_input *in,
		     const struct out_opts *opts, struct sf_err *err)
{
	const struct fold *f = in->fold;
	if (opts->provenance && in->meta && !f->has_second)
		put_provenance(out, in->meta);
	for (size_t i = 0; i < f->n; i++) {
		const struct fold_line *l = &f->lines[i];
		if (f->has_second)
			fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", l->stack,
				l->count2, l->count);
		else
			fprintf(out, "%s %" PRIu64 "\n", l->stack, l->count);
	}
	if (ferror(out))
		return sf_err_set(err, EIO, "write error");
	return 0;
}
