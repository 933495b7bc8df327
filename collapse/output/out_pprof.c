/*
 * out_pprof.c - the pprof writer: struct profile -> gzipped profile.proto
 * (perftools.profiles.Profile, schema in collapse/model/profile.proto).
 * Pass 1, what the samples use and in which order, is pprof_ctx.c's; here
 * pass 2 builds the message from it, packs and gzips it.
 *
 * Why protobuf-c: the encoding is done by a maintained library generated
 * from the schema (protoc-c), not by hand-rolled varint code, so field
 * numbers, wire types and packing of repeated scalars come from one place
 * and stay right.  zlib does the gzip framing.
 *
 * What is written (pprof's CPU-profile convention):
 *   sample_type = [samples/count, cpu/nanoseconds], period_type =
 *   cpu/nanoseconds, period = 1e9/hz (hz 99 when unknown), value[1] =
 *   count * period; with --countname NAME (the counts are not samples:
 *   bt/offcpu.bt's nanoseconds), sample_type = period_type = [NAME/UNIT],
 *   period 1, value[0] = count (pp_unit()); time_nanos, duration_nanos
 *   from the capture metadata;
 *   one Mapping per mapping that samples use (the executable first), one
 *   Location per location used, one Function per function used; labels
 *   pid, tid (num) and comm (the process's name where its map was saved,
 *   else the thread's), thread_name (str) when known; two comments:
 *   the loss counters and the capture metadata.
 * Ids are dense and depend on the profile only: mappings with the
 * executable first, then by file name, build-id and range; locations in
 * (mapping, address) order; functions in first-use order of those
 * locations; samples sorted by labels then stack root first; strings in
 * first-use order of the message.  So the same profile gives the same
 * bytes; the gzip header carries mtime 0 and a fixed OS byte.  The orders
 * are chosen for size: together they make a 30 s system-wide profile
 * ~16% smaller than first-use order (bench/pprof.sh).
 * Strings that are not valid UTF-8 get each bad byte replaced by U+FFFD:
 * proto3 `string` fields must be UTF-8 or strict readers (protoc, the C++
 * and Python runtimes) refuse the whole profile.
 *
 * Locations (one per unique address, with its mapping and the address as
 * the process saw it, Line entries innermost first when DWARF gives them):
 *  - with an address (pf_location.address != 0): one per profile location,
 *    written with its address, its own mapping and its line chain (none
 *    when unsymbolized: an honest unknown pprof can symbolize later from
 *    the build-id).  Every mapping keeps its range and file offset; a
 *    library in many processes is many mappings, as in /proc/PID/maps
 *    (profile_mapping() already interns mappings equal in file, build-id,
 *    range and offset, so nothing is merged here);
 *  - without an address (folded input, pre-symbolized bpftrace text): one
 *    per (mapping, line chain), address 0;
 *  - known only by its fallback text (synthetic marks, user addresses
 *    whose process had no saved mapping): one per text, a Function named
 *    by it, so the frame is not lost;
 *  - kernel frames with no mapping: the profile's kernel mapping, or a
 *    synthetic "[kernel.kallsyms]" one (range 0/0, or the kernel half of
 *    the address space when its locations carry addresses);
 *  - an empty stack: one "[no stack]" frame, because pprof's readers drop
 *    samples without locations.
 * Mapping flags (has_functions ...) are the symbolizer's; see
 * build_mapping() for the one case the writer sets has_functions itself.
 * Profile samples that become equal (same labels, same output stack) are
 * merged, their counts added.
 */
#include "output/out.h"
#include "model/losses.h"
#include "output/pprof_ctx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "model/profile.pb-c.h"

/* ---- pass 2: the protobuf-c message ----------------------------------- */

/* Every array the message points into; freed together. */
struct pp_msg {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType vt[3];	/* samples, cpu, period */
	Perftools__Profiles__ValueType *vtp[2];
	Perftools__Profiles__Sample *samples, **samplep;
	uint64_t *locids;
	int64_t *values;
	Perftools__Profiles__Label *labels, **labelp;
	Perftools__Profiles__Location *locs, **locp;
	Perftools__Profiles__Line *lines, **linep;
	Perftools__Profiles__Function *fns, **fnp;
	Perftools__Profiles__Mapping *maps, **mapp;
	int64_t comments[2];
	char **strs;
};

