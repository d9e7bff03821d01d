#!/bin/sh
# lookahead-agent pre-uninstall: what %systemd_preun does. On erase, stop
# and disable the service; on upgrade, leave it running.
# RPM passes $1 = 0 on erase; dpkg passes "remove".
unit=lookahead-agent.service
case "$1" in
0 | remove)
	if command -v systemctl >/dev/null 2>&1; then
		systemctl --no-reload disable --now "$unit" >/dev/null 2>&1 || :
	fi
	;;
esac
exit 0
