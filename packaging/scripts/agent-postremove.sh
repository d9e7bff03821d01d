#!/bin/sh
# lookahead-agent post-uninstall: what %systemd_postun_with_restart does.
# After an upgrade, restart the service if it was running so the new binary
# takes over; after erase, just reload systemd. The service user, the state
# directory's contents and an edited config are kept on erase.
# RPM passes $1 = 1+ on upgrade, 0 on erase; dpkg passes "upgrade".
unit=lookahead-agent.service
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload >/dev/null 2>&1 || :
	case "$1" in
	[1-9]* | upgrade) systemctl try-restart "$unit" >/dev/null 2>&1 || : ;;
	esac
fi
exit 0
