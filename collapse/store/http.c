/*
 * http.c - see http.h.
 */
#include "store/http.h"
#include "store/curlapi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base/untrusted.h"

static int set_kind(struct store_url *u, const char *scheme, size_t n)
{
	static const struct { const char *name; enum store_kind kind; bool tls;
			      unsigned port; } schemes[] = {
		{ "clickhouse", STORE_CLICKHOUSE, false, 8123 },
		{ "clickhouses", STORE_CLICKHOUSE, true, 8443 },
		{ "pyroscope", STORE_PYROSCOPE, false, 4040 },
		{ "pyroscopes", STORE_PYROSCOPE, true, 4040 },
		{ "http", STORE_PYROSCOPE, false, 4040 },
		{ "https", STORE_PYROSCOPE, true, 4040 },
	};
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (strlen(schemes[i].name) == n && !memcmp(scheme, schemes[i].name, n)) {
			u->kind = schemes[i].kind;
			u->tls = schemes[i].tls;
			u->port = schemes[i].port;
			return 0;
		}
	return -EINVAL;
}

/* "[USER[:PASS]@]" at the start of s; *rest past it. */
static int parse_userinfo(const char *s, const char **rest, struct store_url *u)
{
	const char *at = strchr(s, '@'), *slash = strchr(s, '/');
	*rest = s;
	if (!at || (slash && slash < at))
		return 0;
	const char *colon = memchr(s, ':', (size_t)(at - s));
	size_t ulen = (size_t)((colon ? colon : at) - s);
	if (ulen >= sizeof(u->user) ||
	    (colon && (size_t)(at - colon - 1) >= sizeof(u->password)))
		return -EINVAL;
	memcpy(u->user, s, ulen);
	u->user[ulen] = 0;
	if (colon) {
		memcpy(u->password, colon + 1, (size_t)(at - colon - 1));
		u->password[at - colon - 1] = 0;
	}
	*rest = at + 1;
	return 0;
}

/* HOST[:PORT]: a name or IPv4 address up to ':' or '/', or an IPv6
 * literal in brackets (kept with them: the URL libcurl gets wants them). */
static int parse_hostport(const char *s, const char **rest, struct store_url *u)
{
	size_t n = s[0] == '[' ? strcspn(s, "]/") + 1 : strcspn(s, ":/");
	if (s[0] == '[' && (s[n - 1] != ']' || n < 4 ||
			    strspn(s + 1, "0123456789abcdefABCDEF:.") != n - 2))
		return -EINVAL;
	if (!n || n >= sizeof(u->host))
		return -EINVAL;
	memcpy(u->host, s, n);
	u->host[n] = 0;
	s += n;
	if (*s == ':') {
		char *end;
		unsigned long p = strtoul(s + 1, &end, 10);
		if (end == s + 1 || p == 0 || p > 65535 || (*end && *end != '/'))
			return -EINVAL;
		u->port = (unsigned)p;
		s = end;
	}
	*rest = s;
	return 0;
}

static bool name_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == '-'))
			return false;
	return true;
}

int store_url_parse(const char *s, struct store_url *u, struct sf_err *err)
{
	*u = (struct store_url){ 0 };
	const char *sep = strstr(s, "://"), *rest;
	if (!sep || set_kind(u, s, (size_t)(sep - s)))
		return sf_err_set(err, EINVAL, "'%.80s' is not clickhouse://, "
				  "clickhouses://, pyroscope:// or http(s)://", s);
	if (parse_userinfo(sep + 3, &rest, u) || parse_hostport(rest, &rest, u))
		return sf_err_set(err, EINVAL, "cannot read host and port in '%.80s'", s);
	if (*rest == '/')
		rest++;
	if (strlen(rest) >= sizeof(u->path) || !name_ok(rest))
		return sf_err_set(err, EINVAL, "bad database or application name "
				  "in '%.80s' (letters, digits, _ . -)", s);
	snprintf(u->path, sizeof(u->path), "%s", rest);
	if (u->kind == STORE_CLICKHOUSE && (!u->path[0] || strchr(u->path, '.') ||
					   strchr(u->path, '-')))
		return sf_err_set(err, EINVAL, "'%.80s' names no database "
				  "(clickhouse://HOST:PORT/DATABASE; letters, digits, _)", s);
	if (u->kind == STORE_PYROSCOPE && !u->path[0])
		snprintf(u->path, sizeof(u->path), "stackfold");
	snprintf(u->text, sizeof(u->text), "%.*s://%s%s%s:%u/%s", (int)(sep - s), s,
		 u->user, u->user[0] ? "@" : "", u->host, u->port, u->path);
	return 0;
}

