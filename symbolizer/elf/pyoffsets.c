/*
 * pyoffsets.c - CPython 3.11's symbol addresses and member offsets, from
 * the interpreter's .dynsym and its debug file's DWARF (pyoffsets.h).
 * The types are looked up by name among the units' top-level entries,
 * each the first complete definition found (a struct, or a typedef of
 * one), so no offset is written in the code for any version.
 */
#include "pyoffsets.h"
#include "elf/elfidx_priv.h"
#include "elf/debuglink.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const names[PY_OFF_COUNT] = {
	"runtime", "tstate_current", "cframe", "current_frame", "f_code",
	"previous", "prev_instr", "is_entry", "code_type", "unicode_type",
	"co_qualname", "co_filename", "co_firstlineno", "co_linetable",
	"co_code_adaptive", "ascii_size", "ascii_length", "ascii_state",
	"bytes_sval", "var_size", "thread_id", "co_name", "ascii_hash",
};

const char *py_off_name(enum py_off k)
{
	return (unsigned)k < PY_OFF_COUNT ? names[k] : "?";
}

/* --- .dynsym --------------------------------------------------------- */

enum { SYM_RUNTIME, SYM_CODE_TYPE, SYM_UNICODE_TYPE, SYM_VERSION, SYM_COUNT };
static const char *const sym_names[SYM_COUNT] = {
	"_PyRuntime", "PyCode_Type", "PyUnicode_Type",
	"Py_Version",	/* PY_VERSION_HEX, exported from 3.11 on: not required */
};

/* The three symbols' values from .dynsym; false when _PyRuntime is not
 * there (not a CPython binary). */
static bool dynsyms(Elf *e, uint64_t val[SYM_COUNT])
{
	Elf_Scn *scn = NULL;
	memset(val, 0, SYM_COUNT * sizeof(val[0]));
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = d ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			const char *nm;
			if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
			    !(nm = elf_strptr(e, sh.sh_link, s.st_name)))
				continue;
			for (int k = 0; k < SYM_COUNT; k++)
				if (strcmp(nm, sym_names[k]) == 0)
					val[k] = s.st_value;
		}
	}
	return val[SYM_RUNTIME] && val[SYM_CODE_TYPE] && val[SYM_UNICODE_TYPE];
}

/* The 8 bytes at link-time address addr of e's file (Py_Version's value,
 * in .rodata): 0 when no section holds them. */
static uint64_t read_u64_at(Elf *e, uint64_t addr)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    addr < sh.sh_addr || addr + 8 > sh.sh_addr + sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		uint64_t v = 0;
		if (d && d->d_buf && addr - sh.sh_addr + 8 <= d->d_size)
			memcpy(&v, (const char *)d->d_buf + (addr - sh.sh_addr), 8);
		return v;
	}
	return 0;
}

/* Refuse an interpreter that is not 3.11: its PY_VERSION_HEX (Py_Version;
 * none before 3.11) read from the file, the frames' layout being 3.11's. */
static int check_version(Elf *e, const char *binary, uint64_t version_sym,
			 struct sf_err *err)
{
	uint64_t v = version_sym ? read_u64_at(e, version_sym) : 0;
	unsigned major = (unsigned)(v >> 24 & 0xff), minor = (unsigned)(v >> 16 & 0xff);
	if (v && major == 3 && minor == 11)
		return 0;
	if (!version_sym)
		return sf_err_set(err, PY_EVERSION,
				  "%s is CPython 3.10 or older (no Py_Version): --python reads CPython 3.11's frames only (Debian 12's python3)",
				  binary);
	return sf_err_set(err, PY_EVERSION,
			  "%s is CPython %u.%u: --python reads CPython 3.11's frames only (Debian 12's python3); 3.12 moved them",
			  binary, major, minor);
}

/* The lowest PT_LOAD's page-aligned vaddr: where a mapping of file
 * offset 0 starts, before relocation. */
