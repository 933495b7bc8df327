/* svg_palmap.c - see svg_palmap.h. */
#include "output/svg_palmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"

static int put(struct svg_palmap *m, const char *name, size_t len,
	       struct svg_rgb c)
{
	int64_t id = strtab_intern(&m->names, name, len);
	if (id < 0)
		return -ENOMEM;
	if ((size_t)id >= m->cap &&
	    sf_grow((void **)&m->rgb, &m->cap, (size_t)id + 1, sizeof(*m->rgb)))
		return -ENOMEM;
	m->rgb[id] = c;
	return 0;
}

int svg_palmap_load(struct svg_palmap *m, const char *path, struct sf_err *err)
{
	memset(m, 0, sizeof(*m));
	if (strtab_init(&m->names))
		return -ENOMEM;
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 :
		       sf_err_set(err, errno, "--cp: cannot read '%s': %s", path,
				  strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = 0;
	while (!ret && (n = getline(&line, &cap, f)) > 0) {
		unsigned r, g, b;
		char *arrow = strstr(line, "->rgb(");
		if (arrow && sscanf(arrow, "->rgb(%u,%u,%u)", &r, &g, &b) == 3 &&
		    r < 256 && g < 256 && b < 256)
			ret = put(m, line, (size_t)(arrow - line),
				  (struct svg_rgb){ (uint8_t)r, (uint8_t)g, (uint8_t)b });
	}
	free(line);
	fclose(f);
	return ret;
}

struct svg_rgb svg_palmap_color(struct svg_palmap *m, const char *name,
				size_t len, struct svg_rgb c)
{
	size_t had = m->names.n;
	int64_t id = strtab_intern(&m->names, name, len);
	if (id < 0)
		return c;
	if (m->names.n == had && (size_t)id < m->cap)
		return m->rgb[id];
	if (!put(m, name, len, c))
		m->changed = true;
	return c;
}

static const struct strtab *cmp_names;

static int by_name(const void *a, const void *b)
{
	return strcmp(strtab_get(cmp_names, *(const uint32_t *)a),
		      strtab_get(cmp_names, *(const uint32_t *)b));
}

int svg_palmap_save(struct svg_palmap *m, const char *path, struct sf_err *err)
{
	if (!m->changed)
		return 0;
	uint32_t *ids = malloc(m->names.n * sizeof(*ids));
	if (!ids)
		return sf_err_set(err, ENOMEM, "out of memory");
	size_t k = 0;
	for (size_t i = 1; i < m->names.n; i++)
		ids[k++] = (uint32_t)i;
	cmp_names = &m->names;
	qsort(ids, k, sizeof(*ids), by_name);
	struct atomic_file af;
	int ret = atomic_open(&af, path, err);
	if (!ret) {
		for (size_t i = 0; i < k; i++) {
			struct svg_rgb c = m->rgb[ids[i]];
			fprintf(af.fp, "%s->rgb(%u,%u,%u)\n",
				strtab_get(&m->names, ids[i]), c.r, c.g, c.b);
		}
		ret = atomic_commit(&af, err);
	}
	free(ids);
	return ret;
}

void svg_palmap_release(struct svg_palmap *m)
{
	strtab_release(&m->names);
	free(m->rgb);
	memset(m, 0, sizeof(*m));
}