int store_url_auth_file(struct store_url *u, const char *path,
			struct sf_err *err)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return sf_err_set(err, errno, "cannot read '%s': %s", path,
				  strerror(errno));
	char line[512];
	bool got = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	if (!got)
		return sf_err_set(err, EINVAL, "'%s' is empty", path);
	line[strcspn(line, "\r\n")] = 0;
	char *colon = strchr(line, ':');
	const char *pw = line;
	if (colon) {
		*colon = 0;
		if (strlen(line) >= sizeof(u->user))
			return sf_err_set(err, EINVAL, "user name too long in '%s'", path);
		snprintf(u->user, sizeof(u->user), "%s", line);
		pw = colon + 1;
	}
	if (strlen(pw) >= sizeof(u->password))
		return sf_err_set(err, EINVAL, "password too long in '%s'", path);
	snprintf(u->password, sizeof(u->password), "%s", pw);
	memset(line, 0, sizeof(line));
	return 0;
}

/* A PEM certificate begins so; a CA bundle's first one is near its start. */
#define PEM_CERT "-----BEGIN CERTIFICATE-----"
#define PEM_SCAN (64 << 10)

int store_url_cacert(struct store_url *u, const char *path,
		     struct sf_err *err)
{
	struct stat st;
	if (strlen(path) >= sizeof(u->cacert))
		return sf_err_set(err, EINVAL, "'%.80s...': name too long", path);
	int fd = sf_open_untrusted(path, &st);
	if (fd == -SF_ENOTREG)
		return sf_err_set(err, EINVAL, "'%s' is %s, not a regular file",
				  path, sf_file_kind(st.st_mode));
	if (fd < 0)
		return sf_err_set(err, -fd, "cannot read '%s': %s", path,
				  strerror(-fd));
	char *text = malloc(PEM_SCAN + 1);
	ssize_t n = text ? read(fd, text, PEM_SCAN) : 0;
	int e = errno;
	close(fd);
	if (!text)
		return sf_err_set(err, ENOMEM, "out of memory");
	if (n < 0) {
		free(text);
		return sf_err_set(err, e, "cannot read '%s': %s", path, strerror(e));
	}
	text[n] = 0;
	bool pem = memmem(text, (size_t)n, PEM_CERT, strlen(PEM_CERT)) != NULL;
	free(text);
	if (!pem)
		return sf_err_set(err, EINVAL, "'%s' holds no PEM certificate "
				  "(\"%s\" line)", path, PEM_CERT);
	snprintf(u->cacert, sizeof(u->cacert), "%s", path);
	return 0;
}

/* libcurl's calls, loaded by http_global_init() */
static const struct curl_api *api;

int http_global_init(struct sf_err *err)
{
	api = curl_api_load(err);
	return api ? 0 : -ENOENT;
}

int http_conn_init(struct http_conn *c, const struct store_url *u)
{
	*c = (struct http_conn){ .url = u };
	c->curl = api->easy_init();
	return c->curl ? 0 : -ENOMEM;
}

void http_conn_release(struct http_conn *c)
{
	if (c->curl)
		api->easy_cleanup(c->curl);
	c->curl = NULL;
}

/* The answer being read: past max bytes the request fails (a store, or
 * what answers in its place, cannot make us buffer without end). */
struct answer {
	struct buf *b;
	size_t got, max;
	bool over;
	const char *need_header;	/* prefix looked for */
	bool has_header;
	const uint64_t *abort_at_ns;
};

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;
	if (size * n > a->max - a->got) {
		a->over = true;
		return 0;
	}
	a->got += size * n;
	buf_add(a->b, p, size * n);
	return a->b->oom ? 0 : size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;
	size_t len = size * n, k = a->need_header ? strlen(a->need_header) : 0;
	if (k && len >= k && !strncasecmp(p, a->need_header, k))
		a->has_header = true;
	return len;
}

