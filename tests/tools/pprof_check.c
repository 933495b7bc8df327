/*
 * pprof_check.c - strict validator for pprof profiles (tests only).
 *
 * usage: pprof_check [--sum] [--no-time] [--raw] [--sizes] [--addresses] FILE
 *
 * Reads FILE (gzipped profile.proto; --raw accepts it uncompressed too),
 * decodes it with protobuf-c and the schema in collapse/model/profile.proto, and
 * checks every rule of failure-cases.md item 27 plus what strict protobuf
 * readers demand:
 *   - the file is gzipped (unless --raw);
 *   - string_table[0] == "", every string is valid UTF-8, and every field
 *     that is a string index is in range (value types, period type,
 *     comments, drop/keep_frames, default_sample_type, doc_url, label
 *     key/str/num_unit, mapping filename/build_id, function names/file);
 *   - mapping, location and function ids are non-zero and unique;
 *   - every location_id, function_id and non-zero mapping_id resolves;
 *   - a location with an address and a mapping that has a range lies in
 *     it: memory_start <= address < memory_limit;
 *   - len(value) == len(sample_type) for every sample, and sample_type is
 *     present when samples exist; value[0] >= 0; in a count-and-time
 *     profile (two sample types, the second in nanoseconds, as ours),
 *     value[1] == value[0] * period (INT64_MAX where that overflows);
 *   - period_type is set; every singular field appears at most once on the
 *     wire; time_nanos is present and non-zero when samples exist (unless
 *     --no-time: input without a capture time, e.g. folded text);
 *   - labels have a key and not both str and num.
 * Prints "ok samples=N total=SUM(value[0])" and exits 0, or prints the first
 * violation and exits 1.  --sum prints only the total.  Exit 2: unreadable.
 * --sizes also prints, per top-level field, "size FIELD n=COUNT raw=BYTES
 * gz=BYTES" (bytes on the wire, tags included, and those bytes gzipped -6
 * on their own: an attribution of the .pb.gz size, for bench/pprof.sh).
 * --addresses also prints "addresses user=N kernel=N zero_on_mapping=N
 * unmapped=N": locations with an address in a mapping below / above
 * 0x800000000000, locations on a mapping with address 0, and locations
 * with an address but no mapping.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "model/profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;

static const char *violation;
static char vbuf[512];

#define FAIL(...)                                                   \
	do {                                                        \
		snprintf(vbuf, sizeof(vbuf), __VA_ARGS__);          \
		violation = vbuf;                                   \
		return false;                                       \
	} while (0)

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0, r;
	uint8_t *b = malloc(cap);

	if (!f || !b) {
		free(b);
		if (f)
			fclose(f);
		return -1;
	}
	while ((r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			uint8_t *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				fclose(f);
				return -1;
			}
			b = nb;
		}
	}
	fclose(f);
	*buf = b;
	*len = n;
	return 0;
}

static int gunzip(const uint8_t *in, size_t inlen, uint8_t **out,
		  size_t *outlen)
{
	z_stream zs;
	size_t cap = inlen * 4 + 1024, n = 0;
	uint8_t *b = malloc(cap);
	int rc = Z_MEM_ERROR;

	memset(&zs, 0, sizeof(zs));
	if (!b || inflateInit2(&zs, 31) != Z_OK) {
		free(b);
		return -1;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)inlen;
	do {
		if (n == cap) {
			uint8_t *nb = realloc(b, cap *= 2);
			if (!nb)
				break;
			b = nb;
		}
		zs.next_out = b + n;
		zs.avail_out = (uInt)(cap - n);
		rc = inflate(&zs, Z_NO_FLUSH);
		n = cap - zs.avail_out;
	} while (rc == Z_OK || (rc == Z_BUF_ERROR && n == cap));
	inflateEnd(&zs);
	if (rc != Z_STREAM_END || zs.avail_in != 0) {
		free(b);
		return -1;
	}
	*out = b;
	*outlen = n;
	return 0;
}

/* ---- wire-level checks (protobuf-c keeps only the last duplicate) ---- */

