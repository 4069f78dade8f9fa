/* daemon: bloomgated's start-up order, main loop and shutdown. Main thread.
 * Order (after memcached): parse the command line, read the config, load the
 * filters, bind every listener, write the pidfile, drop privileges, start the
 * worker threads, tell systemd READY=1, then wait for signals. */
#ifndef BLOOMGATE_DAEMON_H
#define BLOOMGATE_DAEMON_H

int daemon_main(int argc, char **argv);

#endif