/* libcurl calls it about once a second at least, even while nothing
 * moves: nonzero abandons the request. */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut,
		       curl_off_t un)
{
	(void)dt, (void)dn, (void)ut, (void)un;
	struct answer *a = ctx;
	uint64_t at = __atomic_load_n(a->abort_at_ns, __ATOMIC_ACQUIRE);
	return at && sf_clock_ns(CLOCK_MONOTONIC) >= at;
}

/* The request body, read by libcurl; never rewound once sent: libcurl
 * resends a request on a fresh connection when a reused one died before
 * its answer, and the store may have committed the first (an INSERT
 * counted twice).  Refusing the rewind makes that a failed request. */
struct body {
	const char *p;
	size_t len, off;
};

static size_t on_read(char *p, size_t size, size_t n, void *ctx)
{
	struct body *b = ctx;
	size_t k = size * n < b->len - b->off ? size * n : b->len - b->off;
	memcpy(p, b->p + b->off, k);
	b->off += k;
	return k;
}

static int on_seek(void *ctx, curl_off_t off, int origin)
{
	struct body *b = ctx;
	if (origin != SEEK_SET || off != 0 || b->off)
		return CURL_SEEKFUNC_CANTSEEK;
	return CURL_SEEKFUNC_OK;	/* nothing sent yet: nothing to undo */
}

void http_urlencode(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		    ch == '.' || ch == '~') {
			buf_add(b, &s[i], 1);
		} else {
			char e[3] = { '%', hex[ch >> 4], hex[ch & 15] };
			buf_add(b, e, 3);
		}
	}
}

static int curl_errno(CURLcode rc)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT: return -ETIMEDOUT;
	case CURLE_OUT_OF_MEMORY: return -ENOMEM;
	case CURLE_COULDNT_CONNECT: return -ECONNREFUSED;
	case CURLE_ABORTED_BY_CALLBACK: return -ECANCELED;
	default: return -EHOSTDOWN;
	}
}

/* The answer's first line, for the error text. */
static void first_line(const struct buf *r, char *out, size_t n)
{
	const char *nl = r->len ? memchr(r->data, '\n', r->len) : NULL;
	size_t len = nl ? (size_t)(nl - r->data) : r->len;
	snprintf(out, n, "%.*s", (int)(len > 300 ? 300 : len), len ? r->data : "");
}

/* HTTPS: the peer's certificate and name always checked (libcurl's
 * defaults, said again so no default of a future libcurl can loosen
 * them); with a CA file, its CAs are the only ones trusted. */
static void set_tls(CURL *h, const struct store_url *u)
{
	if (!u->tls)
		return;
	api->easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	api->easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (u->cacert[0]) {
		api->easy_setopt(h, CURLOPT_CAINFO, u->cacert);
		api->easy_setopt(h, CURLOPT_CAPATH, (char *)NULL);
	}
}

/* The answer's status as a return value (err filled). */
static int check_status(struct http_conn *c, const struct answer *ans,
			const struct buf *r, size_t r0, struct sf_err *err)
{
	char line[320];
	struct buf tail = { .data = r->data ? r->data + r0 : NULL,
			    .len = r->len - r0 };
	first_line(&tail, line, sizeof(line));
	if (c->status == 401 || c->status == 403)
		return sf_err_set(err, EACCES, "HTTP %ld: %s", c->status, line);
	if (c->status < 200 || c->status > 299)
		return sf_err_set(err, EIO, "HTTP %ld: %s", c->status, line);
	if (ans->need_header && !ans->has_header)
		return sf_err_set(err, EPROTO, "HTTP %ld without %s* headers: "
				  "not the store's answer (another server on "
				  "its port?)", c->status, ans->need_header);
	return 0;
}

static const uint64_t never;

