/*
 * cmd_symbolize.c - `stackfold symbolize`: read `MODULE ADDRESS` lines on
 * stdin and print, for each, what `addr2line -f -i -C -e MODULE ADDRESS`
 * prints: for every frame, innermost first, the function name and then
 * `file:line` (`??` / `??:0` when unknown), so the two can be diffed.
 *
 * It names each module's addresses through the symbolizer's one-file
 * interface (symelf.h): the addresses are already in the module's ELF
 * address space, so there is no process to map, and the file's index gives
 * the line-table discriminator that addr2line prints.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/untrusted.h"
#include "cmd/cli.h"
#include "cmds.h"
#include "symelf.h"

static const char usage[] =
	"usage: stackfold symbolize [-a] [--no-demangle] [--no-dwarf] [--no-cache]\n"
	"                           [--cache-dir DIR] < MODULE-ADDRESS-LINES\n"
	"\n"
	"Reads `MODULE ADDRESS` lines (ADDRESS in hex, optional 0x, in the\n"
	"module's ELF address space, as `addr2line -e MODULE` takes it) and\n"
	"prints what `addr2line -f -i -C` prints for each, but that a C\n"
	"function is named by its exported symbol (write, not DWARF's\n"
	"__GI___libc_write), with or without its debug file.\n"
	"\n"
	"  -a, --addresses   print each address (0x%016x; 0x%08x for a 32-bit\n"
	"                    file) before its frames\n"
	"  --no-demangle     print symbol names as in the symbol table\n"
	"  --no-dwarf        symbol tables only: no inline frames, no lines\n"
	"  --no-cache        neither read nor write the on-disk index cache\n"
	"  --cache-dir DIR   index cache directory (default:\n"
	"                    $STACKFOLD_CACHE_DIR, $XDG_CACHE_HOME/stackfold,\n"
	"                    ~/.cache/stackfold)\n"
	"\n"
	"Exit status: 0 ok; 1 usage; 2 malformed lines or unreadable modules\n"
	"(each reported on stderr with its line number, the rest is still\n"
	"printed); 4 stdout could not be written.\n"
	"\n"
	"EXAMPLES:\n"
	"  echo '/lib/x86_64-linux-gnu/libc.so.6 0x29d90' | stackfold symbolize\n"
	"  stackfold symbolize --no-cache < addrs.txt | diff - expected.txt\n";

struct symbolize_env {
	bool no_demangle, no_dwarf, no_cache, addresses;
	const char *cache_dir;
	char *cache_own;	/* sym_default_cache_dir()'s, freed at the end */
	struct sf_limits limits;	/* every module's bounds */
};

struct module {
	char *path;
	struct sym_elf *elf;	/* NULL: could not be opened (reported) */
	bool elf32;		/* -a prints 8 hex digits, as addr2line does */
};

struct modules {
	struct module *v;
	size_t n, cap;
};

/* Each warning once (a cache dir that cannot be written is said for every
 * module), as bin/stackfold's session says it once.  The first 256 kinds
 * are remembered; past that, repeats show. */
static void warn_stderr(void *ctx, const char *msg)
{
	static uint64_t seen[256];
	static size_t nseen;
	uint64_t h = sf_hash_bytes(msg, strlen(msg), 0x77);
	(void)ctx;
	for (size_t i = 0; i < nseen; i++)
		if (seen[i] == h)
			return;
	if (nseen < sizeof(seen) / sizeof(seen[0]))
		seen[nseen++] = h;
	fprintf(stderr, "stackfold symbolize: warning: %s\n", msg);
}

static int parse_args(int argc, char **argv, struct symbolize_env *env)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--no-demangle"))
			env->no_demangle = true;
		else if (!strcmp(a, "--no-dwarf"))
			env->no_dwarf = true;
		else if (!strcmp(a, "-a") || !strcmp(a, "--addresses"))
			env->addresses = true;
		else if (!strcmp(a, "--no-cache"))
			env->no_cache = true;
		else if (!strcmp(a, "--cache-dir") && i + 1 < argc)
			env->cache_dir = argv[++i];
		else if (!strncmp(a, "--cache-dir=", 12))
			env->cache_dir = a + 12;
		else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			cli_version(stdout);
			return 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 1;
		} else {
			fprintf(stderr, "stackfold symbolize: unknown option '%s'\n%s",
				a, usage);
			return -1;
		}
	}
	if (!env->cache_dir && !env->no_cache)
		env->cache_dir = env->cache_own = sym_default_cache_dir();
	struct sf_err e = { "" };
	if (env->cache_dir && !env->no_cache &&
	    !sym_cache_dir_usable(env->cache_dir, &e)) {
		char msg[SF_ERRLEN + 32];
		snprintf(msg, sizeof(msg), "index cache not used: %s", e.msg);
		warn_stderr(NULL, msg);
		env->no_cache = true;
	}
	sf_limits_init(&env->limits);
	return 0;
}

static struct module *module_get(struct modules *ms, const char *path,
				 struct symbolize_env *env)
{
	for (size_t i = 0; i < ms->n; i++)
		if (!strcmp(ms->v[i].path, path))
			return &ms->v[i];
	if (ms->n == ms->cap) {
		size_t nc = ms->cap ? ms->cap * 2 : 8;
		struct module *nv = realloc(ms->v, nc * sizeof(*nv));
		if (!nv)
			return NULL;
		ms->v = nv;
		ms->cap = nc;
	}
	struct module *m = &ms->v[ms->n];
	m->path = strdup(path);
	m->elf = NULL;
	m->elf32 = false;
	if (!m->path)
		return NULL;
	ms->n++;

