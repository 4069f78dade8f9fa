/* notify: the systemd readiness protocol (sd_notify), spoken directly: one
 * datagram to $NOTIFY_SOCKET. No libsystemd. Main thread or reload thread. */
#ifndef BLOOMGATE_NOTIFY_H
#define BLOOMGATE_NOTIFY_H

/* Send "READY=1", "STOPPING=1", "RELOADING=1\nMONOTONIC_USEC=..." etc.
 * 0 if sent or there is no $NOTIFY_SOCKET; -1 on a send error. */
int notify_send(const char *msg);

/* "RELOADING=1\nMONOTONIC_USEC=<now>" as systemd's Type=notify-reload wants. */
int notify_reloading(void);

#endif