static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* Count top-level occurrences of each field number (< 64). */
static bool count_fields(const uint8_t *p, size_t len, unsigned cnt[64])
{
	const uint8_t *end = p + len;
	uint64_t tag, v;

	while (p < end) {
		if (!get_varint(&p, end, &tag))
			FAIL("wire: bad tag");
		if ((tag >> 3) < 64)
			cnt[tag >> 3]++;
		switch (tag & 7) {
		case 0:
			if (!get_varint(&p, end, &v))
				FAIL("wire: bad varint");
			break;
		case 1:
			if (end - p < 8)
				FAIL("wire: short fixed64");
			p += 8;
			break;
		case 2:
			if (!get_varint(&p, end, &v) || v > (uint64_t)(end - p))
				FAIL("wire: bad length");
			p += v;
			break;
		case 5:
			if (end - p < 4)
				FAIL("wire: short fixed32");
			p += 4;
			break;
		default:
			FAIL("wire: bad wire type %u", (unsigned)(tag & 7));
		}
	}
	return true;
}

static bool check_wire(const uint8_t *p, size_t len, bool samples, bool need_time)
{
	static const struct {
		unsigned field;
		const char *name;
	} singular[] = {
		{ 7, "drop_frames" },	   { 8, "keep_frames" },
		{ 9, "time_nanos" },	   { 10, "duration_nanos" },
		{ 11, "period_type" },	   { 12, "period" },
		{ 14, "default_sample_type" }, { 15, "doc_url" },
	};
	unsigned cnt[64] = { 0 };

	if (!count_fields(p, len, cnt))
		return false;
	for (size_t i = 0; i < sizeof(singular) / sizeof(singular[0]); i++)
		if (cnt[singular[i].field] > 1)
			FAIL("%s appears %u times", singular[i].name,
			     cnt[singular[i].field]);
	if (samples && need_time && cnt[9] != 1)
		FAIL("time_nanos missing (profile has samples)");
	return true;
}

/* ---- size breakdown (--sizes) ------------------------------------------ */

static size_t gz_size(const uint8_t *p, size_t len)
{
	uLongf cap = compressBound(len) + 32;
	uint8_t *b = malloc(cap);
	z_stream zs;
	size_t n = 0;

	memset(&zs, 0, sizeof(zs));
	if (!b || deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(b);
		return 0;
	}
	zs.next_in = (Bytef *)p;
	zs.avail_in = (uInt)len;
	zs.next_out = b;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) == Z_STREAM_END)
		n = cap - zs.avail_out;
	deflateEnd(&zs);
	free(b);
	return n;
}

/* The wire bytes of each top-level field, concatenated per field. */
static bool print_sizes(const uint8_t *p, size_t len)
{
	static const char *names[16] = {
		[1] = "sample_type", [2] = "sample", [3] = "mapping",
		[4] = "location", [5] = "function", [6] = "string_table",
		[9] = "time_nanos", [10] = "duration_nanos",
		[11] = "period_type", [12] = "period", [13] = "comment",
	};
	uint8_t *part[16] = { 0 };
	size_t plen[16] = { 0 }, cnt[16] = { 0 };
	const uint8_t *end = p + len, *start;
	uint64_t tag, v;
	bool ok = true;

	while (ok && p < end) {
		start = p;
		if (!get_varint(&p, end, &tag)) {
			ok = false;
			break;
		}
		switch (tag & 7) {
		case 0: ok = get_varint(&p, end, &v); break;
		case 1: p += 8; ok = p <= end; break;
		case 2:
			ok = get_varint(&p, end, &v) && v <= (uint64_t)(end - p);
			p += ok ? v : 0;
			break;
		case 5: p += 4; ok = p <= end; break;
		default: ok = false;
		}
		unsigned f = (tag >> 3) < 16 ? (unsigned)(tag >> 3) : 0;
		uint8_t *np = ok ? realloc(part[f], plen[f] + (size_t)(p - start)) : NULL;
		if (!np) {
			ok = false;
			break;
		}
		part[f] = np;
		memcpy(np + plen[f], start, (size_t)(p - start));
		plen[f] += (size_t)(p - start);
		cnt[f]++;
	}
	for (unsigned f = 0; ok && f < 16; f++)
		if (cnt[f])
			printf("size %s n=%zu raw=%zu gz=%zu\n",
			       names[f] ? names[f] : "other", cnt[f], plen[f],
			       gz_size(part[f], plen[f]));
	if (ok)
		printf("size total raw=%zu gz=%zu\n", len,
		       gz_size(end - len, len));
	for (unsigned f = 0; f < 16; f++)
		free(part[f]);
	return ok;
}