	struct sym_elf_opts o = {
		.cache_dir = env->no_cache ? NULL : env->cache_dir,
		.no_demangle = env->no_demangle,
		.no_dwarf = env->no_dwarf,
		.warn = warn_stderr,
		.limits = &env->limits,
	};
	struct sf_err err = { "" };
	struct stat st;
	int fd = sf_open_untrusted(path, &st);
	if (fd == -SF_ENOTREG) {
		fprintf(stderr, "stackfold symbolize: '%s' is %s, not a regular "
			"file: not read\n", path, sf_file_kind(st.st_mode));
		return m;
	}
	if (fd < 0) {
		fprintf(stderr, "stackfold symbolize: cannot open '%s': %s\n",
			path, strerror(-fd));
		return m;
	}
	unsigned char ident[EI_NIDENT];
	m->elf32 = pread(fd, ident, sizeof(ident), 0) == (ssize_t)sizeof(ident) &&
		   ident[EI_CLASS] == ELFCLASS32;
	m->elf = sym_elf_open(fd, path, &o, &err);
	close(fd);
	if (!m->elf)
		fprintf(stderr, "stackfold symbolize: %s\n", err.msg);
	return m;
}

static void modules_free(struct modules *ms)
{
	for (size_t i = 0; i < ms->n; i++) {
		sym_elf_free(ms->v[i].elf);
		free(ms->v[i].path);
	}
	free(ms->v);
}

static void print_frame(FILE *out, const struct sym_frame *f, uint32_t disc)
{
	fprintf(out, "%s\n%s:", f->name && *f->name ? f->name : "??",
		f->file ? f->file : "??");
	if (!f->line)
		fputs("?\n", out);
	else if (disc)
		fprintf(out, "%u (discriminator %u)\n", f->line, disc);
	else
		fprintf(out, "%u\n", f->line);
}

static void print_result(FILE *out, const struct sym_elf *elf,
			 uint64_t addr)
{
	struct sym_result res;

	sym_elf_lookup(elf, addr, &res);
	if (res.reason != SYM_OK || !res.nframes) {
		fputs("??\n??:0\n", out);
		return;
	}
	/* addr2line prints the innermost row's discriminator after every
	 * frame's line; so do we, to stay diffable. */
	uint32_t disc = sym_elf_discriminator(elf, addr);
	for (unsigned i = 0; i < res.nframes; i++)
		print_frame(out, &res.frames[i], disc);
}

/* Split "MODULE ADDRESS" at the last blank; false when malformed. */
static bool parse_line(char *line, char **path, uint64_t *addr)
{
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' ||
		     line[n - 1] == ' ' || line[n - 1] == '\t'))
		line[--n] = '\0';
	char *sp = strrchr(line, ' ');
	char *tab = strrchr(line, '\t');
	if (!sp || (tab && tab > sp))
		sp = tab;
	if (!sp)
		return false;
	const char *a = sp + 1;
	char *e = sp;
	while (e > line && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*e = '\0';
	*path = line;
	while (**path == ' ' || **path == '\t')
		(*path)++;
	return **path && sf_parse_hex(a, strlen(a), addr);
}

static bool is_blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

int cmd_symbolize(int argc, char **argv)
{
	struct symbolize_env env = { 0 };
	struct modules ms = { 0 };
	char *line = NULL;
	size_t cap = 0, lineno = 0, bad = 0;
	int out_err = 0;	/* errno of the write that failed */
	int rc = parse_args(argc, argv, &env);

	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_USAGE;
	/* stdout failing (a full disk, /dev/full) ends the reading */
	while (getline(&line, &cap, stdin) >= 0) {
		char *path;
		uint64_t addr;
		lineno++;
		if (is_blank(line))
			continue;
		if (!parse_line(line, &path, &addr)) {
			fprintf(stderr, "stackfold symbolize: line %zu: expected 'MODULE ADDRESS'\n",
				lineno);
			bad++;
			continue;
		}
		struct module *m = module_get(&ms, path, &env);
		if (!m) {
			fprintf(stderr, "stackfold symbolize: out of memory\n");
			rc = EXIT_IO;
			break;
		}
		if (!m->elf) {
			fprintf(stderr, "stackfold symbolize: line %zu: module '%s' unusable\n",
				lineno, path);
			bad++;
		}
		if (env.addresses)
			printf("0x%0*llx\n", m->elf32 ? 8 : 16,
			       (unsigned long long)addr);
		print_result(stdout, m->elf, addr);
		if (ferror(stdout)) {
			out_err = errno ? errno : EIO;
			break;
		}
	}
	int in_err = ferror(stdin) ? errno : 0;
	free(line);
	modules_free(&ms);
	free(env.cache_own);
	if (in_err && !rc) {
		fprintf(stderr, "stackfold symbolize: read '<stdin>': %s\n",
			strerror(in_err));
		rc = EXIT_BADINPUT;
	}
	if (bad)
		fprintf(stderr, "stackfold symbolize: %zu bad line%s\n", bad,
			bad == 1 ? "" : "s");
	if (!out_err && fflush(stdout))
		out_err = errno ? errno : EIO;
	if (out_err || ferror(stdout)) {
		fprintf(stderr, "stackfold symbolize: write '<stdout>': %s\n",
			strerror(out_err ? out_err : EIO));
		return EXIT_IO;
	}
	return rc ? rc : bad ? EXIT_BADINPUT : EXIT_OK;
}
