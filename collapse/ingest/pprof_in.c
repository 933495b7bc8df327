/* pprof_in.c - see pprof_in.h.  Decoded by protobuf-c from the same
 * collapse/model/profile.proto the writer uses; zlib undoes the gzip. */
#include "ingest/pprof_in.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ingest/pprof_comments.h"
#include "ingest/report_priv.h"
#include "model/losses.h"
#include "model/profile.pb-c.h"

typedef Perftools__Profiles__Profile PProf;

bool pprof_sniff(const unsigned char *h, size_t n)
{
	if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b)
		return true;
	/* field 1..14 with its wire type: sample_type (1, LEN), sample (2,
	 * LEN), mapping (3), location (4), function (5), string_table (6);
	 * text input never starts with these control bytes */
	if (n < 2)
		return false;
	unsigned field = h[0] >> 3, wire = h[0] & 7;
	return field >= 1 && field <= 6 && wire == 2;
}

/* All of fd after head, into *buf. */
static int slurp(const unsigned char *head, size_t n, int fd,
		 unsigned char **buf, size_t *len)
{
	size_t cap = n + 65536;
	*buf = malloc(cap);
	if (!*buf)
		return -ENOMEM;
	if (n)	/* head may be NULL then (pprof_load()) */
		memcpy(*buf, head, n);
	*len = n;
	for (;;) {
		if (*len == cap) {
			if (cap >= PPROF_IN_MAX)
				return -EFBIG;
			size_t ncap = cap > PPROF_IN_MAX / 2 ? PPROF_IN_MAX : cap * 2;
			unsigned char *nb = realloc(*buf, ncap);
			if (!nb)
				return -ENOMEM;
			*buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, *buf + *len, cap - *len);
		if (r == 0)
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		*len += (size_t)r;
	}
}

/* --- the decoded size, from the wire format --- */

/* malloc's chunk for n bytes (glibc, 64-bit: 8 bytes of header, 16-byte
 * steps, 32 at least). */
static uint64_t chunk(uint64_t n)
{
	n = (n + 8 + 15) & ~(uint64_t)15;
	return n < 32 ? 32 : n;
}

static bool wire_varint(const unsigned char **p, const unsigned char *end,
			uint64_t *v)
{
	*v = 0;
	for (unsigned sh = 0; *p < end && sh < 64; sh += 7) {
		unsigned char c = *(*p)++;
		*v |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* Elements of a packed repeated field's body: varints end in a byte
 * below 0x80; fixed ones by their width. */
static uint64_t packed_count(const ProtobufCFieldDescriptor *f,
			     const unsigned char *p, size_t n)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return n / 8;
	case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return n / 4;
	default: {
		uint64_t k = 0;
		for (size_t i = 0; i < n; i++)
			k += p[i] < 0x80;
		return k;
	}
	}
}

#define COST_MAX_FIELDS 32	/* profile.proto's messages have 14 at most */
#define COST_MAX_DEPTH 8	/* profile.proto nests 3 deep */

/*
 * What protobuf-c allocates unpacking p[0..n) as a message of type d:
 * the struct; per repeated field an array (8 bytes an element, 16 for
 * bytes); a copy of each string, bytes and unknown field; the
 * sub-messages; its scan slots (32 bytes a field, in slabs that double:
 * 64 counted).  Malformed input is costed up to where it breaks
 * (protobuf-c stops there too).
 */
