/* help.c - the help of 'cujit --help' and of each 'cujit COMMAND --help', from one table.
 * docs/cujit.1 (the manual page) lists the same commands, options and exit statuses: a
 * test compares the two (tests/check_manpage.sh). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

typedef struct command_help {
  const char *name;
  const char *synopsis; /* lines after "cujit "; the first starts with the name */
  const char *summary;  /* what it does: 'cujit --help' shows this much */
  const char *options;  /* one option a line: 'cujit COMMAND --help' adds these */
  const char *status;   /* its exit status */
} command_help;

#define HELP_OPTION "  -h, --help                show this help\n"

static const command_help commands[] = {
    {"compile",
     "compile FILE.cu... [-o OUT] [--ptx|--cubin|--bundle]\n"
     "        [--arch ARCH[,ARCH...]] [-I DIR] [-D NAME[=VAL]]\n"
     "        [--no-cache | --cache-only] [-j N] [--time-limit SECONDS]\n"
     "        [-- NVRTC options...]\n",
     "Compile each FILE.cu and write PTX (default) or CUBIN to OUT (default:\n"
     "FILE's base name with .ptx or .cubin, in the current directory; '-' for\n"
     "stdout). Several files are compiled N at once (default: one per\n"
     "processor), with progress shown on a terminal; --cache-only fills the\n"
     "cache and writes nothing. --time-limit stops a compile that runs longer\n"
     "(it fails; 0: no limit). Several targets (--arch sm_80,sm_90,sm_100), or\n"
     "--bundle, write one bundle (default: FILE's base name with .bundle): a\n"
     "CUBIN per sm_XX, PTX for the newest, and what warms a cache (the source,\n"
     "options and each cache entry).\n",
     "  -o, --output OUT          write to OUT ('-': standard output); one input only\n"
     "  --ptx                     write PTX (the default)\n"
     "  --cubin                   write CUBIN (needs a real target, sm_XX)\n"
     "  --bundle                  write a bundle, even of one target\n"
     "  --arch ARCH[,ARCH...]     the target, sm_XX or compute_XX; several make a\n"
     "                            bundle (default: CUJIT_ARCH, else the device's)\n"
     "  -I, --include-path DIR    look for included headers in DIR too\n"
     "  -D, --define NAME[=VAL]   define a macro\n"
     "  --no-cache                compile with NVRTC; neither read nor write the cache\n"
     "  --cache-only              fill the cache and write no file\n"
     "  -j, --jobs N              compile N files at once, 1 to 1024\n"
     "  --time-limit SECONDS      fail a compile that runs longer (0: no limit)\n" HELP_OPTION
     "  -- NVRTC options...       give the rest of the line to NVRTC\n",
     "0  every file compiled\n"
     "1  a file did not compile, or could not be read or written\n"
     "2  bad usage, an option NVRTC does not know, or a target it does not support\n"},
    {"warm",
     "warm DIR [--arch ARCH[,ARCH...]] [-I DIR] [-D NAME[=VAL]] [-j N]\n"
     "     [--time-limit SECONDS] [-- NVRTC options...]\n"
     "warm --bundle FILE\n",
     "Compile every .cu file under DIR into the cache (as compile\n"
     "--cache-only), for each target given. With --bundle, store a bundle's\n"
     "cache entries in this machine's cache, each only when its key, computed\n"
     "again here from the bundle's source and options, is the same.\n",
     "  --arch ARCH[,ARCH...]     the targets to compile each file for (as compile)\n"
     "  -I, --include-path DIR    look for included headers in DIR too\n"
     "  -D, --define NAME[=VAL]   define a macro\n"
     "  -j, --jobs N              compile N files at once, 1 to 1024\n"
     "  --time-limit SECONDS      fail a compile that runs longer (0: no limit)\n"
     "  --bundle FILE             warm the cache from a bundle made by compile\n" HELP_OPTION
     "  -- NVRTC options...       give the rest of the line to NVRTC\n",
     "0  every file compiled, or every entry of the bundle stored\n"
     "1  a file did not compile, DIR could not be read, or an entry was not stored\n"
     "   (its key computed here differs: the message names the part)\n"
     "2  bad usage\n"},
    {"info", "info [FILE]\n",
     "Show cujit's and NVRTC's versions, the architectures NVRTC supports, the\n"
     "CUDA driver and its devices, and the cache; with FILE, what a bundle,\n"
     "fatbin, CUBIN or PTX file holds.\n",
     HELP_OPTION,
     "0  shown\n"
     "1  FILE could not be read, or is none of those\n"
     "2  bad usage\n"},
    {"cache", "cache dir | stats | list | clear | prune [--max-size N]\n",
     "Show or manage the kernel cache: its directory, its counters across\n"
     "processes, its entries from least to most recently used; empty it, or\n"
     "shrink it to N (a size such as 500M or 2G; default: the configured\n"
     "limit).\n",
     "  --max-size N              prune down to N bytes (K, M or G suffixes)\n" HELP_OPTION,
     "0  done\n"
     "1  there is no usable cache directory, or it could not be read\n"
     "2  bad usage\n"},
    {"explain",
     "explain FILE.cu [--arch ARCH] [-I DIR] [-D NAME[=VAL]] [--no-cache]\n"
     "        [-- NVRTC options...]\n",
     "Say, without compiling, whether compiling FILE.cu with these options\n"
     "would be a cache hit and which tier would serve it; for a miss, the\n"
     "nearest entry and each part of the key that differs. It takes compile's\n"
     "options (those that choose the output change nothing).\n",
     "  --arch ARCH               the target, as for compile\n"
     "  -I, --include-path DIR    look for included headers in DIR too\n"
     "  -D, --define NAME[=VAL]   define a macro\n"
     "  --no-cache                explain a compile that bypasses the cache\n" HELP_OPTION
     "  -- NVRTC options...       the options given to NVRTC\n",
     "0  explained\n"
     "1  FILE could not be read, or the cache could not be asked\n"
     "2  bad usage, an option NVRTC does not know, or a target it does not support\n"},
    {"verify", "verify [--sample N | --all]\n",
     "Compile cache entries again (10 chosen at random, N, or all) from the\n"
     "inputs they record and compare PTX, CUBIN and lowered names byte for\n"
     "byte; an entry whose inputs are gone is skipped, saying why.\n",
     "  --sample N                verify N entries chosen at random (default: 10)\n"
     "  --all                     verify every entry\n" HELP_OPTION,
     "0  every entry verified matched (or was skipped)\n"
     "1  an entry compiled again to other bytes, or the cache could not be read\n"
     "2  bad usage\n"},
};