/* The message's arrays, in the context's arena (freed with it). */
static int msg_alloc(struct pp_msg *m, struct pp_ctx *c)
{
	m->samples = pp_calloc(c, c->nsamples, sizeof(*m->samples));
	m->samplep = pp_calloc(c, c->nsamples, sizeof(*m->samplep));
	m->locids = pp_calloc(c, c->ostack_len, sizeof(*m->locids));
	m->values = pp_calloc(c, c->nsamples * 2, sizeof(*m->values));
	m->labels = pp_calloc(c, c->nlabels, sizeof(*m->labels));
	m->labelp = pp_calloc(c, c->nlabels, sizeof(*m->labelp));
	m->locs = pp_calloc(c, c->nlocs, sizeof(*m->locs));
	m->locp = pp_calloc(c, c->nlocs, sizeof(*m->locp));
	m->lines = pp_calloc(c, c->nlines, sizeof(*m->lines));
	m->linep = pp_calloc(c, c->nlines, sizeof(*m->linep));
	m->fns = pp_calloc(c, c->nfns, sizeof(*m->fns));
	m->fnp = pp_calloc(c, c->nfns, sizeof(*m->fnp));
	m->maps = pp_calloc(c, c->nmaps, sizeof(*m->maps));
	m->mapp = pp_calloc(c, c->nmaps, sizeof(*m->mapp));
	if (!m->samples || !m->samplep || !m->locids || !m->values ||
	    !m->labels || !m->labelp || !m->locs || !m->locp || !m->lines ||
	    !m->linep || !m->fns || !m->fnp || !m->maps || !m->mapp)
		return -ENOMEM;
	return 0;
}

static int64_t sat_mul(uint64_t a, uint64_t b)
{
	if (b && a > (uint64_t)INT64_MAX / b)
		return INT64_MAX;
	return (int64_t)(a * b);
}

/* Keys are interned on first use so an unused key costs nothing. */
static int add_label(struct pp_ctx *c, Perftools__Profiles__Label *lb,
		     const char *key, int64_t num, uint32_t pstr)
{
	static const Perftools__Profiles__Label init =
		PERFTOOLS__PROFILES__LABEL__INIT;
	int64_t k = pp_cstr(c, key), s = pstr ? pp_pstr(c, pstr) : 0;

	if (k < 0 || s < 0)
		return -ENOMEM;
	*lb = init;
	lb->key = k;
	lb->str = s;
	lb->num = pstr ? 0 : num;
	return 0;
}

static int build_labels(struct pp_ctx *c, const struct pf_sample *s,
			Perftools__Profiles__Label *lb, size_t *n)
{
	int rc = 0;
	size_t k = 0;

	if (s->pid)
		rc |= add_label(c, &lb[k++], "pid", s->pid, 0);
	if (s->tid)
		rc |= add_label(c, &lb[k++], "tid", s->tid, 0);
	if (pp_comm_label(s))
		rc |= add_label(c, &lb[k++], "comm", 0, pp_comm_label(s));
	if (s->thread_name)
		rc |= add_label(c, &lb[k++], "thread_name", 0, s->thread_name);
	*n = k;
	return rc ? -ENOMEM : 0;
}