static uint64_t msg_cost(const ProtobufCMessageDescriptor *d,
			 const unsigned char *p, size_t n, int depth)
{
	const unsigned char *end = p + n;
	uint64_t count[COST_MAX_FIELDS] = { 0 }, cost = 0, fields = 0, unknown = 0;
	if (depth > COST_MAX_DEPTH || d->n_fields > COST_MAX_FIELDS)
		return 0;	/* not profile.proto's */
	while (p < end) {
		uint64_t key, v;
		if (!wire_varint(&p, end, &key))
			break;
		unsigned wt = key & 7;
		const ProtobufCFieldDescriptor *f =
			key >> 3 <= UINT32_MAX ?
			protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3)) :
			NULL;
		size_t fi = f ? (size_t)(f - d->fields) : 0;
		size_t len = 0;
		const unsigned char *body = p;
		fields++;
		if (wt == 0 && wire_varint(&p, end, &v)) {
			len = (size_t)(p - body);
		} else if ((wt == 1 || wt == 5) && (size_t)(end - p) >= (wt == 1 ? 8u : 4u)) {
			len = wt == 1 ? 8 : 4;
			p += len;
		} else if (wt == 2 && wire_varint(&p, end, &v) && v <= (uint64_t)(end - p)) {
			body = p;
			len = (size_t)v;
			p += len;
		} else {
			break;	/* groups, or cut short: protobuf-c fails */
		}
		if (!f) {
			unknown++;
			cost += chunk(len);
			continue;
		}
		uint64_t k = 1;
		if (wt == 2 && f->type == PROTOBUF_C_TYPE_MESSAGE)
			cost += msg_cost(f->descriptor, body, len, depth + 1);
		else if (wt == 2 && (f->type == PROTOBUF_C_TYPE_STRING ||
				     f->type == PROTOBUF_C_TYPE_BYTES))
			cost += chunk(len + 1);
		else if (wt == 2)
			k = packed_count(f, body, len);
		if (f->label == PROTOBUF_C_LABEL_REPEATED)
			count[fi] += k;
	}
	cost += chunk(d->sizeof_message) + 64 * fields;
	if (unknown)
		cost += chunk(unknown * sizeof(ProtobufCMessageUnknownField));
	for (size_t i = 0; i < d->n_fields; i++)
		if (count[i])
			cost += chunk(count[i] * (d->fields[i].type ==
						  PROTOBUF_C_TYPE_BYTES ? 16 : 8));
	return cost;
}

uint64_t pprof_unpack_cost(const unsigned char *b, size_t n)
{
	return msg_cost(&perftools__profiles__profile__descriptor, b, n, 0);
}

size_t pprof_mem_max(void)
{
	const char *e = getenv("STACKFOLD_PPROF_MAX");
	char *end;
	unsigned long long v = e && *e ? strtoull(e, &end, 0) : 0;
	return v && !*end && v <= SIZE_MAX ? (size_t)v : PPROF_MEM_MAX;
}

/* "N MiB", or "N bytes" below 1 MiB, into buf[32] (messages). */
static const char *size_str(char *buf, uint64_t n)
{
	snprintf(buf, 32, "%" PRIu64 " %s", n >= 1u << 20 ? n >> 20 : n,
		 n >= 1u << 20 ? "MiB" : "bytes");
	return buf;
}

int pprof_unpack(const unsigned char *b, size_t n, size_t held,
		 PProf **out, struct sf_err *err)
{
	uint64_t need = pprof_unpack_cost(b, n), max = pprof_mem_max();
	char s1[32], s2[32], s3[32];
	*out = NULL;
	if (need > max || held > max - need)
		return sf_err_set(err, ENOMEM, "decoding it would take %s (%s of "
				  "protobuf), past the %s this reader may hold "
				  "(STACKFOLD_PPROF_MAX): not read",
				  size_str(s1, need + held), size_str(s2, n),
				  size_str(s3, max));
	*out = perftools__profiles__profile__unpack(NULL, n, b);
	return *out ? 0 : -EINVAL;
}

/* The most bytes gunzip() makes: PPROF_IN_MAX, or a quarter of
 * pprof_mem_max() when that is less.  The unzipped bytes are held while
 * they are decoded, which takes several times their size (10 times for
 * stackfold's own profiles): more would be refused anyway, after a zip
 * bomb had filled the whole budget. */
static size_t gunzip_max(void)
{
	size_t m = pprof_mem_max() / 4;
	return m < PPROF_IN_MAX ? m : PPROF_IN_MAX;
}

/* Gunzip in[0..n) into *out (concatenated members too).  The buffer
 * never grows past gunzip_max(): a profile that fills it and still has
 * output is -EFBIG.  zlib counts in uInt, so one round offers at most
 * UINT_MAX bytes of room. */
