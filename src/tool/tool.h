/* tool: the `bloomgate` command line (build, info, verify, check, journal, help). Lives in
 * the library so tests drive exactly what ships; main() only calls tool_main.
 * Main thread. */
#ifndef BLOOMGATE_TOOL_H
#define BLOOMGATE_TOOL_H

/* Exit codes: 0 success, 1 runtime error, 2 usage error. */
int tool_main(int argc, char **argv);

#endif