static int build_samples(struct pp_ctx *c, struct pp_msg *m, uint64_t period)
{
	static const Perftools__Profiles__Sample init =
		PERFTOOLS__PROFILES__SAMPLE__INIT;
	size_t nl = 0;

	for (size_t ns = 0; ns < c->nsamples; ns++) {
		const struct pp_sample *os = &c->osm[ns];
		const struct pf_sample *s = &c->p->samples[os->sid];
		Perftools__Profiles__Sample *o = &m->samples[ns];
		size_t k;
		*o = init;
		o->n_location_id = os->depth;
		o->location_id = m->locids + os->off;
		for (uint32_t i = 0; i < os->depth; i++)
			m->locids[os->off + i] = c->ostack[os->off + i];
		o->n_value = c->countname ? 1 : 2;
		o->value = m->values + 2 * ns;
		o->value[0] = sat_mul(os->count, 1);
		o->value[1] = sat_mul(os->count, period);
		if (build_labels(c, s, m->labels + nl, &k))
			return -ENOMEM;
		o->n_label = k;
		o->label = m->labelp + nl;
		for (size_t i = 0; i < k; i++, nl++)
			m->labelp[nl] = &m->labels[nl];
		m->samplep[ns] = o;
	}
	m->prof.n_sample = c->nsamples;
	m->prof.sample = m->samplep;
	return 0;
}

static int build_mapping(struct pp_ctx *c, Perftools__Profiles__Mapping *o,
			 uint32_t pm)
{
	static const Perftools__Profiles__Mapping init =
		PERFTOOLS__PROFILES__MAPPING__INIT;
	const struct pf_mapping *m = &c->p->mappings[pm == PP_NO_MAP ? 0 : pm];
	int64_t fname, bid;

	*o = init;
	if (pm == PP_NO_MAP) {
		fname = pp_cstr(c, PP_KERNEL_NAME);
		/* the writer's own lines: the kernel symbols the input named */
		o->has_functions = c->kmap_has_functions;
		if (c->kmap_addr) {	/* the kernel half, as resolver.c */
			o->memory_start = PP_KERNEL_START;
			o->memory_limit = UINT64_MAX;
		}
		bid = 0;
	} else {
		if (!m->filename && m->is_kernel)
			fname = pp_cstr(c, PP_KERNEL_NAME);
		else
			fname = pp_pstr(c, m->filename);
		bid = pp_pstr(c, m->build_id);
		o->memory_start = m->start;
		o->memory_limit = m->limit;
		o->file_offset = m->offset;
		/* The symbolizer's flags.  pprof re-symbolizes a mapping with
		 * none of functions/filenames/line numbers, replacing each
		 * location's lines by a lookup of its address; has_functions
		 * says every location on it has a function, so a mapping
		 * with one the symbolizer could not name (a stripped static
		 * function) says it has none, and a reader with the binary
		 * names it.  A location written with lines but no address
		 * (pre-symbolized input on a mapping) would be looked up at
		 * 0, so such a mapping says it has functions, which its
		 * lines are. */
		o->has_functions = (m->has_functions && !c->mapunres[pm]) ||
				   (c->mapsym0[pm] && !m->has_filenames &&
				    !m->has_line_numbers);
		if (pm == c->kpm)	/* kallsyms may be hidden or unreadable */
			o->has_functions = c->kmap_has_functions;
		/* pprof re-symbolizes only a mapping with none of the three:
		 * one with an unnamed location says it has none (a reader with
		 * the binary looks up every location again, the named ones
		 * too: it keeps a location's lines where its own lookup finds
		 * nothing) */
		bool part = c->mapunres[pm];
		o->has_filenames = m->has_filenames && !part;
		o->has_line_numbers = m->has_line_numbers && !part;
		o->has_inline_frames = m->has_inline_frames && !part;
	}
	if (fname < 0 || bid < 0)
		return -ENOMEM;
	o->filename = fname;
	o->build_id = bid;
	return 0;
}

static int build_mappings(struct pp_ctx *c, struct pp_msg *m)
{
	for (size_t i = 0; i < c->nmaps; i++) {
		if (build_mapping(c, &m->maps[i], c->maps[i]))
			return -ENOMEM;
		m->maps[i].id = i + 1;
		m->mapp[i] = &m->maps[i];
	}
	m->prof.n_mapping = c->nmaps;
	m->prof.mapping = m->mapp;
	return 0;
}

static void add_line(struct pp_msg *m, size_t *nl, uint32_t fn,
		     uint32_t line)
{
	static const Perftools__Profiles__Line init =
		PERFTOOLS__PROFILES__LINE__INIT;

	m->lines[*nl] = init;
	m->lines[*nl].function_id = fn;
	m->lines[*nl].line = line;
	m->linep[*nl] = &m->lines[*nl];
	(*nl)++;
}