static int gunzip(const unsigned char *in, size_t n, unsigned char **out,
		  size_t *olen)
{
	z_stream z = { 0 };
	const size_t max = gunzip_max();
	size_t cap = max > 65536 && n < (max - 65536) / 4 ? n * 4 + 65536 : max;
	int ret = 0;
	if (n > UINT_MAX)
		return -EFBIG;	/* slurp() stops at PPROF_IN_MAX anyway */
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	*out = malloc(cap);
	*olen = 0;
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)n;
	while (!ret) {
		if (!*out) {
			ret = -ENOMEM;
			break;
		}
		if (*olen == cap) {
			if (cap >= max) {
				ret = -EFBIG;
				break;
			}
			size_t ncap = cap > max / 2 ? max : cap * 2;
			unsigned char *nb = realloc(*out, ncap);
			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			*out = nb;
			cap = ncap;
		}
		size_t room = cap - *olen;
		if (room > UINT_MAX)
			room = UINT_MAX;
		z.next_out = *out + *olen;
		z.avail_out = (uInt)room;
		int zr = inflate(&z, Z_NO_FLUSH);
		*olen += room - z.avail_out;
		if (zr == Z_STREAM_END) {
			if (!z.avail_in)
				break;
			inflateReset(&z);	/* another member */
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			ret = -EIO;
		} else if (zr == Z_BUF_ERROR && !z.avail_in) {
			ret = -EIO;	/* cut short */
		}
	}
	inflateEnd(&z);
	return ret;
}

struct imp {
	struct report *r;
	const PProf *pp;
	struct u64map maps, fns, locs;	/* pprof id -> our id (uint32_t) */
	struct u64map mapi;		/* pprof mapping id -> index + 1 */
	uint32_t *lbuf;
	size_t lcap;
	struct pf_line *lines;	/* one location's line chain */
	size_t linecap;
	struct sf_err *err;	/* filled for -EDOM, -EBADMSG */
	uint32_t no_stack;	/* our id of stackfold's "[no stack]" frame */
};

static const char *str(const PProf *pp, int64_t i)
{
	return i >= 0 && (size_t)i < pp->n_string_table ? pp->string_table[i] : "";
}

static int64_t intern(struct imp *x, int64_t i)
{
	const char *s = str(x->pp, i);
	return *s ? strtab_intern_cstr(&x->r->prof.strs, s) : 0;
}

static int put_id(struct u64map *m, uint64_t key, uint32_t v)
{
	bool found;
	uint32_t *slot = u64map_slot(m, key, &found);
	if (!slot)
		return -ENOMEM;
	*slot = v;
	return 0;
}

static uint32_t get_id(const struct u64map *m, uint64_t key)
{
	const uint32_t *v = key ? u64map_find(m, key) : NULL;
	return v ? *v : 0;
}

static int import_mappings(struct imp *x)
{
	for (size_t i = 0; i < x->pp->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = x->pp->mapping[i];
		const char *file = str(x->pp, m->filename);
		int64_t fn = intern(x, m->filename), bid = intern(x, m->build_id);
		if (fn < 0 || bid < 0)
			return -ENOMEM;
		struct pf_mapping pm = {
			.start = m->memory_start, .limit = m->memory_limit,
			.offset = m->file_offset, .filename = (uint32_t)fn,
			.build_id = (uint32_t)bid,
			.is_kernel = !strncmp(file, "[kernel", 7) ||
				     !strcmp(file, "[vmlinux]"),
			.has_functions = m->has_functions,
			.has_filenames = m->has_filenames,
			.has_line_numbers = m->has_line_numbers,
			.has_inline_frames = m->has_inline_frames,
			.is_main = i == 0,
		};
		int64_t id = profile_mapping(&x->r->prof, &pm);
		if (id < 0 || put_id(&x->maps, m->id, (uint32_t)id))
			return -ENOMEM;
		bool found;
		uint32_t *slot = m->id ? u64map_slot(&x->mapi, m->id, &found) : NULL;
		if (m->id && !slot)
			return -ENOMEM;
		if (slot && !found)
			*slot = (uint32_t)i + 1;
	}
	return 0;
}

