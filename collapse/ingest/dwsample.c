/* dwsample.c - a kernel frame line's address; see dwsample.h. */
#include "ingest/dwsample.h"
#include "base/util.h"

bool dwsample_kframe_addr(const char *s, size_t len, uint64_t *addr)
{
	size_t i = 0;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t b = i;
	while (i < len && s[i] != ' ')
		i++;
	return b > 0 && sf_parse_hex(s + b, i - b, addr);
}