static const command_help *find(const char *name) {
  size_t i;
  for (i = 0; name && i < CJ_CLI_COUNT(commands); i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

/* Prints each line of `text`, the first after `first`, the others after `rest`. */
static void print_lines(FILE *f, const char *first, const char *rest, const char *text) {
  const char *end;
  for (; (end = strchr(text, '\n')) != NULL; text = end + 1, first = rest)
    cli_print(f, "%s%.*s\n", first, (int)(end - text), text);
}

/* A synopsis: a line that starts with the command's name after `first` (the first line)
 * or `next`; a continuation line, which starts with spaces, after `indent`. */
static void print_synopsis(FILE *f, const char *first, const char *next, const char *indent,
                           const char *text) {
  const char *end;
  for (; (end = strchr(text, '\n')) != NULL; text = end + 1, first = next)
    cli_print(f, "%s%.*s\n", *text == ' ' ? indent : first, (int)(end - text), text);
}

static void print_overview(FILE *f) {
  size_t i;
  cli_print(f, "usage: cujit <command> [arguments]\n\ncommands:\n");
  for (i = 0; i < CJ_CLI_COUNT(commands); i++) {
    print_synopsis(f, "  ", "  ", "  ", commands[i].synopsis);
    print_lines(f, "      ", "      ", commands[i].summary);
  }
  cli_print(f,
            "\noptions:\n"
            "  -h, --help     show this help ('cujit COMMAND --help': a command's options)\n"
            "  -V, --version  show cujit's version\n"
            "\nexit status: 0 success, 1 failure, 2 bad usage (each command's help says more)\n");
}

int cli_help(FILE *f, const char *command) {
  const command_help *c = find(command);
  if (!command) {
    print_overview(f);
    return 0;
  }
  if (!c) return -1;
  print_synopsis(f, "usage: cujit ", "       cujit ", "             ", c->synopsis);
  cli_print(f, "\n");
  print_lines(f, "", "", c->summary);
  cli_print(f, "\noptions:\n");
  print_lines(f, "", "", c->options);
  cli_print(f, "\n");
  cli_print(f, "exit status:\n");
  print_lines(f, "  ", "  ", c->status);
  return 0;
}

int cli_asks_help(int argc, char **argv) {
  int i;
  for (i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return 1;
  return 0;
}