static int import_functions(struct imp *x)
{
	for (size_t i = 0; i < x->pp->n_function; i++) {
		const Perftools__Profiles__Function *f = x->pp->function[i];
		int64_t name = intern(x, f->name), sys = intern(x, f->system_name),
			file = intern(x, f->filename);
		if (name < 0 || sys < 0 || file < 0)
			return -ENOMEM;
		struct pf_function pf = {
			.name = (uint32_t)name, .system_name = (uint32_t)sys,
			.filename = (uint32_t)file,
			.start_line = f->start_line > 0 && f->start_line < INT32_MAX ?
				      (uint32_t)f->start_line : 0,
		};
		int64_t id = profile_function(&x->r->prof, &pf);
		if (id < 0 || put_id(&x->fns, f->id, (uint32_t)id))
			return -ENOMEM;
	}
	return 0;
}

/* A synthetic frame stackfold writes without a mapping: "-", "[...]" */
static bool mark_name(const char *s)
{
	size_t n = strlen(s);
	return (n == 1 && s[0] == '-') || (n >= 2 && s[0] == '[' && s[n - 1] == ']');
}

/* The text of a location without lines: file+0xOFF, or [unknown]. */
static int64_t unknown_name(struct imp *x, const Perftools__Profiles__Location *l,
			    const Perftools__Profiles__Mapping *m)
{
	char buf[512];
	if (m && *str(x->pp, m->filename)) {
		const char *f = str(x->pp, m->filename), *b = strrchr(f, '/');
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, b ? b + 1 : f,
			 l->address - m->memory_start + m->file_offset);
	} else {
		snprintf(buf, sizeof(buf), "[unknown]");
	}
	return strtab_intern_cstr(&x->r->prof.strs, buf);
}

/* The mapping pprof id `id` names (the first of that id), through
 * x->mapi: a scan of every mapping for each location was quadratic (40k
 * mappings and 100k locations took 17 CPU-s). */
static const Perftools__Profiles__Mapping *mapping_of(const struct imp *x,
						       uint64_t id)
{
	uint32_t i = get_id(&x->mapi, id);
	return i ? x->pp->mapping[i - 1] : NULL;
}

static int import_location(struct imp *x, const Perftools__Profiles__Location *l)
{
	struct profile *p = &x->r->prof;
	if (l->n_line > UINT32_MAX)
		return -ENOMEM;
	if (l->n_line > x->linecap) {	/* every line kept: none cut */
		struct pf_line *nb = realloc(x->lines, l->n_line * sizeof(*nb));
		if (!nb)
			return -ENOMEM;
		x->lines = nb;
		x->linecap = l->n_line;
	}
	struct pf_line *lines = x->lines;
	uint32_t n = 0;
	for (size_t k = 0; k < l->n_line; k++) {
		uint32_t fid = get_id(&x->fns, l->line[k]->function_id);
		if (!fid)
			continue;
		lines[n++] = (struct pf_line){ fid, l->line[k]->line > 0 &&
			l->line[k]->line < INT32_MAX ? (uint32_t)l->line[k]->line : 0 };
	}
	uint32_t map = get_id(&x->maps, l->mapping_id);
	struct pf_location key = { .mapping = map, .address = l->address };
	if (map && p->mappings[map].is_kernel)
		key.kind = PF_LOC_KERNEL;
	/* without an address a location is its lines (profile.h): its
	 * mapping would make every such location of one mapping one */
	if (!l->address)
		key.mapping = 0;
	else if (!map && n && mark_name(profile_str(p, p->functions[lines[n - 1].function].name)))
		key.kind = PF_LOC_MARK;
	if (!n) {
		int64_t u = unknown_name(x, l, mapping_of(x, l->mapping_id));
		if (u < 0)
			return -ENOMEM;
		key.unknown_name = (uint32_t)u;
	}
	int64_t id = profile_location(p, &key, lines, n);
	if (id < 0 || put_id(&x->locs, l->id, (uint32_t)id))
		return -ENOMEM;
	/* what the writer puts for an empty stack (pprof's readers drop a
	 * sample without locations): read back as the empty stack it was */
	if (!map && n == 1 && !strcmp(profile_str(p, p->functions[lines[0].function].name),
				      "[no stack]"))
		x->no_stack = (uint32_t)id;
	return 0;
}

/* The sample value counted: type "samples" (stackfold's and Go's CPU
 * profiles), else the last (pprof's default). */
