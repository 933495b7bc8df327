/* perfscript.c - see perfscript.h. */
#include "ingest/perfscript.h"
#include "model/fold.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool hexdigit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* "\t ADDR ..." : a frame line */
static bool frame_line(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && blank(s[i]))
		i++;
	if (!i || i == n || !hexdigit(s[i]))
		return false;
	while (i < n && hexdigit(s[i]))
		i++;
	return i < n && blank(s[i]);
}

/* "COMM PID[/TID] ...": comm (may hold blanks) and the ids, as
 * stackcollapse-perf.pl takes them (comm, then digits, "/" and digits) */
static bool header(const char *s, size_t n, size_t *comm_len,
		   const char **pid, size_t *pid_len, const char **tid,
		   size_t *tid_len)
{
	if (!n || blank(s[0]) || s[0] == '#' || s[0] == '@')
		return false;
	for (size_t i = 1; i < n; i++) {
		if (!blank(s[i]))
			continue;
		size_t c = i;	/* comm ends here if an id follows */
		while (i < n && blank(s[i]))
			i++;
		size_t p = i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == p) {
			i--;
			continue;
		}
		size_t pe = i, t = i, te = i;
		if (i < n && s[i] == '/') {
			t = ++i;
			while (i < n && s[i] >= '0' && s[i] <= '9')
				i++;
			te = i;
		}
		if (i < n && !blank(s[i])) {
			i--;
			continue;
		}
		*comm_len = c;
		if (t == pe) {	/* one id: perf script's default, the tid */
			t = p, te = pe;
			pe = p;
		}
		*pid = s + p, *pid_len = pe - p;
		*tid = s + t, *tid_len = te - t;
		return true;
	}
	return false;
}

bool perfscript_sniff(const unsigned char *head, size_t n)
{
	const char *s = (const char *)head, *end = s + n, *nl;
	/* blank lines and '#' ones (perf script --header), as
	 * stackcollapse-perf.pl skips them */
	while (s < end && (*s == '\n' || *s == '#')) {
		if (*s == '#' && !(nl = memchr(s, '\n', (size_t)(end - s))))
			return false;
		s = *s == '#' ? nl + 1 : s + 1;
	}
	nl = memchr(s, '\n', (size_t)(end - s));
	if (!nl)
		return false;
	size_t cl, pl, tl;
	const char *p, *t;
	size_t hl = (size_t)(nl - s);
	while (hl && blank(s[hl - 1]))
		hl--;
	if (!header(s, hl, &cl, &p, &pl, &t, &tl))
		return false;
	const char *f = nl + 1, *fe = memchr(f, '\n', (size_t)(end - f));
	return frame_line(f, (size_t)((fe ? fe : end) - f));
}

bool perfscript_is_perf_data(const unsigned char *head, size_t n)
{
	return n >= 8 && !memcmp(head, "PERFILE2", 8);
}

void perfscript_init(struct perfscript *ps, unsigned flags)
{
	memset(ps, 0, sizeof(*ps));
	ps->flags = flags;
}

void perfscript_release(struct perfscript *ps)
{
	free(ps->head);
	free(ps->fr);
	free(ps->out);
	memset(ps, 0, sizeof(*ps));
}

static int put(char **b, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (sf_grow((void **)b, cap, *len + n + 1, 1))
		return -ENOMEM;
	memcpy(*b + *len, s, n);
	*len += n;
	(*b)[*len] = 0;
	return 0;
}

/* Is f a Go method name ("net/http.(*Client).Do": a ".(" with a ")."
 * after it), whose parens are not arguments? */
static bool go_method(const char *f, size_t n)
{
	const char *o = n > 2 ? memmem(f, n, ".(", 2) : NULL;
	return o && memmem(o + 2, (size_t)(f + n - o - 2), ").", 2);
}

/* Where f's arguments begin: its first '(' that does not open
 * "(anonymous namespace)"; n when none. */
static size_t args_start(const char *f, size_t n)
{
	static const char anon[] = "(anonymous namespace)";
	for (size_t i = 0; i < n; i++)
		if (f[i] == '(' && !(n - i >= sizeof(anon) - 1 &&
				     !memcmp(f + i, anon, sizeof(anon) - 1)))
			return i;
	return n;
}

/* A function name appended as stackcollapse-perf.pl's defaults tidy it: ';'
 * as ':' (it would split the folded line), the arguments dropped unless
 * it is a Go method, quotes dropped, and in a java process a name with a
 * '/' without its leading 'L' (Lorg/foo/Bar:.run as org/foo/Bar:.run). */
static int put_tidy(struct perfscript *ps, const char *f, size_t n)
{
	size_t end = go_method(f, n) ? n : args_start(f, n), i = 0;
	bool java = ps->hlen >= 4 && !memcmp(ps->head, "java", 4);
	if (java && end && f[0] == 'L' && memchr(f, '/', end))
		i = 1;
	for (; i < end; i++) {
		char c = f[i] == ';' ? ':' : f[i];
		if (c != '"' && c != '\'' && put(&ps->fr, &ps->flen, &ps->fcap, &c, 1))
			return -ENOMEM;
	}
	return 0;
}

/* A frame line's name: FUNC without "+0xOFF", else [MODULE's base
 * name], else [unknown]; "_[k]" for a kernel one.  Appended to fr. */
