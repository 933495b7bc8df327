/* svg_color.c - see svg_color.h.  The ranges of the classic palettes
 * (hot: red to yellow, mem: green to blue, io: blue-grey ...) follow what
 * users know from FlameGraph, so graphs look familiar. */
#include "output/svg_color.h"

#include <string.h>

static const char *const pal_names[] = {
	[SVG_PAL_HOT] = "hot",	     [SVG_PAL_MEM] = "mem",
	[SVG_PAL_IO] = "io",	     [SVG_PAL_RED] = "red",
	[SVG_PAL_GREEN] = "green",   [SVG_PAL_BLUE] = "blue",
	[SVG_PAL_YELLOW] = "yellow", [SVG_PAL_PURPLE] = "purple",
	[SVG_PAL_AQUA] = "aqua",     [SVG_PAL_ORANGE] = "orange",
	[SVG_PAL_LANG] = "lang",     [SVG_PAL_JAVA] = "java",
	[SVG_PAL_JS] = "js",	     [SVG_PAL_PERL] = "perl",
	[SVG_PAL_WAKEUP] = "wakeup", [SVG_PAL_CHAIN] = "chain",
};
#define NPAL (sizeof(pal_names) / sizeof(pal_names[0]))

int svg_palette_find(const char *name)
{
	if (!name || !*name)
		return SVG_PAL_HOT;
	for (unsigned i = 0; i < NPAL; i++)
		if (strcmp(pal_names[i], name) == 0)
			return (int)i;
	return -1;
}

const char *svg_palette_names(void)
{
	return "hot, mem, io, wakeup, chain, java, js, perl, red, green, blue, "
	       "yellow, purple, aqua, orange, lang";
}