static size_t value_index(const PProf *pp)
{
	for (size_t i = 0; i < pp->n_sample_type; i++)
		if (!strcmp(str(pp, pp->sample_type[i]->type), "samples"))
			return i;
	return pp->n_sample_type ? pp->n_sample_type - 1 : 0;
}

/* A sample without the counted value, or with a negative one (what
 * `pprof -diff_base` writes), is refused rather than dropped: a fold has
 * no negative counts, and --diff takes the two profiles themselves.  A
 * value of 0 is 0 samples. */
static int import_sample(struct imp *x, const Perftools__Profiles__Sample *s,
			 size_t i, size_t vi)
{
	struct profile *p = &x->r->prof;
	if (vi >= s->n_value)
		return sf_err_set(x->err, EBADMSG, "sample %zu has %zu values, "
				  "not one per sample type (%zu): malformed pprof",
				  i + 1, s->n_value, x->pp->n_sample_type);
	if (s->value[vi] < 0)
		return sf_err_set(x->err, EDOM, "sample %zu has a negative value "
				  "(%" PRId64 "): a difference of profiles (pprof "
				  "-diff_base) is not read; give both to --diff",
				  i + 1, s->value[vi]);
	if (!s->value[vi])
		return 0;
	if (s->n_location_id > x->lcap) {
		uint32_t *nb = realloc(x->lbuf, s->n_location_id * sizeof(*nb));
		if (!nb)
			return -ENOMEM;
		x->lbuf = nb;
		x->lcap = s->n_location_id;
	}
	uint32_t depth = 0;
	for (size_t k = 0; k < s->n_location_id; k++) {
		uint32_t id = get_id(&x->locs, s->location_id[k]);
		if (id && id != x->no_stack)
			x->lbuf[depth++] = id;
	}
	struct pf_sample key = { 0 };
	for (size_t k = 0; k < s->n_label; k++) {
		const Perftools__Profiles__Label *lb = s->label[k];
		const char *name = str(x->pp, lb->key);
		int64_t v;
		if (!strcmp(name, "pid") && lb->num > 0 && lb->num <= INT32_MAX)
			key.pid = (uint32_t)lb->num;
		else if (!strcmp(name, "tid") && lb->num > 0 && lb->num <= INT32_MAX)
			key.tid = (uint32_t)lb->num;
		else if (!strcmp(name, "comm") || !strcmp(name, "thread_name")) {
			if ((v = intern(x, lb->str)) < 0)
				return -ENOMEM;
			if (name[0] == 'c')
				key.comm = key.process = (uint32_t)v;
			else
				key.thread_name = (uint32_t)v;
		}
	}
	uint64_t c = (uint64_t)s->value[vi];
	if (p->counters.samples > INT64_MAX - c)
		return -EOVERFLOW;
	int64_t r = profile_add_sample_id(p, &key, x->lbuf, depth, c);
	return r < 0 ? (int)r : 0;
}

/* A metadata string of the comments into *field, unless it has one. */
static void import_str(struct profile *p, uint32_t *field,
		       const struct pprof_str *v)
{
	int64_t id = v->s ? strtab_intern(&p->strs, v->s, v->len) : 0;
	if (id > 0 && !*field)
		*field = (uint32_t)id;
}

/* stackfold's comments (pprof_comments.h): the loss counters add to the
 * profile's, but unsymbolized frames, which reading counts again. */
static void import_comments(struct imp *x)
{
	struct profile *p = &x->r->prof;
	struct pprof_comments c;
	pprof_comments_parse(&c, x->pp);
	/* in the comment's order: interning orders the string table */
	import_str(p, &p->meta.bpftrace_version, &c.bpftrace);
	import_str(p, &p->meta.kernel_release, &c.kernel);
	import_str(p, &p->meta.hostname, &c.host);
	import_str(p, &p->meta.cmdline, &c.cmdline);
	for (size_t i = 0; i < LOSS_N; i++) {
		if (i == LOSS_UNSYMBOLIZED_FRAMES)
			continue;
		if (c.unknown[i])
			p->counters.losses_unknown = true;
		sf_sat_addto((uint64_t *)((char *)&p->counters + loss_table[i].off),
			     c.loss[i]);
	}
}

