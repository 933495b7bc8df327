/* kallsyms.c - /proc/kallsyms reader, see kallsyms.h. */
#include "proc/kallsyms.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/procfs.h"

void kallsyms_default_paths(const char **kallsyms, const char **modules)
{
	const char *k = getenv("STACKFOLD_KALLSYMS");
	const char *m = getenv("STACKFOLD_MODULES");
	*kallsyms = k && *k ? k : "/proc/kallsyms";
	*modules = m && *m ? m : "/proc/modules";
}

void kallsyms_release(struct kallsyms *k)
{
	free(k->v);
	free(k->mods);
	strtab_release(&k->names);
	memset(k, 0, sizeof(*k));
}

struct ks_build {
	struct kallsyms *k;
	struct strtab modnames;	/* id 0 "" is the core kernel */
	uint8_t *rank;		/* per symbol: alias preference */
	size_t rank_cap;
	uint64_t stext, etext;
};

static const char *next_field(const char *p, const char *lim)
{
	while (p < lim && *p != ' ' && *p != '\t')
		p++;
	while (p < lim && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Note the core kernel's text bounds as they go by. */
static void note_bounds(struct ks_build *b, const char *name, size_t len,
			uint64_t addr)
{
	if (len == 5 && !memcmp(name, "_text", 5))
		b->stext = addr;
	else if (len == 6 && !memcmp(name, "_stext", 6) && !b->stext)
		b->stext = addr;
	else if (len == 6 && !memcmp(name, "_etext", 6))
		b->etext = addr;
}

/* Section markers share an address with a real function: name that. */
static bool is_marker(const char *name, size_t len)
{
	static const char *const markers[] = { "_text", "_stext",
					       "_sinittext", "_einittext" };
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++)
		if (strlen(markers[i]) == len && !memcmp(name, markers[i], len))
			return true;
	return false;
}

/* "ADDR TYPE NAME[\t[MOD]]" */
static int parse_line(struct ks_build *b, const char *p, const char *lim)
{
	struct kallsyms *k = b->k;
	uint64_t addr;
	const char *t = next_field(p, lim);
	size_t alen = (size_t)(t - p);
	while (alen && (p[alen - 1] == ' ' || p[alen - 1] == '\t'))
		alen--;
	if (!sf_parse_hex(p, alen, &addr) || t + 2 > lim)
		return 0;
	char type = *t;
	const char *name = next_field(t, lim), *ne = name;
	while (ne < lim && *ne != '\t' && *ne != ' ')
		ne++;
	if (ne == name)
		return 0;
	size_t nlen = (size_t)(ne - name);
	note_bounds(b, name, nlen, addr);
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 1;
	/* _etext marks the end of text, it names nothing; __pfx_F is the
	 * padding before F (CONFIG_FUNCTION_PADDING), part of the function
	 * before it for our purpose: no call returns into it */
	if ((nlen == 6 && !memcmp(name, "_etext", 6)) ||
	    (nlen > 6 && !memcmp(name, "__pfx_", 6)))
		return 1;
	int64_t mod = 0;
	const char *m = next_field(ne, lim);
	if (m + 2 < lim && *m == '[' && lim[-1] == ']')
		mod = strtab_intern(&b->modnames, m + 1, (size_t)(lim - m - 2));
	int64_t id = strtab_intern(&k->names, name, (size_t)(ne - name));
	if (mod < 0 || id < 0 ||
	    sf_grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v)) ||
	    sf_grow((void **)&b->rank, &b->rank_cap, k->n + 1, 1))
		return -ENOMEM;
	k->v[k->n] = (struct ksym){ addr, 0, (uint32_t)id, (uint32_t)mod };
	b->rank[k->n] = is_marker(name, nlen) ? 2 :
			(type == 'T' || type == 't') ? 0 : 1;
	k->n++;
	return 1;
}

static int parse_text(struct ks_build *b, const char *text, size_t len)
{
	const char *p = text, *lim = text + len;
	while (p < lim) {
		const char *nl = memchr(p, '\n', (size_t)(lim - p));
		const char *e = nl ? nl : lim;
		int rc = parse_line(b, p, e);
		if (rc < 0)
			return rc;
		if (rc == 0 && e > p)
			b->k->bad_lines++;
		p = e + 1;
	}
	return 0;
}

/* Sort key packed so qsort needs no context: rank then file order. */
struct ks_sortent {
	uint64_t addr;
	uint64_t order;	/* rank << 32 | index */
};