/* ---- decoded checks ---------------------------------------------------- */

static bool utf8_ok(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s, lo = 0x80, hi = 0xbf;
		int n;
		if (c < 0x80) {
			s++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 2;
		else if (c >= 0xe0 && c <= 0xef) {
			n = 3;
			lo = c == 0xe0 ? 0xa0 : lo;
			hi = c == 0xed ? 0x9f : hi;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 4;
			lo = c == 0xf0 ? 0x90 : lo;
			hi = c == 0xf4 ? 0x8f : hi;
		} else
			return false;
		if (s[1] < lo || s[1] > hi)
			return false;
		for (int i = 2; i < n; i++)
			if (s[i] < 0x80 || s[i] > 0xbf)
				return false;
		s += n;
	}
	return true;
}

static size_t nstr;

static bool str_ok(int64_t idx, const char *what, size_t which)
{
	if (idx < 0 || (uint64_t)idx >= nstr)
		FAIL("%s [%zu]: string index %lld out of range (table has %zu)",
		     what, which, (long long)idx, nstr);
	return true;
}

static bool check_strings(const Profile *pr)
{
	nstr = pr->n_string_table;
	if (nstr == 0)
		FAIL("string_table is empty");
	if (pr->string_table[0][0] != '\0')
		FAIL("string_table[0] is \"%s\", not \"\"", pr->string_table[0]);
	for (size_t i = 0; i < nstr; i++)
		if (!utf8_ok((const unsigned char *)pr->string_table[i]))
			FAIL("string_table[%zu] is not valid UTF-8", i);
	return true;
}

static bool check_value_type(const Perftools__Profiles__ValueType *vt,
			     const char *what, size_t i)
{
	return str_ok(vt->type, what, i) && str_ok(vt->unit, what, i);
}

