# fuzz.mk: builds the libFuzzer harnesses. GNU make, run by `make fuzz` from
# the Automake Makefile (tests/fuzz/local.mk), which passes:
#   srcdir, top_builddir    the source tree and the configured build tree
#   FUZZ_CC, FUZZ_CFLAGS    clang and its flags (optimisation, debug info)
#   FUZZ_SANITIZE           the sanitizers beside the fuzzer (address,undefined)
#   FUZZ_HARNESSES          fuzz_proto fuzz_conf ...: tests/fuzz/NAME.c each
#   FUZZ_LIBSRC        the project's library sources (src/...c), compiled
#                           here with FUZZ_CC into one archive the harnesses
#                           link; the linker takes only the objects a harness uses
#   FUZZ_PKG_CFLAGS, FUZZ_PKG_LIBS   the dependencies' flags (pkg-config)
# Kept apart from the Automake fragments because Automake forbids pattern
# rules, and the project is compiled again with other flags: coverage
# instrumentation and sanitizers reach every byte a parser touches. Everything
# it writes is under tests/fuzz/bin and tests/fuzz/obj in the build tree.

OBJDIR := tests/fuzz/obj
BINDIR := tests/fuzz/bin
LIB_OBJS := $(patsubst %.c,$(OBJDIR)/%.o,$(filter %.c,$(FUZZ_LIBSRC)))
HARNESS_BINS := $(addprefix $(BINDIR)/,$(FUZZ_HARNESSES))
CPPFLAGS_ALL := -I$(top_builddir) -I$(srcdir)/src -I$(srcdir)/tests -I$(srcdir)/tests/fuzz \
	-DSYSCONFDIR='"/etc"' $(FUZZ_PKG_CFLAGS)
# The library objects are instrumented for coverage and the sanitizers but
# get no libFuzzer main(): -fsanitize=fuzzer-no-link.
LIB_CFLAGS = $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SANITIZE)
BIN_CFLAGS = $(FUZZ_CFLAGS) -fsanitize=fuzzer,$(FUZZ_SANITIZE)

# Helpers beside the harnesses: plain programs, no fuzzer, no sanitizers.
TOOL_BINS := $(BINDIR)/gen_slow_journal

all: $(HARNESS_BINS) $(TOOL_BINS)

$(BINDIR)/gen_slow_journal: $(srcdir)/tests/fuzz/gen_slow_journal.c
	@mkdir -p $(@D)
	@echo "  FUZZLD   $@"
	@$(FUZZ_CC) -std=gnu11 -O2 $(FUZZ_PKG_CFLAGS) -o $@ $< $(FUZZ_PKG_LIBS)

$(OBJDIR)/libfuzzsrc.a: $(LIB_OBJS)
	@rm -f $@
	@# q, not r: r would replace a member of the same base name (two proto.c)
	@ar qcs $@ $^

$(OBJDIR)/%.o: $(srcdir)/%.c
	@mkdir -p $(@D)
	@echo "  FUZZCC   $<"
	@$(FUZZ_CC) -std=gnu11 $(CPPFLAGS_ALL) $(LIB_CFLAGS) -MMD -MP -c -o $@ $<

$(BINDIR)/%: $(srcdir)/tests/fuzz/%.c $(OBJDIR)/libfuzzsrc.a
	@mkdir -p $(@D) $(OBJDIR)/harness
	@echo "  FUZZLD   $@"
	@$(FUZZ_CC) -std=gnu11 $(CPPFLAGS_ALL) $(BIN_CFLAGS) -MMD -MP -MF $(OBJDIR)/harness/$*.d \
		-o $@ $< $(OBJDIR)/libfuzzsrc.a $(FUZZ_PKG_LIBS) -lm -pthread

-include $(LIB_OBJS:.o=.d) $(patsubst %,$(OBJDIR)/harness/%.d,$(FUZZ_HARNESSES))

.PHONY: all
