/* squid_cli: the bloomgate-squid program (docs/gateways.md, bloomgate-squid(1)):
 * its command line and exit statuses. Main thread. */
#ifndef BLOOMGATE_SQUID_CLI_H
#define BLOOMGATE_SQUID_CLI_H

/* Parse the options and run the helper until Squid closes its stdin. Exit
 * status: 0, 1 (Squid's side failed), 2 (bad usage). */
int squid_main(int argc, char **argv);

#endif