static int sortent_cmp(const void *a, const void *b)
{
	const struct ks_sortent *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Sort by address and keep one symbol per address (T/t before w/W, then
 * file order). */
static int sort_dedupe(struct ks_build *b)
{
	struct kallsyms *k = b->k;
	struct ks_sortent *se = malloc((k->n ? k->n : 1) * sizeof(*se));
	struct ksym *nv = malloc((k->n ? k->n : 1) * sizeof(*nv));
	if (!se || !nv) {
		free(se);
		free(nv);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k->n; i++)
		se[i] = (struct ks_sortent){ k->v[i].addr,
					     (uint64_t)b->rank[i] << 32 | i };
	qsort(se, k->n, sizeof(*se), sortent_cmp);
	size_t m = 0;
	for (size_t i = 0; i < k->n; i++) {
		if (m && nv[m - 1].addr == se[i].addr)
			continue;
		nv[m++] = k->v[(uint32_t)se[i].order];
	}
	free(se);
	free(k->v);
	k->v = nv;
	k->n = m;
	k->cap = m;
	return 0;
}

static int make_modules(struct ks_build *b)
{
	struct kallsyms *k = b->k;
	k->nmods = b->modnames.n;
	k->mods = calloc(k->nmods, sizeof(*k->mods));
	if (!k->mods)
		return -ENOMEM;
	for (size_t i = 0; i < k->nmods; i++) {
		const char *nm = i ? strtab_get(&b->modnames, (uint32_t)i) :
				     "kernel";
		size_t len = strlen(nm);
		char tmp[256];
		if (len > sizeof(tmp) - 3)
			len = sizeof(tmp) - 3;
		tmp[0] = '[';
		memcpy(tmp + 1, nm, len);
		tmp[len + 1] = ']';
		int64_t id = strtab_intern(&k->names, tmp, len + 2);
		if (id < 0)
			return -ENOMEM;
		k->mods[i].path = strtab_get(&k->names, (uint32_t)id);
		k->mods[i].build_id = "";
		k->mods[i].is_kernel = true;
		k->mods[i].has_functions = true;
	}
	k->mods[0].start = b->stext;
	k->mods[0].limit = b->etext;
	return 0;
}

/* /proc/modules: "NAME SIZE REFS DEPS STATE ADDR ..." */
static void apply_modules(struct ks_build *b, char *text)
{
	struct kallsyms *k = b->k;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char name[256], state[32];
		unsigned long long size, addr;
		if (sscanf(line, "%255s %llu %*s %*s %31s %llx", name, &size,
			   state, &addr) != 4)
			continue;
		for (size_t i = 1; i < k->nmods; i++) {
			if (strcmp(strtab_get(&b->modnames, (uint32_t)i), name))
				continue;
			if (addr && addr + size > addr) {
				k->mods[i].start = addr;
				k->mods[i].limit = addr + size;
			}
			break;
		}
	}
}

/* Upper bound of symbol i: next symbol, text end or module end. */
static void set_ends(struct kallsyms *k)
{
	for (size_t i = 0; i < k->n; i++) {
		struct ksym *s = &k->v[i];
		const struct sym_module *m = &k->mods[s->mod];
		uint64_t bound = 0;
		if (m->limit > m->start && s->addr >= m->start &&
		    s->addr < m->limit)
			bound = m->limit;
		uint64_t next = 0;
		if (i + 1 < k->n && (k->v[i + 1].mod == s->mod || bound))
			next = k->v[i + 1].addr;
		if (next && bound)
			s->end = next < bound ? next : bound;
		else if (next || bound)
			s->end = next ? next : bound;
		else
			s->end = s->addr + 1;
	}
}

static bool all_zero(const struct kallsyms *k)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].addr)
			return false;
	return k->n > 0;
}

static int build(struct ks_build *b, const char *text, size_t len,
		 const char *modules_path)
{
	int rc = parse_text(b, text, len);
	if (!rc)
		rc = make_modules(b);
	if (rc)
		return rc;
	b->k->restricted = all_zero(b->k);
	if (b->k->restricted)
		return 0;
	char *mt;
	size_t mlen;
	if (modules_path && !procfs_read_file(modules_path, &mt, &mlen)) {
		apply_modules(b, mt);
		free(mt);
	}
	rc = sort_dedupe(b);
	if (!rc)
		set_ends(b->k);
	return rc;
}

int kallsyms_load(struct kallsyms *k, const char *kallsyms_path,
		  const char *modules_path)
{
	memset(k, 0, sizeof(*k));
	struct ks_build b = { .k = k };
	char *text;
	size_t len;
	int rc = strtab_init(&k->names);
	if (!rc)
		rc = strtab_init(&b.modnames);
	if (!rc)
		rc = procfs_read_file(kallsyms_path, &text, &len);
	if (!rc) {
		rc = build(&b, text, len, modules_path);
		free(text);
	}
	strtab_release(&b.modnames);
	free(b.rank);
	if (rc) {
		kallsyms_release(k);
		strtab_init(&k->names);
	}
	return rc;
}

const struct ksym *kallsyms_find(const struct kallsyms *k, uint64_t addr)
{
	if (k->restricted)
		return NULL;
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= k->v[lo - 1].end)
		return NULL;
	return &k->v[lo - 1];
}

const struct sym_module *kallsyms_module_of(const struct kallsyms *k,
					    uint64_t addr)
{
	for (size_t i = 1; i < k->nmods; i++)
		if (addr >= k->mods[i].start && addr < k->mods[i].limit)
			return &k->mods[i];
	return k->nmods ? &k->mods[0] : NULL;
}