static void build_location(struct pp_ctx *c, struct pp_msg *m, size_t i,
			   size_t *nl)
{
	static const Perftools__Profiles__Location init =
		PERFTOOLS__PROFILES__LOCATION__INIT;
	const struct profile *p = c->p;
	Perftools__Profiles__Location *o = &m->locs[i];

	*o = init;
	o->id = i + 1;
	o->line = m->linep + *nl;
	if (c->locs[i] == PP_NO_STACK_LOC) {
		add_line(m, nl, c->nostack_fn, 0);
		o->n_line = 1;
		return;
	}
	const struct pf_location *l = &p->locations[c->locs[i]];
	o->mapping_id = l->mapping ? c->mapmap[l->mapping]
				   : pp_loc_on_kernel_map(l) ? c->kout : 0;
	/* (a return address one past its mapping, after a call to a
	 * noreturn function at the end of the text, is inside it so) */
	o->address = pp_loc_address(l);
	if (pp_loc_is_synthetic(l)) {
		add_line(m, nl, c->synfn[l->unknown_name], 0);
		o->n_line = 1;
		return;
	}
	for (uint32_t k = 0; k < l->nlines; k++) {
		const struct pf_line *pl = &p->lines[l->line_start + k];
		add_line(m, nl, c->fnmap[pl->function], pl->line);
	}
	o->n_line = l->nlines;
}

static void build_locations(struct pp_ctx *c, struct pp_msg *m)
{
	size_t nl = 0;

	for (size_t i = 0; i < c->nlocs; i++) {
		build_location(c, m, i, &nl);
		m->locp[i] = &m->locs[i];
	}
	m->prof.n_location = c->nlocs;
	m->prof.location = m->locp;
}

static int build_function(struct pp_ctx *c, Perftools__Profiles__Function *o,
			  const struct pp_fn *f)
{
	static const Perftools__Profiles__Function init =
		PERFTOOLS__PROFILES__FUNCTION__INIT;
	const struct pf_function *pf = &c->p->functions[f->fn];
	int64_t name, sys = 0, file = 0;

	*o = init;
	if (!f->fn && !f->name) {
		name = pp_cstr(c, PP_NO_STACK);
	} else if (!f->fn) {
		name = pp_pstr(c, f->name);
	} else {
		name = pp_pstr(c, pf->name);
		sys = pp_pstr(c, pf->system_name ? pf->system_name : pf->name);
		file = pp_pstr(c, pf->filename);
		o->start_line = pf->start_line;
	}
	if (!name)	/* an empty frame of folded input, as folded prints it */
		name = pp_cstr(c, "[empty]");
	if (name < 0 || sys < 0 || file < 0)
		return -ENOMEM;
	o->name = name;
	o->system_name = f->fn && sys ? sys : name;
	o->filename = file;
	return 0;
}

static int build_functions(struct pp_ctx *c, struct pp_msg *m)
{
	for (size_t i = 0; i < c->nfns; i++) {
		if (build_function(c, &m->fns[i], &c->fns[i]))
			return -ENOMEM;
		m->fns[i].id = i + 1;
		m->fnp[i] = &m->fns[i];
	}
	m->prof.n_function = c->nfns;
	m->prof.function = m->fnp;
	return 0;
}

/* Append " key=value" for a known profile string. */
static void meta_part(const struct profile *p, char *buf, size_t cap,
		      const char *key, uint32_t id)
{
	size_t n = strlen(buf);
	if (id && n < cap)
		snprintf(buf + n, cap - n, "%s%s=%s", n ? " " : "", key,
			 profile_str(p, id));
}

/* Append " KEY=V" to buf, or " KEY=unknown" when the input could not
 * tell. */
static void loss_counter(char *buf, size_t cap, const char *key, uint64_t v,
			 bool unknown)
{
	size_t n = strlen(buf);
	if (n + 1 >= cap)
		return;
	if (unknown)
		snprintf(buf + n, cap - n, " %s=unknown", key);
	else
		snprintf(buf + n, cap - n, " %s=%llu", key, (unsigned long long)v);
}