static int answer_over(const struct store_url *u, size_t max, struct sf_err *err)
{
	if (max & 1023)
		return sf_err_set(err, EFBIG, "%s:%u: answer larger than %zu "
				  "bytes", u->host, u->port, max);
	return sf_err_set(err, EFBIG, "%s:%u: answer larger than %zu KiB",
			  u->host, u->port, max >> 10);
}

int http_post(struct http_conn *c, const char *path_query,
	      const char *content_type, const void *body, size_t len,
	      struct buf *resp, size_t resp_max, long timeout_s,
	      struct sf_err *err)
{
	CURL *h = c->curl;
	const struct store_url *u = c->url;
	char why[CURL_ERROR_SIZE] = "";	/* libcurl's words for a failure */
	struct buf url = { 0 }, own = { 0 };
	struct buf *r = resp ? resp : &own;
	size_t r0 = r->len;
	struct answer ans = { .b = r, .max = resp_max ? resp_max : resp
			      ? HTTP_ANSWER_MAX : HTTP_NOBODY_MAX,
			      .need_header = c->need_header,
			      .abort_at_ns = c->abort_at_ns ? c->abort_at_ns : &never };
	struct body rb = { .p = body, .len = len };
	buf_printf(&url, "%s://%s:%u%s", u->tls ? "https" : "http", u->host,
		   u->port, path_query);
	buf_add(&url, "", 1);
	if (url.oom)
		return sf_err_set(err, ENOMEM, "out of memory");
	struct curl_slist *hdr = NULL;
	char ct[128];
	if (content_type) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
		hdr = api->slist_append(hdr, ct);
	}
	hdr = api->slist_append(hdr, "Expect:");	/* no 100-continue wait */
	api->easy_reset(h);
	api->easy_setopt(h, CURLOPT_URL, url.data);
	api->easy_setopt(h, CURLOPT_POST, 1L);
	api->easy_setopt(h, CURLOPT_READFUNCTION, on_read);
	api->easy_setopt(h, CURLOPT_READDATA, &rb);
	api->easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
	api->easy_setopt(h, CURLOPT_SEEKDATA, &rb);
	api->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	api->easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	api->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	api->easy_setopt(h, CURLOPT_WRITEDATA, &ans);
	api->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	api->easy_setopt(h, CURLOPT_HEADERDATA, &ans);
	api->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	api->easy_setopt(h, CURLOPT_XFERINFODATA, &ans);
	api->easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	api->easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
	api->easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
	api->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);	/* threads */
	api->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	api->easy_setopt(h, CURLOPT_ERRORBUFFER, why);
	set_tls(h, u);
	if (u->user[0] || u->password[0]) {
		api->easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		api->easy_setopt(h, CURLOPT_USERNAME, u->user[0] ? u->user : "default");
		api->easy_setopt(h, CURLOPT_PASSWORD, u->password);
	}
	CURLcode rc = api->easy_perform(h);
	api->easy_setopt(h, CURLOPT_ERRORBUFFER, (char *)NULL);	/* why ends here */
	api->slist_free_all(hdr);
	buf_free(&url);
	c->status = 0;
	int ret = 0;
	if (rc == CURLE_ABORTED_BY_CALLBACK && !ans.over) {
		ret = sf_err_set(err, ECANCELED, "%s:%u: abandoned: stopping",
				 u->host, u->port);
	} else if (rc == CURLE_SEND_FAIL_REWIND) {
		ret = sf_err_set(err, EHOSTDOWN, "%s:%u: the connection closed "
				 "before the answer (the request is not sent "
				 "again: the retry looks up what the store "
				 "holds)", u->host, u->port);
	} else if (rc != CURLE_OK) {
		ret = r->oom ? sf_err_set(err, ENOMEM, "out of memory")
		      : ans.over ? answer_over(u, ans.max, err)
			     : sf_err_set(err, -curl_errno(rc), "%s:%u: %s", u->host,
					  u->port, why[0] ? why : api->easy_strerror(rc));
	} else {
		api->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c->status);
		c->sent_bytes += len;
		ret = check_status(c, &ans, r, r0, err);
	}
	buf_free(&own);
	return ret;
}