static uint64_t first_load(Elf *e)
{
	size_t n = 0;
	uint64_t lo = UINT64_MAX;
	if (elf_getphdrnum(e, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_vaddr < lo)
			lo = ph.p_vaddr;
	}
	return lo == UINT64_MAX ? 0 : lo & ~(uint64_t)0xfff;
}

/* A path of pid's maps with "libpython" in its name into out, and the
 * start of its mapping of offset 0; false when none. */
static bool maps_libpython(int pid, char *out, size_t cap, uint64_t *start)
{
	char p[64], line[4608];
	snprintf(p, sizeof(p), "/proc/%d/maps", pid);
	FILE *f = fopen(p, "re");
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long long lo, off;
		int pos = 0;
		if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %n", &lo, &off,
			   &pos) < 2 || !pos || off)
			continue;
		char *path = line + pos;
		path[strcspn(path, "\n")] = '\0';
		if (*path == '/' && strstr(path, "/libpython") &&
		    strlen(path) < cap) {
			snprintf(out, cap, "%s", path);
			*start = lo;
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Open path's ELF: e and fd, 0 or -errno. */
static int open_elf(const char *path, Elf **e, int *fd)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	*e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*e || elf_kind(*e) != ELF_K_ELF) {
		if (*e)
			elf_end(*e);
		close(*fd);
		return -ENOEXEC;
	}
	return 0;
}

/* --- DWARF ------------------------------------------------------------ */

enum { T_RUNTIME, T_GILSTATE, T_TSTATE, T_CFRAME, T_IFRAME, T_CODE,
       T_ASCII, T_BYTES, T_VAR, T_COUNT };
/* Each type by either name: a struct tag or a typedef. */
static const char *const type_names[T_COUNT][2] = {
	{ "pyruntimestate", "_PyRuntimeState" },
	{ "_gilstate_runtime_state", NULL },
	{ "_ts", "PyThreadState" },
	{ "_PyCFrame", NULL },
	{ "_PyInterpreterFrame", NULL },
	{ "PyCodeObject", NULL },
	{ "PyASCIIObject", NULL },
	{ "PyBytesObject", NULL },
	{ "PyVarObject", NULL },
};

/* The complete struct a DIE names (through typedefs and qualifiers). */
static bool complete_struct(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Die cur = *die;
	for (int i = 0; i < 8; i++) {
		int tag = dwarf_tag(&cur);
		if (tag == DW_TAG_structure_type) {
			bool decl = false;
			Dwarf_Attribute a;
			if (dwarf_attr(&cur, DW_AT_declaration, &a))
				dwarf_formflag(&a, &decl);
			if (decl || !dwarf_haschildren(&cur))
				return false;
			*out = cur;
			return true;
		}
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type)
			return false;
		Dwarf_Attribute a;
		if (!dwarf_attr(&cur, DW_AT_type, &a) ||
		    !dwarf_formref_die(&a, &cur))
			return false;
	}
	return false;
}

/* One pass over every unit's top-level entries for the types wanted. */
static void find_types(Dwarf *dw, Dwarf_Die types[T_COUNT], bool got[T_COUNT])
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int left = T_COUNT;
	while (left && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL,
				    NULL) == 0) {
		Dwarf_Die cu, d;
		if (dwarf_offdie(dw, off + hsize, &cu) &&
		    dwarf_child(&cu, &d) == 0) {
			do {
				int tag = dwarf_tag(&d);
				if (tag != DW_TAG_structure_type &&
				    tag != DW_TAG_typedef)
					continue;
				const char *nm = dwarf_diename(&d);
				for (int k = 0; nm && k < T_COUNT; k++) {
					if (got[k] ||
					    (strcmp(nm, type_names[k][0]) &&
					     (!type_names[k][1] ||
					      strcmp(nm, type_names[k][1]))))
						continue;
					if (complete_struct(&d, &types[k])) {
						got[k] = true;
						left--;
					}
				}
			} while (left && dwarf_siblingof(&d, &d) == 0);
		}
		off = next;
	}
}