static bool check_header(const Profile *pr, bool need_time)
{
	if (pr->n_sample && pr->n_sample_type == 0)
		FAIL("samples present but no sample_type");
	for (size_t i = 0; i < pr->n_sample_type; i++)
		if (!check_value_type(pr->sample_type[i], "sample_type", i))
			return false;
	if (!pr->period_type)
		FAIL("period_type not set");
	if (!check_value_type(pr->period_type, "period_type", 0))
		return false;
	for (size_t i = 0; i < pr->n_comment; i++)
		if (!str_ok(pr->comment[i], "comment", i))
			return false;
	if (!str_ok(pr->drop_frames, "drop_frames", 0) ||
	    !str_ok(pr->keep_frames, "keep_frames", 0) ||
	    !str_ok(pr->default_sample_type, "default_sample_type", 0) ||
	    !str_ok(pr->doc_url, "doc_url", 0))
		return false;
	if (pr->n_sample && need_time && pr->time_nanos <= 0)
		FAIL("time_nanos is %lld (profile has samples)",
		     (long long)pr->time_nanos);
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorted copy of ids; fails on a zero or duplicate id. */
static bool id_set(uint64_t **out, size_t n, const char *what,
		   uint64_t (*get)(const Profile *, size_t), const Profile *pr)
{
	uint64_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	if (!ids)
		FAIL("out of memory");
	for (size_t i = 0; i < n; i++) {
		ids[i] = get(pr, i);
		if (!ids[i]) {
			free(ids);
			FAIL("%s[%zu] has id 0", what, i);
		}
	}
	qsort(ids, n, sizeof(*ids), cmp_u64);
	for (size_t i = 1; i < n; i++)
		if (ids[i] == ids[i - 1]) {
			uint64_t d = ids[i];
			free(ids);
			FAIL("%s id %llu is not unique", what,
			     (unsigned long long)d);
		}
	*out = ids;
	return true;
}

static bool has_id(const uint64_t *ids, size_t n, uint64_t id)
{
	return bsearch(&id, ids, n, sizeof(*ids), cmp_u64) != NULL;
}

static uint64_t map_id(const Profile *pr, size_t i) { return pr->mapping[i]->id; }
static uint64_t loc_id(const Profile *pr, size_t i) { return pr->location[i]->id; }
static uint64_t fn_id(const Profile *pr, size_t i) { return pr->function[i]->id; }

static bool check_mappings(const Profile *pr)
{
	for (size_t i = 0; i < pr->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = pr->mapping[i];
		if (!str_ok(m->filename, "mapping.filename", i) ||
		    !str_ok(m->build_id, "mapping.build_id", i))
			return false;
	}
	return true;
}

static bool check_functions(const Profile *pr)
{
	for (size_t i = 0; i < pr->n_function; i++) {
		const Perftools__Profiles__Function *f = pr->function[i];
		if (!str_ok(f->name, "function.name", i) ||
		    !str_ok(f->system_name, "function.system_name", i) ||
		    !str_ok(f->filename, "function.filename", i))
			return false;
	}
	return true;
}

static struct {
	size_t user, kernel, zero_on_mapping, unmapped;
} addr_stats;

static const Perftools__Profiles__Mapping *find_mapping(const Profile *pr,
							uint64_t id)
{
	for (size_t i = 0; i < pr->n_mapping; i++)
		if (pr->mapping[i]->id == id)
			return pr->mapping[i];
	return NULL;
}

static bool check_address(const Profile *pr,
			  const Perftools__Profiles__Location *l)
{
	const Perftools__Profiles__Mapping *m;

	if (!l->mapping_id) {
		addr_stats.unmapped += l->address != 0;
		return true;
	}
	m = find_mapping(pr, l->mapping_id);
	if (!l->address) {
		addr_stats.zero_on_mapping++;
		return true;
	}
	if (l->address < 0x800000000000ULL)
		addr_stats.user++;
	else
		addr_stats.kernel++;
	if (m->memory_limit &&
	    (l->address < m->memory_start || l->address >= m->memory_limit))
		FAIL("location %llu: address 0x%llx outside its mapping %llu "
		     "[0x%llx, 0x%llx)", (unsigned long long)l->id,
		     (unsigned long long)l->address,
		     (unsigned long long)m->id,
		     (unsigned long long)m->memory_start,
		     (unsigned long long)m->memory_limit);
	return true;
}

static bool check_locations(const Profile *pr, const uint64_t *maps,
			    const uint64_t *fns)
{
	for (size_t i = 0; i < pr->n_location; i++) {
		const Perftools__Profiles__Location *l = pr->location[i];
		if (l->mapping_id && !has_id(maps, pr->n_mapping, l->mapping_id))
			FAIL("location %llu: mapping_id %llu does not exist",
			     (unsigned long long)l->id,
			     (unsigned long long)l->mapping_id);
		if (!check_address(pr, l))
			return false;
		for (size_t k = 0; k < l->n_line; k++) {
			uint64_t f = l->line[k]->function_id;
			if (!f)
				FAIL("location %llu: line %zu has function_id 0",
				     (unsigned long long)l->id, k);
			if (!has_id(fns, pr->n_function, f))
				FAIL("location %llu: function_id %llu does not exist",
				     (unsigned long long)l->id,
				     (unsigned long long)f);
		}
	}
	return true;
}

static bool check_labels(const Perftools__Profiles__Sample *s, size_t si)
{
	for (size_t k = 0; k < s->n_label; k++) {
		const Perftools__Profiles__Label *lb = s->label[k];
		if (!str_ok(lb->key, "label.key", si) ||
		    !str_ok(lb->str, "label.str", si) ||
		    !str_ok(lb->num_unit, "label.num_unit", si))
			return false;
		if (!lb->key)
			FAIL("sample %zu: label %zu has no key", si, k);
		if (lb->str && lb->num)
			FAIL("sample %zu: label %zu has both str and num", si, k);
	}
	return true;
}

static int64_t times_period(int64_t n, int64_t period)
{
	if (n && period > INT64_MAX / n)
		return INT64_MAX;
	return n * period;
}

/* Two sample types, the second a time in nanoseconds, and a period. */
static bool count_and_time(const Profile *pr)
{
	if (pr->n_sample_type != 2 || pr->period <= 0)
		return false;
	int64_t u = pr->sample_type[1]->unit;
	return u > 0 && (size_t)u < pr->n_string_table &&
	       !strcmp(pr->string_table[u], "nanoseconds");
}

static bool check_samples(const Profile *pr, const uint64_t *locs,
			  uint64_t *total)
{
	bool timed = count_and_time(pr);
	*total = 0;
	for (size_t i = 0; i < pr->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pr->sample[i];
		if (s->n_value != pr->n_sample_type)
			FAIL("sample %zu: %zu values for %zu sample types", i,
			     s->n_value, pr->n_sample_type);
		if (s->n_value && s->value[0] < 0)
			FAIL("sample %zu: negative value[0]", i);
		if (timed && s->value[1] != times_period(s->value[0], pr->period))
			FAIL("sample %zu: value[1] %lld is not value[0] %lld "
			     "times the period %lld", i, (long long)s->value[1],
			     (long long)s->value[0], (long long)pr->period);
		for (size_t k = 0; k < s->n_location_id; k++)
			if (!has_id(locs, pr->n_location, s->location_id[k]))
				FAIL("sample %zu: location_id %llu does not exist",
				     i, (unsigned long long)s->location_id[k]);
		if (!check_labels(s, i))
			return false;
		if (s->n_value)	/* saturating: the total is printed */
			*total = *total + (uint64_t)s->value[0] < *total
					 ? UINT64_MAX
					 : *total + (uint64_t)s->value[0];
	}
	return true;
}

static bool check_profile(const Profile *pr, bool need_time, uint64_t *total)
{
	uint64_t *maps = NULL, *locs = NULL, *fns = NULL;
	bool ok = check_strings(pr) && check_header(pr, need_time) &&
		  check_mappings(pr) && check_functions(pr) &&
		  id_set(&maps, pr->n_mapping, "mapping", map_id, pr) &&
		  id_set(&locs, pr->n_location, "location", loc_id, pr) &&
		  id_set(&fns, pr->n_function, "function", fn_id, pr) &&
		  check_locations(pr, maps, fns) &&
		  check_samples(pr, locs, total);
	free(maps);
	free(locs);
	free(fns);
	return ok;
}

static int usage(void)
{
	fprintf(stderr, "usage: pprof_check [--sum] [--no-time] [--raw] [--sizes] [--addresses] FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	bool sum = false, need_time = true, raw_ok = false, sizes = false;
	bool addrs = false;
	const char *path = NULL;
	uint8_t *file, *pb;
	size_t flen, pblen;
	uint64_t total = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sum"))
			sum = true;
		else if (!strcmp(argv[i], "--no-time"))
			need_time = false;
		else if (!strcmp(argv[i], "--raw"))
			raw_ok = true;
		else if (!strcmp(argv[i], "--sizes"))
			sizes = true;
		else if (!strcmp(argv[i], "--addresses"))
			addrs = true;
		else if (argv[i][0] == '-' || path)
			return usage();
		else
			path = argv[i];
	}
	if (!path)
		return usage();
	if (read_file(path, &file, &flen)) {
		fprintf(stderr, "pprof_check: cannot read '%s': %s\n", path,
			strerror(errno));
		return 2;
	}
	if (flen >= 2 && file[0] == 0x1f && file[1] == 0x8b) {
		int zrc = gunzip(file, flen, &pb, &pblen);
		free(file);
		if (zrc) {
			printf("violation: corrupt gzip stream\n");
			return 1;
		}
	} else if (raw_ok) {
		pb = file;
		pblen = flen;
	} else {
		free(file);
		printf("violation: not gzipped (no 1f 8b magic)\n");
		return 1;
	}
	Profile *pr = perftools__profiles__profile__unpack(NULL, pblen, pb);
	if (!pr) {
		free(pb);
		printf("violation: protobuf decode failed\n");
		return 1;
	}
	bool ok = check_wire(pb, pblen, pr->n_sample > 0, need_time) &&
		  check_profile(pr, need_time, &total);
	if (!ok)
		printf("violation: %s\n", violation);
	else if (sum)
		printf("%llu\n", (unsigned long long)total);
	else
		printf("ok samples=%zu total=%llu\n", pr->n_sample,
		       (unsigned long long)total);
	if (ok && sizes)
		print_sizes(pb, pblen);
	if (ok && addrs)
		printf("addresses user=%zu kernel=%zu zero_on_mapping=%zu "
		       "unmapped=%zu\n", addr_stats.user, addr_stats.kernel,
		       addr_stats.zero_on_mapping, addr_stats.unmapped);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(pb);
	return ok ? 0 : 1;
}
