#!/bin/sh
# lookahead-agent %postun: what %systemd_postun_with_restart does. After an
# upgrade ($1 >= 1), restart the service if it was running, so the new
# binary takes over; after erase, just reload systemd. The service user,
# the state directory's contents and an edited config are kept on erase.
unit=lookahead-agent.service
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload >/dev/null 2>&1 || :
	if [ "${1:-0}" -ge 1 ]; then
		systemctl try-restart "$unit" >/dev/null 2>&1 || :
	fi
fi
exit 0
