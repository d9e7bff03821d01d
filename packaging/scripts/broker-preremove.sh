#!/bin/sh
# lookahead-broker %preun: what %systemd_preun does. On erase ($1 = 0), stop
# and disable the service; on upgrade ($1 >= 1) leave it running.
unit=lookahead-broker.service
if [ "${1:-0}" -eq 0 ] && command -v systemctl >/dev/null 2>&1; then
	systemctl --no-reload disable --now "$unit" >/dev/null 2>&1 || :
fi
exit 0
