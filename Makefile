# stackfold - see README.md.  `make` builds bin/stackfold; `make flame` and
# `make test` are the two commands a newcomer needs (both install missing
# Debian packages through scripts/install-deps, saying which first);
# `make test-quick` is the suite without live captures and the browser.
.DELETE_ON_ERROR:
# the generated protobuf-c sources are not intermediates: tests include them
.SECONDARY:
.SUFFIXES:

CC       ?= cc
SANITIZE ?=
V        ?= 0
PREFIX   ?= /usr/local

ifeq ($(SANITIZE),1)
B        := .output-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
B        := .output
SANFLAGS :=
endif

CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ALL_CFLAGS = -std=gnu11 $(CFLAGS) $(WARN) $(SANFLAGS) -D_GNU_SOURCE -I. -Isymbolizer -Icollapse -I$(B)/gen
LDLIBS   := -lbpf -ldw -lelf -ldeflate -lz -lprotobuf-c -lzstd -llzma -liberty -lpthread -lm -ldl
ifeq ($(V),1)
Q :=
else
Q := @
endif

BIN      := bin/stackfold$(if $(filter 1,$(SANITIZE)),-san,)
# sources at any folder depth below base/ (the library both halves use),
# collapse/ and symbolizer/: a new subfolder needs no edit here
SRC_DIRS := base collapse symbolizer
PROTO    := $(shell find collapse -name '*.proto')
GEN_C    := $(patsubst collapse/%.proto,$(B)/gen/%.pb-c.c,$(PROTO))
GEN_H    := $(GEN_C:.c=.h)
# every .c below SRC_DIRS, but main.c
LIB_SRC  := $(filter-out collapse/main.c,$(sort $(shell find $(SRC_DIRS) -name '*.c')))
LIB_OBJ  := $(patsubst %.c,$(B)/%.o,$(LIB_SRC)) $(GEN_C:.c=.o)
MAIN_OBJ := $(B)/collapse/main.o
DEPS     := $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d)

.PHONY: all print-ldlibs deps test test-quick flame bench bench-overhead bench-soak fuzz labs labs-loaded install clean check-headers check-layers demo
all: $(BIN)

$(BIN): $(MAIN_OBJ) $(B)/libstackfold.a
	@mkdir -p $(@D)
	@echo "  LINK  $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/libstackfold.a: $(LIB_OBJ)
	@echo "  AR    $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/gen/%.pb-c.c $(B)/gen/%.pb-c.h: collapse/%.proto
	@mkdir -p $(@D)
	@echo "  PROTO $<"
	$(Q)protoc-c --proto_path=collapse --c_out=$(B)/gen $<

$(B)/gen/%.pb-c.o: $(B)/gen/%.pb-c.c
	$(Q)$(CC) -std=gnu11 $(CFLAGS) $(SANFLAGS) -I$(B)/gen -c -o $@ $<

$(B)/%.o: %.c $(GEN_H)
	@mkdir -p $(@D)
	@echo "  CC    $<"
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# the project's version, from VERSION, for --version
$(B)/collapse/cmd/version.o: VERSION
$(B)/collapse/cmd/version.o: ALL_CFLAGS += -DSF_VERSION='"$(shell cat VERSION)"'

-include $(DEPS)

