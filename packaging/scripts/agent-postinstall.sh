#!/bin/sh
# lookahead-agent %post: what %systemd_post does. On first install, apply the
# preset (enabled or not as the host's presets say; not started). On upgrade,
# only reload systemd so the new unit is seen. $1 is 1 on install, 2+ on upgrade.
unit=lookahead-agent.service
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload >/dev/null 2>&1 || :
fi
if [ "${1:-1}" -eq 1 ] && command -v systemctl >/dev/null 2>&1; then
	systemctl --no-reload preset "$unit" >/dev/null 2>&1 || :
fi
exit 0