/* The same for a counter shown only when there is something to count
 * (rare ones, absent from most profiles). */
static void rare_counter(char *buf, size_t cap, const char *key, uint64_t v)
{
	if (v)
		loss_counter(buf, cap, key, v, false);
}

static int build_comments(struct pp_ctx *c, struct pp_msg *m)
{
	const struct pf_counters *k = &c->p->counters;
	const struct pf_meta *mt = &c->p->meta;
	char buf[4096];
	int64_t id;

	snprintf(buf, sizeof(buf), "%s=%llu", c->countname ? c->countname : "samples",
		 (unsigned long long)k->samples);
	/* every counter, in the table's order; "unknown" where the input
	 * could not tell */
	for (int i = 0; i < LOSS_N; i++) {
		enum loss_id l = (enum loss_id)i;
		if (loss_table[l].rare)
			rare_counter(buf, sizeof(buf), loss_table[l].key,
				     loss_value(k, l));
		else
			loss_counter(buf, sizeof(buf), loss_table[l].key,
				     loss_value(k, l), loss_unknown(k, l));
	}
	if ((id = pp_cstr(c, buf)) < 0)
		return -ENOMEM;
	m->comments[m->prof.n_comment++] = id;
	buf[0] = '\0';
	meta_part(c->p, buf, sizeof(buf), "bpftrace", mt->bpftrace_version);
	meta_part(c->p, buf, sizeof(buf), "kernel", mt->kernel_release);
	meta_part(c->p, buf, sizeof(buf), "host", mt->hostname);
	meta_part(c->p, buf, sizeof(buf), "cmdline", mt->cmdline);
	if (buf[0]) {
		if ((id = pp_cstr(c, buf)) < 0)
			return -ENOMEM;
		m->comments[m->prof.n_comment++] = id;
	}
	m->prof.comment = m->comments;
	return 0;
}

/* pprof's unit for a --countname: readers scale time and memory units
 * ("1.80s"), and show any other as a count. */
static const char *pp_unit(const char *name)
{
	static const char *const units[][2] = {
		{ "ns", "nanoseconds" }, { "nanoseconds", "nanoseconds" },
		{ "us", "microseconds" }, { "microseconds", "microseconds" },
		{ "ms", "milliseconds" }, { "milliseconds", "milliseconds" },
		{ "s", "seconds" }, { "seconds", "seconds" },
		{ "bytes", "bytes" }, { "B", "bytes" },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(name, units[i][0]))
			return units[i][1];
	return "count";
}

/* Counts that are not samples (--countname): one value, in their unit,
 * never count * 1e9/hz (1.8 s off-CPU would read as 5057 hours). */
static int build_header_counts(struct pp_ctx *c, struct pp_msg *m)
{
	static const Perftools__Profiles__ValueType vinit =
		PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	int64_t type = pp_cstr(c, c->countname);
	int64_t unit = pp_cstr(c, pp_unit(c->countname));

	if (type < 0 || unit < 0)
		return -ENOMEM;
	m->vt[0] = vinit;
	m->vt[0].type = type;
	m->vt[0].unit = unit;
	m->vtp[0] = &m->vt[0];
	m->prof.n_sample_type = 1;
	m->prof.sample_type = m->vtp;
	m->prof.period_type = &m->vt[0];
	m->prof.period = 1;
	m->prof.time_nanos = (int64_t)c->p->meta.time_nanos;
	m->prof.duration_nanos = (int64_t)c->p->meta.duration_nanos;
	return 0;
}

