/*
 * elfindex_test.c - exposes symbolizer/elf/elfindex.h to the shell tests
 * (tests/t50-symbolize*.sh), like git's t/helper/test-tool.
 *
 *   elfindex_test open FILE [CACHEDIR [MAXBYTES]]
 *       open the index; print "cache=hit|miss", the build-id, the caps
 *       and every warning ("warning: ...").  Exit 0, or 2 when it fails.
 *   elfindex_test open-names FILE [CACHEDIR [MAXBYTES]]
 *       the same without line tables (elfidx_opts.no_lines)
 *   elfindex_test buildid FILE      elf_read_build_id(); exit 0/1/2
 *   elfindex_test off2vaddr FILE OFF   file offset -> ELF vaddr (hex)
 *   elfindex_test lookup FILE ADDR  reason, nframes and frames
 *   elfindex_test demangle NAME     demangle_name(), or "(raw)"
 *   elfindex_test arenas FILE       open the index with no cache and print
 *       "arenas_added=N": the malloc arenas glibc made meanwhile (a
 *       thread's first malloc makes one, a fresh 64 MiB heap)
 *   elfindex_test arenas-control    the same around a thread that mallocs
 *       (shows the count sees a thread's arena: expect 1)
 */
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elfidx_priv.h"
#include "elf/elfindex.h"

static void print_warning(void *ctx, const char *msg)
{
	(void)ctx;
	printf("warning: %s\n", msg);
}

static bool no_lines;

static struct elf_index *open_idx(const char *path, const char *dir,
				  uint64_t max)
{
	struct elfidx_opts o = { .cache_dir = dir, .cache_max_bytes = max,
				 .no_lines = no_lines, .warn = print_warning };
	struct sf_err err = { "" };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		return NULL;
	}
	struct elf_index *idx = elfidx_open(fd, path, &o, &err);
	close(fd);
	if (!idx)
		printf("error: %s\n", err.msg);
	return idx;
}

static int cmd_open(int argc, char **argv)
{
	struct elfidx_caps c;
	struct elf_index *idx = open_idx(argv[2], argc > 3 ? argv[3] : NULL,
					 argc > 4 ? strtoull(argv[4], NULL, 0) : 0);
	if (!idx)
		return 2;
	elfidx_caps(idx, &c);
	printf("cache=%s\nbuild_id=%s\ncaps=%d%d%d%d\n",
	       elfidx_from_cache(idx) ? "hit" : "miss", elfidx_build_id(idx),
	       c.has_symbols, c.has_filenames, c.has_line_numbers,
	       c.has_inline_frames);
	elfidx_free(idx);
	return 0;
}

/* The arenas of glibc's malloc: malloc_info() prints one <heap nr=...>
 * element per arena. */
static int count_arenas(void)
{
	char *buf = NULL, *p;
	size_t len = 0;
	int n = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -1;
	malloc_info(0, f);
	fclose(f);
	for (p = buf; p && (p = strstr(p, "<heap nr=")); p++)
		n++;
	free(buf);
	return n;
}

static int cmd_arenas(char **argv)
{
	int before = count_arenas();
	struct elf_index *idx = open_idx(argv[2], NULL, 0);
	if (!idx)
		return 2;
	printf("arenas_added=%d\n", count_arenas() - before);
	elfidx_free(idx);
	return 0;
}

static void *thread_malloc(void *arg)
{
	static void *volatile keep;	/* or the compiler drops the pair */
	(void)arg;
	keep = malloc(64);
	free(keep);
	return NULL;
}

static int cmd_arenas_control(void)
{
	pthread_t t;
	int before = count_arenas();
	if (pthread_create(&t, NULL, thread_malloc, NULL))
		return 2;
	pthread_join(t, NULL);
	printf("arenas_added=%d\n", count_arenas() - before);
	return 0;
}

static int cmd_buildid(char **argv)
{
	char hex[48];
	int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 2;
	int rc = elf_read_build_id(fd, hex, sizeof(hex));
	close(fd);
	printf("%d %s\n", rc, hex);
	return rc ? 1 : 0;
}

static int cmd_off2vaddr(char **argv)
{
	uint64_t v;
	struct elf_index *idx = open_idx(argv[2], NULL, 0);
	if (!idx)
		return 2;
	bool ok = elfidx_file_offset_to_vaddr(idx, strtoull(argv[3], NULL, 0),
					      &v);
	elfidx_free(idx);
	if (!ok) {
		printf("none\n");
		return 1;
	}
	printf("0x%" PRIx64 "\n", v);
	return 0;
}

static int cmd_lookup(char **argv)
{
	struct sym_result r;
	struct elf_index *idx = open_idx(argv[2], NULL, 0);
	if (!idx)
		return 2;
	elfidx_lookup(idx, strtoull(argv[3], NULL, 16), &r);
	printf("reason=%d nframes=%u\n", r.reason, r.nframes);
	for (unsigned i = 0; i < r.nframes; i++)
		printf("%s|%s|%s:%u\n", r.frames[i].name,
		       r.frames[i].system_name,
		       r.frames[i].file ? r.frames[i].file : "??",
		       r.frames[i].line);
	elfidx_free(idx);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "demangle")) {
		char *d = demangle_name(argv[2]);
		printf("%s\n", d ? d : "(raw)");
		free(d);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "open"))
		return cmd_open(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "open-names")) {
		no_lines = true;
		return cmd_open(argc, argv);
	}
	if (argc == 3 && !strcmp(argv[1], "arenas"))
		return cmd_arenas(argv);
	if (argc == 2 && !strcmp(argv[1], "arenas-control"))
		return cmd_arenas_control();
	if (argc == 3 && !strcmp(argv[1], "buildid"))
		return cmd_buildid(argv);
	if (argc == 4 && !strcmp(argv[1], "off2vaddr"))
		return cmd_off2vaddr(argv);
	if (argc == 4 && !strcmp(argv[1], "lookup"))
		return cmd_lookup(argv);
	fprintf(stderr, "usage: elfindex_test open|buildid|off2vaddr|lookup ...\n");
	return 64;
}