static int add_frame(struct perfscript *ps, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && blank(s[i]))
		i++;
	while (i < n && hexdigit(s[i]))
		i++;
	while (i < n && blank(s[i]))
		i++;
	const char *f = s + i, *end = s + n;
	while (end > f && blank(end[-1]))
		end--;
	const char *mod = NULL, *mend = end;
	if (end > f && end[-1] == ')') {	/* " (MODULE)" */
		const char *o = end - 1;
		while (o > f && *o != '(')
			o--;
		if (*o == '(' && o > f && blank(o[-1])) {
			mod = o + 1, mend = end - 1;
			end = o - 1;
			while (end > f && blank(end[-1]))
				end--;
		}
	}
	size_t fl = (size_t)(end - f);
	const char *off = fl > 3 ? memmem(f, fl, "+0x", 3) : NULL;
	if (off)
		fl = (size_t)(off - f);
	size_t ml = mod ? (size_t)(mend - mod) : 0;
	bool kernel = mod && ((ml == 17 && !memcmp(mod, "[kernel.kallsyms]", 17)) ||
			      (ml > 2 && mod[0] == '[' && mod[ml - 1] == ']' &&
			       memcmp(mod, "[unknown]", 9) && memcmp(mod, "[vdso]", 6) &&
			       memcmp(mod, "[anon", 5) && memcmp(mod, "[heap]", 6) &&
			       memcmp(mod, "[stack]", 7) && memcmp(mod, "[jit", 4)));
	int ret;
	if (fl && !(fl == 9 && !memcmp(f, "[unknown]", 9))) {
		ret = put_tidy(ps, f, fl);
	} else if (ml && memcmp(mod, "[unknown]", ml < 9 ? ml : 9)) {
		const char *b = mod + ml;
		while (b > mod && b[-1] != '/')
			b--;
		bool br = *b == '[';
		ret = (br ? 0 : put(&ps->fr, &ps->flen, &ps->fcap, "[", 1)) ||
		      put(&ps->fr, &ps->flen, &ps->fcap, b, (size_t)(mod + ml - b)) ||
		      (br ? 0 : put(&ps->fr, &ps->flen, &ps->fcap, "]", 1));
	} else {
		ret = put(&ps->fr, &ps->flen, &ps->fcap, "[unknown]", 9);
	}
	if (!ret && kernel)
		ret = put(&ps->fr, &ps->flen, &ps->fcap, "_[k]", 4);
	if (!ret)	/* each frame NUL-ended */
		ret = put(&ps->fr, &ps->flen, &ps->fcap, "", 0) ||
		      (ps->flen++, 0);
	return ret ? -ENOMEM : 0;
}

/* The sample read as one folded line: root, then the frames root first. */
static int emit(struct perfscript *ps, const char **line, size_t *len)
{
	ps->olen = 0;
	ps->in_sample = false;
	if (put(&ps->out, &ps->olen, &ps->ocap, ps->head, ps->hlen))
		return -ENOMEM;
	for (size_t e = ps->flen; e > 0;) {	/* the frames from the last */
		size_t b = e - 1;	/* (its NUL) */
		while (b > 0 && ps->fr[b - 1])
			b--;
		if (put(&ps->out, &ps->olen, &ps->ocap, ";", 1) ||
		    put(&ps->out, &ps->olen, &ps->ocap, ps->fr + b, e - 1 - b))
			return -ENOMEM;
		e = b;
	}
	if (put(&ps->out, &ps->olen, &ps->ocap, " 1", 2))
		return -ENOMEM;
	ps->flen = 0;
	*line = ps->out, *len = ps->olen;
	return 1;
}

int perfscript_line(struct perfscript *ps, const char *s, size_t n,
		    const char **line, size_t *len)
{
	size_t cl, pl, tl;
	const char *p, *t;
	if (ps->in_sample && frame_line(s, n))
		return add_frame(ps, s, n);
	int ret = 0;
	if (ps->in_sample)	/* a blank line, or the next header */
		ret = emit(ps, line, len);
	if (ret < 0 || !header(s, n, &cl, &p, &pl, &t, &tl))
		return ret;
	/* (a header right after a sample: that sample was emitted above; its
	 * line stays valid, this one is kept for the next) */
	ps->hlen = 0;
	bool pid = ps->flags & FOLD_PID, tid = ps->flags & FOLD_TID;
	/* (no pid in the header, "COMM TID": no "-PID") */
	if (put(&ps->head, &ps->hlen, &ps->hcap, s, cl) ||
	    (pid && pl && (put(&ps->head, &ps->hlen, &ps->hcap, "-", 1) ||
			   put(&ps->head, &ps->hlen, &ps->hcap, p, pl))) ||
	    (tid && (put(&ps->head, &ps->hlen, &ps->hcap, "/", 1) ||
		     put(&ps->head, &ps->hlen, &ps->hcap, t, tl))))
		return -ENOMEM;
	/* a comm's ';' would split it: as '_' */
	for (size_t i = 0; i < ps->hlen; i++)
		if (ps->head[i] == ';')
			ps->head[i] = '_';
	ps->in_sample = true;
	return ret;
}

int perfscript_end(struct perfscript *ps, const char **line, size_t *len)
{
	return ps->in_sample ? emit(ps, line, len) : 0;
}