static int build_header(struct pp_ctx *c, struct pp_msg *m, uint64_t period)
{
	static const Perftools__Profiles__ValueType vinit =
		PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	if (c->countname)
		return build_header_counts(c, m);
	int64_t samples = pp_cstr(c, "samples"), count = pp_cstr(c, "count");
	int64_t cpu = pp_cstr(c, "cpu"), ns = pp_cstr(c, "nanoseconds");

	if (samples < 0 || count < 0 || cpu < 0 || ns < 0)
		return -ENOMEM;
	for (int i = 0; i < 3; i++)
		m->vt[i] = vinit;
	m->vt[0].type = samples;
	m->vt[0].unit = count;
	m->vt[1].type = m->vt[2].type = cpu;
	m->vt[1].unit = m->vt[2].unit = ns;
	m->vtp[0] = &m->vt[0];
	m->vtp[1] = &m->vt[1];
	m->prof.n_sample_type = 2;
	m->prof.sample_type = m->vtp;
	m->prof.period_type = &m->vt[2];
	m->prof.period = (int64_t)period;
	m->prof.time_nanos = (int64_t)c->p->meta.time_nanos;
	m->prof.duration_nanos = (int64_t)c->p->meta.duration_nanos;
	return 0;
}

static int build_msg(struct pp_ctx *c, struct pp_msg *m)
{
	static const Perftools__Profiles__Profile init =
		PERFTOOLS__PROFILES__PROFILE__INIT;
	uint64_t hz = c->p->meta.hz ? c->p->meta.hz : PP_DEFAULT_HZ;
	uint64_t period = 1000000000ULL / hz;

	m->prof = init;
	if (msg_alloc(m, c) || build_header(c, m, period) ||
	    build_samples(c, m, period) || build_mappings(c, m) ||
	    build_functions(c, m) || build_comments(c, m))
		return -ENOMEM;
	build_locations(c, m);
	/* The string table is complete only now. */
	m->strs = pp_calloc(c, c->st.n, sizeof(*m->strs));
	if (!m->strs)
		return -ENOMEM;
	for (size_t i = 0; i < c->st.n; i++)
		m->strs[i] = c->st.strs[i];
	m->prof.n_string_table = c->st.n;
	m->prof.string_table = m->strs;
	return 0;
}

/* ---- output ------------------------------------------------------------ */

static int write_raw(FILE *out, const uint8_t *buf, size_t len,
		     struct sf_err *err)
{
	if (len && fwrite(buf, 1, len, out) != len)
		return sf_err_set(err, EIO, "pprof: write error");
	return 0;
}

/* zlib's state from the arena; freed with it. */
static voidpf zarena_alloc(voidpf ar, uInt n, uInt size)
{
	return sf_arena_zalloc(ar, n, size);
}

static void zarena_free(voidpf ar, voidpf p)
{
	(void)ar;
	(void)p;
}

/* gzip (deflate, windowBits 31) with a fixed header: mtime 0, OS 255.
 * Level 6 (zlib default): level 9 costs twice the CPU for 1% smaller
 * output (bench/pprof.sh). */
static int write_gzip(struct pp_ctx *c, FILE *out, const uint8_t *buf,
		      size_t len, struct sf_err *err)
{
	z_stream zs;
	gz_header hdr;
	unsigned char chunk[65536];
	int zrc, rc = 0;

	memset(&zs, 0, sizeof(zs));
	zs.zalloc = zarena_alloc;
	zs.zfree = zarena_free;
	zs.opaque = &c->ar;
	memset(&hdr, 0, sizeof(hdr));
	hdr.os = 255;
	zrc = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8,
			   Z_DEFAULT_STRATEGY);
	if (zrc != Z_OK)
		return sf_err_set(err, ENOMEM, "pprof: deflateInit2: %s",
				  zError(zrc));
	deflateSetHeader(&zs, &hdr);
	zs.next_in = (Bytef *)buf;
	zs.avail_in = (uInt)len;	/* packed size < 4 GiB, checked by caller */
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zrc = deflate(&zs, Z_FINISH);
		if (zrc == Z_STREAM_ERROR) {
			rc = sf_err_set(err, EIO, "pprof: deflate failed");
			break;
		}
		rc = write_raw(out, chunk, sizeof(chunk) - zs.avail_out, err);
	} while (!rc && zrc != Z_STREAM_END);
	deflateEnd(&zs);
	return rc;
}