/* Member name's offset in struct s; -1 when it has none. */
static int64_t member(Dwarf_Die *s, const char *name)
{
	Dwarf_Die m;
	if (dwarf_child(s, &m))
		return -1;
	do {
		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		const char *nm = dwarf_diename(&m);
		Dwarf_Attribute a;
		Dwarf_Word w;
		if (nm && strcmp(nm, name) == 0 &&
		    dwarf_attr(&m, DW_AT_data_member_location, &a) &&
		    dwarf_formudata(&a, &w) == 0)
			return (int64_t)w;
	} while (dwarf_siblingof(&m, &m) == 0);
	return -1;
}

struct want {
	enum py_off k;
	int type;
	const char *member;	/* NULL: the type's size */
};
static const struct want wants[] = {
	{ PY_CFRAME, T_TSTATE, "cframe" },
	{ PY_CURRENT_FRAME, T_CFRAME, "current_frame" },
	{ PY_F_CODE, T_IFRAME, "f_code" },
	{ PY_PREVIOUS, T_IFRAME, "previous" },
	{ PY_PREV_INSTR, T_IFRAME, "prev_instr" },
	{ PY_IS_ENTRY, T_IFRAME, "is_entry" },
	{ PY_CO_QUALNAME, T_CODE, "co_qualname" },
	{ PY_CO_FILENAME, T_CODE, "co_filename" },
	{ PY_CO_FIRSTLINENO, T_CODE, "co_firstlineno" },
	{ PY_CO_LINETABLE, T_CODE, "co_linetable" },
	{ PY_CO_CODE_ADAPTIVE, T_CODE, "co_code_adaptive" },
	{ PY_ASCII_SIZE, T_ASCII, NULL },
	{ PY_ASCII_LENGTH, T_ASCII, "length" },
	{ PY_ASCII_STATE, T_ASCII, "state" },
	{ PY_BYTES_SVAL, T_BYTES, "ob_sval" },
	{ PY_VAR_SIZE, T_VAR, "ob_size" },
	{ PY_THREAD_ID, T_TSTATE, "thread_id" },
	{ PY_CO_NAME, T_CODE, "co_name" },
	{ PY_ASCII_HASH, T_ASCII, "hash" },
};

static int dwarf_offsets(Dwarf *dw, struct py_offsets *o, struct sf_err *err)
{
	Dwarf_Die t[T_COUNT];
	bool got[T_COUNT] = { false };
	find_types(dw, t, got);
	for (int k = 0; k < T_COUNT; k++)
		if (!got[k])
			return sf_err_set(err, EINVAL, "%s: no type %s in its DWARF",
					  o->debug, type_names[k][0]);
	/* gilstate.tstate_current: two levels */
	int64_t g = member(&t[T_RUNTIME], "gilstate");
	int64_t c = member(&t[T_GILSTATE], "tstate_current");
	if (g < 0 || c < 0)
		return sf_err_set(err, EINVAL, "%s: no _PyRuntimeState.gilstate.tstate_current",
				  o->debug);
	o->v[PY_TSTATE_CURRENT] = (uint64_t)(g + c);
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];
		int64_t v = w->member ? member(&t[w->type], w->member)
				      : (int64_t)dwarf_bytesize(&t[w->type]);
		if (v < 0)
			return sf_err_set(err, EINVAL, "%s: no %s.%s in its DWARF",
					  o->debug, type_names[w->type][0],
					  w->member ? w->member : "(size)");
		o->v[w->k] = (uint64_t)v;
	}
	return 0;
}

/* The debug file of the ELF e (fd, path), opened as the symbolizer finds
 * them; its DWARF read into o. */
static int from_debug(Elf *e, int fd, const char *path, struct py_offsets *o,
		      struct sf_err *err)
{
	char hex[48] = "";
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(e, &id);
	for (ssize_t i = 0; i < n && i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)id)[i]);
	struct idx_builder b;
	memset(&b, 0, sizeof(b));
	int dfd = -1;
	Elf *de = debuglink_open(e, fd, path, hex, &b, &dfd);
	if (!de)
		return sf_err_set(err, PY_ENODEBUG, "no debug info for %s (build-id %s)",
				  path, *hex ? hex : "none");
	char fdp[64];
	snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", dfd);
	ssize_t dn = readlink(fdp, o->debug, sizeof(o->debug) - 1);
	o->debug[dn > 0 ? dn : 0] = '\0';
	Dwarf *dw = dwarf_begin_elf(de, DWARF_C_READ, NULL);
	int ret = dw ? dwarf_offsets(dw, o, err)
		     : sf_err_set(err, PY_ENODEBUG, "no DWARF in the debug file of %s", path);
	if (dw)
		dwarf_end(dw);
	elf_end(de);
	close(dfd);
	return ret;
}

