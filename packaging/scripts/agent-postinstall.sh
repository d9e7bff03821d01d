#!/bin/sh
# lookahead-agent post-install: what %systemd_post does. On first install,
# apply the preset (enabled or not as the host's presets say; not started).
# On upgrade, only reload systemd so that the new unit is seen.
# RPM passes $1 = 1 on install, 2+ on upgrade; dpkg passes "configure"
# and the old version in $2 on upgrade.
unit=lookahead-agent.service
case "$1" in
1) first=1 ;;
configure) [ -z "$2" ] && first=1 || first=0 ;;
*) first=0 ;;
esac
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload >/dev/null 2>&1 || :
fi
if [ "$first" = 1 ] && command -v systemctl >/dev/null 2>&1; then
	systemctl --no-reload preset "$unit" >/dev/null 2>&1 || :
fi
exit 0