static int pack_and_write(struct pp_ctx *c, FILE *out, const struct pp_msg *m,
			  bool gzip, struct sf_err *err)
{
	size_t len = perftools__profiles__profile__get_packed_size(&m->prof);
	uint8_t *buf;
	int rc;

	if (len >= UINT32_MAX)
		return sf_err_set(err, EFBIG, "pprof: profile too large (%zu bytes)",
				  len);
	buf = pp_calloc(c, len, 1);
	if (!buf)
		return sf_err_set(err, ENOMEM, "pprof: out of memory");
	perftools__profiles__profile__pack(&m->prof, buf);
	rc = gzip ? write_gzip(c, out, buf, len, err)
		  : write_raw(out, buf, len, err);
	if (!rc && fflush(out))
		rc = sf_err_set(err, EIO, "pprof: write error");
	return rc;
}

/* ---- folded-only input -------------------------------------------------- */

/* A profile of named locations from a fold (root-first frames), for input
 * that came without a profile. */
static int profile_from_fold(struct profile *p, const struct fold *f)
{
	uint32_t *locs = NULL;
	size_t cap = 0;
	int rc = profile_init(p);

	for (size_t i = 0; !rc && i < f->n; i++) {
		const char *s = f->lines[i].stack, *end = s + f->lines[i].len;
		size_t n = 0, len;
		while (!rc && s <= end) {
			const char *e = fold_next_frame(s, end, &len);
			int64_t id = profile_named_location(p, s, len,
							    PF_LOC_USER);
			if (id < 0 || sf_grow((void **)&locs, &cap, n + 1,
					      sizeof(*locs)))
				rc = -ENOMEM;
			else
				locs[n++] = (uint32_t)id;
			s = e + 1;
		}
		for (size_t a = 0; !rc && n && a < n / 2; a++) {
			uint32_t t = locs[a];
			locs[a] = locs[n - 1 - a];
			locs[n - 1 - a] = t;
		}
		if (!rc)
			rc = profile_add_sample(p, 0, 0, 0, 0, locs,
						(uint32_t)n, f->lines[i].count);
	}
	if (!rc)
		p->counters.samples = f->total;
	free(locs);
	return rc;
}

/* ---- entry ---------------------------------------------------------------- */

static int write_profile(FILE *out, const struct profile *p, bool gzip,
			 const struct out_opts *opts, struct sf_err *err)
{
	unsigned fold_flags = opts ? opts->fold_flags : 0;
	const char *countname = opts ? opts->countname : NULL;
	struct pp_ctx c;
	struct pp_msg m;
	int rc;

	memset(&m, 0, sizeof(m));
	rc = pp_ctx_init(&c, p);
	c.fold_flags = fold_flags & (FOLD_USER_ONLY | FOLD_KERNEL_ONLY);
	c.countname = countname && strcmp(countname, "samples") ? countname
								: NULL;
	if (!rc)
		rc = pp_collect(&c);
	if (!rc) {
		pp_order_maps(&c);
		rc = pp_order_locs(&c);
	}
	if (!rc)
		rc = build_msg(&c, &m);
	if (rc)
		rc = sf_err_set(err, ENOMEM, "pprof: out of memory");
	else
		rc = pack_and_write(&c, out, &m, gzip, err);
	pp_ctx_release(&c);
	return rc;
}

int out_pprof_write(FILE *out, const struct out_input *in,
		    const struct out_opts *opts, struct sf_err *err)
{
	bool gzip = !(opts && opts->pprof_no_gzip);
	struct profile tmp;
	int rc;

	memset(&tmp, 0, sizeof(tmp));
	if (in->prof)
		return write_profile(out, in->prof, gzip, opts, err);
	if (!in->fold)
		return sf_err_set(err, EINVAL, "pprof: no profile to write");
	rc = profile_from_fold(&tmp, in->fold);
	if (in->counters) {	/* what the input told (unparsable lines...) */
		uint64_t n = tmp.counters.samples;
		tmp.counters = *in->counters;
		tmp.counters.samples = n;
	}
	tmp.counters.losses_unknown = true;	/* folded text records none */
	if (rc)
		rc = sf_err_set(err, ENOMEM, "pprof: out of memory");
	else
		rc = write_profile(out, &tmp, gzip, opts, err);
	profile_release(&tmp);
	return rc;
}