static void import_meta(struct imp *x)
{
	const PProf *pp = x->pp;
	struct report_input_stats *in = &x->r->in;
	if (pp->period_type && pp->period > 0 &&
	    !strcmp(str(pp, pp->period_type->type), "cpu") &&
	    !strcmp(str(pp, pp->period_type->unit), "nanoseconds"))
		in->hz = (uint64_t)llround(1e9 / (double)pp->period);
	if (pp->time_nanos > 0)
		in->start_ns = (uint64_t)pp->time_nanos;
	if (pp->duration_nanos > 0)
		in->duration_ns = (uint64_t)pp->duration_nanos;
	import_comments(x);
}

static int import(struct imp *x)
{
	int ret = import_mappings(x);
	if (!ret)
		ret = import_functions(x);
	for (size_t i = 0; !ret && i < x->pp->n_location; i++)
		ret = import_location(x, x->pp->location[i]);
	size_t vi = value_index(x->pp);
	for (size_t i = 0; !ret && i < x->pp->n_sample; i++)
		ret = import_sample(x, x->pp->sample[i], i, vi);
	if (!ret)
		import_meta(x);
	return ret;
}

int pprof_load(const unsigned char *head, size_t n, int fd, PProf **out,
	       struct sf_err *err)
{
	unsigned char *raw = NULL, *plain = NULL;
	size_t rlen = 0, plen = 0;
	*out = NULL;
	int ret = slurp(head, n, fd, &raw, &rlen);
	bool gz = !ret && rlen >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
	if (gz)
		ret = gunzip(raw, rlen, &plain, &plen);
	if (gz && ret == -EFBIG && gunzip_max() < PPROF_IN_MAX) {
		char s1[32], s2[32];
		ret = sf_err_set(err, ENOMEM, "decompresses past %s, a quarter of "
				 "the %s this reader may hold (STACKFOLD_PPROF_MAX; "
				 "decoding takes several times as much): not read",
				 size_str(s1, gunzip_max()), size_str(s2, pprof_mem_max()));
		goto said;
	}
	if (gz && !ret) {	/* the gzip is not needed while decoding */
		free(raw);
		raw = NULL;
	}
	const unsigned char *b = plain ? plain : raw;
	size_t blen = plain ? plen : rlen;
	if (!ret && (ret = pprof_unpack(b, blen, blen, out, err)) == -ENOMEM)
		goto said;
	if (ret == -EINVAL)
		sf_err_set(err, EINVAL, "not a pprof profile (protobuf decoding failed)");
	else if (ret == -EFBIG)
		sf_err_set(err, EFBIG, "larger than %zu MiB decompressed", (size_t)PPROF_IN_MAX >> 20);
	else if (ret == -EIO)
		sf_err_set(err, EIO, "corrupt or truncated gzip");
	else if (ret)
		sf_err_set(err, -ret, "%s", strerror(-ret));
said:
	free(raw);	/* protobuf-c copied what it keeps */
	free(plain);
	return ret;
}

void pprof_free(PProf *pp)
{
	if (pp)
		perftools__profiles__profile__free_unpacked(pp, NULL);
}

int pprof_read(struct report *r, const unsigned char *head, size_t n, int fd,
	       struct sf_err *err)
{
	PProf *pp;
	int ret = pprof_load(head, n, fd, &pp, err);
	if (ret)
		return ret;
	struct imp x = { .r = r, .pp = pp, .err = err };
	x.maps.valsz = x.fns.valsz = x.locs.valsz = x.mapi.valsz = sizeof(uint32_t);
	ret = import(&x);
	u64map_release(&x.maps);
	u64map_release(&x.mapi);
	u64map_release(&x.fns);
	u64map_release(&x.locs);
	free(x.lbuf);
	free(x.lines);
	if (ret == -EOVERFLOW)
		sf_err_set(err, EOVERFLOW, REPORT_OVERFLOW_MSG);
	else if (ret == -EINVAL)
		sf_err_set(err, EINVAL, "not a pprof profile (protobuf decoding failed)");
	else if (ret && ret != -EDOM && ret != -EBADMSG)	/* set by import */
		sf_err_set(err, -ret, "%s", strerror(-ret));
	pprof_free(pp);
	return ret;
}