bool svg_bgcolors_ok(const char *s)
{
	if (!strcmp(s, "yellow") || !strcmp(s, "blue") || !strcmp(s, "green") ||
	    !strcmp(s, "grey"))
		return true;
	if (s[0] != '#' || strlen(s) != 7)
		return false;
	for (int i = 1; i < 7; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return false;
	return true;
}

/* flamegraph.pl's gradients */
void svg_palette_background(int pal, const char *bg, const char **top,
			    const char **bottom)
{
	if (!bg)
		bg = pal == SVG_PAL_MEM ? "green" : pal == SVG_PAL_IO ? "blue" :
		     pal == SVG_PAL_CHAIN ? "grey" : "yellow";
	*top = "#eeeeee";
	if (!strcmp(bg, "yellow")) {
		*bottom = "#eeeeb0";
	} else if (!strcmp(bg, "blue")) {
		*bottom = "#e0e0ff";
	} else if (!strcmp(bg, "green")) {
		*top = "#eef2ee";
		*bottom = "#e0ffe0";
	} else if (!strcmp(bg, "grey")) {
		*top = "#f8f8f8";
		*bottom = "#e8e8e8";
	} else {	/* flat */
		*top = *bottom = bg;
	}
}

static bool has(const char *name, size_t len, const char *what)
{
	return memmem(name, len, what, strlen(what)) != NULL;
}

static bool ends(const char *name, size_t len, const char *what)
{
	size_t n = strlen(what);
	return len >= n && !memcmp(name + len - n, what, n);
}

/* ^L?(java|javax|jdk|net|org|com|io|sun)/ */
static bool java_package(const char *name, size_t len)
{
	static const char *const pk[] = { "java/", "javax/", "jdk/", "net/",
					  "org/", "com/", "io/", "sun/" };
	if (len && name[0] == 'L') {
		name++;
		len--;
	}
	for (size_t i = 0; i < sizeof(pk) / sizeof(pk[0]); i++)
		if (len >= strlen(pk[i]) && !strncmp(name, pk[i], strlen(pk[i])))
			return true;
	return false;
}

/* flamegraph.pl's color(): the rules of its java, perl, js, wakeup and
 * chain palettes, in its order */
int svg_palette_for(int pal, const char *name, size_t len)
{
	switch (pal) {
	case SVG_PAL_JAVA:
		if (ends(name, len, "_[j]"))
			return SVG_PAL_GREEN;	/* JIT compiled */
		if (ends(name, len, "_[i]"))
			return SVG_PAL_AQUA;	/* inlined */
		if (java_package(name, len) || has(name, len, ":::"))
			return SVG_PAL_GREEN;	/* Java */
		if (has(name, len, "::"))
			return SVG_PAL_YELLOW;	/* C++ */
		if (ends(name, len, "_[k]"))
			return SVG_PAL_ORANGE;	/* kernel */
		return SVG_PAL_RED;		/* system */
	case SVG_PAL_PERL:
		if (has(name, len, "::"))
			return SVG_PAL_YELLOW;
		if (has(name, len, "Perl") || has(name, len, ".pl"))
			return SVG_PAL_GREEN;
		if (ends(name, len, "_[k]"))
			return SVG_PAL_ORANGE;
		return SVG_PAL_RED;
	case SVG_PAL_JS:
		if (ends(name, len, "_[j]"))	/* source, or a builtin */
			return has(name, len, "/") ? SVG_PAL_GREEN : SVG_PAL_AQUA;
		if (has(name, len, "::"))
			return SVG_PAL_YELLOW;
		if (has(name, len, "/") && has(name, len, ".js"))
			return SVG_PAL_GREEN;
		if (has(name, len, ":"))
			return SVG_PAL_AQUA;
		if (len == 1 && name[0] == ' ')	/* a missing symbol */
			return SVG_PAL_GREEN;
		if (has(name, len, "_[k]"))
			return SVG_PAL_ORANGE;
		return SVG_PAL_RED;
	case SVG_PAL_WAKEUP:
		return SVG_PAL_AQUA;
	case SVG_PAL_CHAIN:
		return has(name, len, "_[w]") ? SVG_PAL_AQUA : SVG_PAL_BLUE;
	}
	return pal;
}

enum svg_suffix svg_suffix_of(const char *name, size_t len)
{
	if (len < 4 || name[len - 4] != '_' || name[len - 3] != '[' ||
	    name[len - 1] != ']')
		return SVG_SFX_NONE;
	switch (name[len - 2]) {
	case 'k': return SVG_SFX_K;
	case 'j': return SVG_SFX_J;
	case 'i': return SVG_SFX_I;
	case 'w': return SVG_SFX_W;
	}
	return SVG_SFX_NONE;
}

static struct svg_rgb rgb(unsigned r, unsigned g, unsigned b)
{
	return (struct svg_rgb){ (uint8_t)r, (uint8_t)g, (uint8_t)b };
}

/* base + span * v, v in [0, 1) */
static unsigned ramp(unsigned base, unsigned span, double v)
{
	return base + (unsigned)(span * v);
}

static struct svg_rgb solid(int pal, double v1, double v2, double v3)
{
	switch (pal) {
	case SVG_PAL_MEM:
		return rgb(0, ramp(190, 50, v2), ramp(0, 210, v1));
	case SVG_PAL_IO:
		return rgb(ramp(80, 60, v1), ramp(80, 60, v1),
			   ramp(190, 55, v2));
	case SVG_PAL_RED:
		return rgb(ramp(200, 55, v1), ramp(50, 80, v1),
			   ramp(50, 80, v1));
	case SVG_PAL_GREEN:
		return rgb(ramp(50, 60, v1), ramp(200, 55, v1),
			   ramp(50, 60, v1));
	case SVG_PAL_BLUE:
		return rgb(ramp(80, 60, v1), ramp(80, 60, v1),
			   ramp(205, 50, v1));
	case SVG_PAL_YELLOW:
		return rgb(ramp(175, 55, v1), ramp(175, 55, v1),
			   ramp(50, 20, v1));
	case SVG_PAL_PURPLE:
		return rgb(ramp(190, 65, v1), ramp(80, 60, v1),
			   ramp(190, 65, v1));
	case SVG_PAL_AQUA:
		return rgb(ramp(50, 60, v1), ramp(165, 55, v1),
			   ramp(165, 55, v1));
	case SVG_PAL_ORANGE:
		return rgb(ramp(190, 65, v1), ramp(90, 65, v1), 0);
	default:	/* hot */
		return rgb(ramp(205, 50, v3), ramp(0, 230, v1),
			   ramp(0, 55, v2));
	}
}

/* lang: the runtime a frame belongs to picks the hue, the name picks the
 * shade.  Inlined frames are a lighter user colour so a chain of inlines
 * reads as part of its caller. */
static struct svg_rgb lang(const char *name, size_t len, double v1)
{
	switch (svg_suffix_of(name, len)) {
	case SVG_SFX_K:
		return solid(SVG_PAL_ORANGE, v1, 0, 0);
	case SVG_SFX_J:
		return solid(SVG_PAL_GREEN, v1, 0, 0);
	case SVG_SFX_I:
		return rgb(ramp(230, 25, v1), ramp(140, 60, v1),
			   ramp(140, 60, v1));
	case SVG_SFX_W:
		return solid(SVG_PAL_AQUA, v1, 0, 0);
	default:
		break;
	}
	/* [unknown], [missed user stack], module+0x...: no symbol, grey */
	if ((len >= 2 && name[0] == '[' && name[len - 1] == ']') ||
	    memmem(name, len, "+0x", 3))
		return rgb(ramp(170, 40, v1), ramp(170, 40, v1),
			   ramp(170, 40, v1));
	return solid(SVG_PAL_RED, v1, 0, 0);
}

struct svg_rgb svg_color(int pal, const char *name, size_t len,
			 uint64_t seed)
{
	if (len == 1 && name[0] == '-')	/* user/kernel delimiter */
		return rgb(160, 160, 160);
	double v1 = (double)(seed & 0xffff) / 65536.0;
	double v2 = (double)((seed >> 16) & 0xffff) / 65536.0;
	double v3 = (double)((seed >> 32) & 0xffff) / 65536.0;
	if (pal == SVG_PAL_LANG)
		return lang(name, len, v1);
	return solid(svg_palette_for(pal, name, len), v1, v2, v3);
}

struct svg_rgb svg_diff_color(int64_t delta, uint64_t max)
{
	if (delta == 0 || max == 0)
		return rgb(255, 255, 255);
	uint64_t mag = delta < 0 ? (uint64_t)(-(delta + 1)) + 1 : (uint64_t)delta;
	if (mag > max)
		mag = max;
	unsigned other = (unsigned)(210.0 * (double)(max - mag) / (double)max);
	return delta > 0 ? rgb(255, other, other) : rgb(other, other, 255);
}