# Every header compiles on its own; base/ (headers and sources) with the
# top folder alone on the include path: it includes neither half.
check-headers:
	@for h in $(sort $(shell find $(SRC_DIRS) -name '*.h')); do \
	  echo "#include \"$$h\"" | $(CC) $(ALL_CFLAGS) -x c -fsyntax-only - || exit 1; \
	done; \
	for f in $(sort $(shell find base -name '*.[ch]')); do \
	  $(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -x c -fsyntax-only $$f || exit 1; \
	done; echo "headers ok"

# collapse/ includes only the symbolizer's public headers, and no two
# files include each other's headers (docs/design.md, Layout).
check-layers:
	@scripts/check-layers && echo "layers ok"

# The libraries bin/stackfold links, for tests and benches that link their
# own programs against $(B)/libstackfold.a.
print-ldlibs:
	@echo $(LDLIBS)

deps:
	@scripts/install-deps

demo: bin/demo
bin/demo: tests/demo/demo.c
	@mkdir -p bin
	$(Q)$(CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -fno-optimize-sibling-calls -o $@ $<

PID     ?=
# PYTHON=1 with PID: name its Python frames (scripts/profile --python)
PYTHON  ?=
SECONDS ?= 10
HZ      ?= 99

flame:
	@scripts/install-deps
	@$(MAKE) --no-print-directory -s all demo >&2	# stdout: the top table alone
	@STACKFOLD_SUDO_HINT="sudo make flame$(if $(PID), PID=$(PID),)" \
		scripts/profile $(if $(CALLGRAPH),--call-graph $(CALLGRAPH),) $(if $(PYTHON),--python,) $(if $(PID),-p $(PID),) -d $(SECONDS) -F $(HZ) -o $(if $(OUT),$(OUT),flame) $(if $(PID),,-- bin/demo $(SECONDS))

# The whole suite: about 28 minutes on 2 CPUs (CI's); test-quick leaves
# out the test files that need live bpftrace captures or a browser (tests/run
# QUICK=1): about 8 minutes, no chromium installed.
test:
	@echo "make test: the whole suite, live bpftrace captures and browser tests included:" \
		"about 30 minutes on 2 CPUs (make test-quick: about 8, neither)" >&2
	@scripts/install-deps --test
	@$(MAKE) --no-print-directory all demo
	@STACKFOLD=$(CURDIR)/$(BIN) SANITIZE=$(SANITIZE) tests/run

test-quick:
	@echo "make test-quick: the tests that need neither live bpftrace captures nor a browser:" \
		"about 8 minutes on 2 CPUs (make test runs everything: about 30)" >&2
	@scripts/install-deps --test-quick
	@$(MAKE) --no-print-directory all demo
	@STACKFOLD=$(CURDIR)/$(BIN) SANITIZE=$(SANITIZE) QUICK=1 tests/run

bench:
	@scripts/install-deps --test
	@$(MAKE) --no-print-directory all demo
	@bench/run

bench-overhead:
	@scripts/install-deps
	@$(MAKE) --no-print-directory all demo
	@bench/overhead

# Memory of the continuous profiler over SOAK_SECONDS (default one hour).
SOAK_SECONDS ?= 3600
bench-soak:
	@scripts/install-deps
	@$(MAKE) --no-print-directory all demo
	@bench/soak $(SOAK_SECONDS)

# libFuzzer targets (tests/fuzz/), each for FUZZ_SECONDS.
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/install-deps --test
	@tests/fuzz/run $(FUZZ_SECONDS)

# Every lab RUNS times (default 5) with every CPU busy, each run checked
# by labs/check (tests/labs-loaded; LABS="3 17" for some).  About 40 min.
labs-loaded: labs
	@RUNS=$(or $(RUNS),5) tests/labs-loaded $(LABS)

labs:
	@scripts/install-deps --labs
	@$(MAKE) --no-print-directory all demo
	@$(MAKE) --no-print-directory -C labs

# Installs bin/stackfold, the bpftrace programs, the scripts (under
# share/stackfold, where they find ../bt, ../VERSION and ../bin/stackfold)
# with stackfold-NAME links in bin, and the man pages, each named as the
# command it documents (man -k stackfold finds them all).  stackfold-flame
# is flame-range's former name.
SCRIPTS := profile continuous flame-range
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/stackfold/bt \
		$(DESTDIR)$(PREFIX)/share/stackfold/scripts $(DESTDIR)$(PREFIX)/share/stackfold/bin \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man8 \
		$(DESTDIR)$(PREFIX)/share/doc/stackfold/docs
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/stackfold
	ln -sf ../../../bin/stackfold $(DESTDIR)$(PREFIX)/share/stackfold/bin/stackfold
	install -m 644 VERSION $(DESTDIR)$(PREFIX)/share/stackfold/
	install -m 644 bt/*.bt $(DESTDIR)$(PREFIX)/share/stackfold/bt/
	install -m 755 $(addprefix scripts/,$(SCRIPTS) flame install-deps) \
		$(DESTDIR)$(PREFIX)/share/stackfold/scripts/
	install -m 644 scripts/pids.sh scripts/caps.sh scripts/opts.sh scripts/flame-store.sh $(DESTDIR)$(PREFIX)/share/stackfold/scripts/
	for s in $(SCRIPTS); do \
		ln -sf ../share/stackfold/scripts/$$s $(DESTDIR)$(PREFIX)/bin/stackfold-$$s; done
	ln -sf stackfold-flame-range $(DESTDIR)$(PREFIX)/bin/stackfold-flame
	install -m 644 man/stackfold.1 $(addprefix man/stackfold-,$(addsuffix .1,$(SCRIPTS))) \
		$(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 README.md CHANGES.md $(DESTDIR)$(PREFIX)/share/doc/stackfold/	# the service's Documentation=
	install -m 644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/stackfold/docs/
	install -m 644 man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	sed 's|/usr/local/|$(PREFIX)/|g' scripts/stackfold-continuous.service \
		>$(DESTDIR)$(PREFIX)/lib/systemd/system/stackfold-continuous.service
	@# man -k reads mandb's index: refreshed for an install in place
	@if [ -z "$(DESTDIR)" ] && command -v mandb >/dev/null 2>&1; then mandb -q 2>/dev/null || true; \
	else echo "make install: run mandb so that man -k stackfold finds the pages"; fi
	@echo "make install: systemd unit in $(PREFIX)/lib/systemd/system (systemctl enable --now stackfold-continuous)"

clean:
	rm -rf .output .output-san bin tests/.build labs/build labs/out