/* The interpreter's ELF for pid (its executable, else its libpython) or
 * path: opened into e, fd, its symbols and load bias. */
static int find_binary(int pid, const char *path, struct py_offsets *o,
		       Elf **e, int *fd, uint64_t sym[SYM_COUNT], uint64_t *bias,
		       struct sf_err *err)
{
	char exe[64];
	uint64_t start = 0;
	*bias = 0;
	if (pid > 0) {
		snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
		ssize_t n = readlink(exe, o->binary, sizeof(o->binary) - 1);
		if (n < 0)
			return sf_err_set(err, ESRCH, "pid %d: %s", pid, strerror(errno));
		o->binary[n] = '\0';
		path = exe;
	} else {
		snprintf(o->binary, sizeof(o->binary), "%s", path);
	}
	int ret = open_elf(path, e, fd);
	if (ret)
		return sf_err_set(err, -ret, "%s: %s", o->binary, strerror(-ret));
	if (dynsyms(*e, sym)) {
		GElf_Ehdr eh;
		if (gelf_getehdr(*e, &eh) && eh.e_type == ET_DYN) {
			if (pid <= 0)
				return sf_err_set(err, PY_ENOPYTHON,
						  "%s is position-independent: give the PID of a running one",
						  o->binary);
			/* the executable's load bias: from /proc/PID/stat's
			 * startcode would do too; maps is what is read here */
			char p[64], line[256];
			snprintf(p, sizeof(p), "/proc/%d/maps", pid);
			FILE *f = fopen(p, "re");
			unsigned long long lo = 0;
			if (f && fgets(line, sizeof(line), f))
				sscanf(line, "%llx-", &lo);
			if (f)
				fclose(f);
			*bias = lo - first_load(*e);
		}
		return 0;
	}
	elf_end(*e);
	close(*fd);
	if (pid <= 0 || !maps_libpython(pid, o->binary, sizeof(o->binary), &start))
		return sf_err_set(err, PY_ENOPYTHON, "%s: no _PyRuntime (not CPython 3.11?)",
				  o->binary);
	ret = open_elf(o->binary, e, fd);
	if (ret)
		return sf_err_set(err, -ret, "%s: %s", o->binary, strerror(-ret));
	if (!dynsyms(*e, sym)) {
		elf_end(*e);
		close(*fd);
		return sf_err_set(err, PY_ENOPYTHON, "%s: no _PyRuntime", o->binary);
	}
	*bias = start - first_load(*e);
	return 0;
}

int py_offsets_find(int pid, const char *path, struct py_offsets *o,
		    struct sf_err *err)
{
	Elf *e = NULL;
	int fd = -1;
	uint64_t sym[SYM_COUNT], bias = 0;
	memset(o, 0, sizeof(*o));
	elf_version(EV_CURRENT);
	int ret = find_binary(pid, path, o, &e, &fd, sym, &bias, err);
	if (ret)
		return ret;
	ret = check_version(e, o->binary, sym[SYM_VERSION], err);
	if (ret) {
		elf_end(e);
		close(fd);
		return ret;
	}
	o->v[PY_RUNTIME] = sym[SYM_RUNTIME] + bias;
	o->v[PY_CODE_TYPE] = sym[SYM_CODE_TYPE] + bias;
	o->v[PY_UNICODE_TYPE] = sym[SYM_UNICODE_TYPE] + bias;
	ret = from_debug(e, fd, o->binary, o, err);
	elf_end(e);
	close(fd);
	return ret;
}
