#!/bin/sh
# lookahead-broker %pre: create the service user before files are laid down,
# so that rpm can give /var/lib/lookahead/broker and the config to it.
# systemd-sysusers is preferred (same entry as
# /usr/lib/sysusers.d/lookahead-broker.conf); groupadd/useradd is the fallback
# for hosts without it. Idempotent.
user=lookahead-broker
home=/var/lib/lookahead/broker
if command -v systemd-sysusers >/dev/null 2>&1; then
	echo 'u '"$user"' - "lookahead grid broker" '"$home"' /sbin/nologin' |
		systemd-sysusers --replace=/usr/lib/sysusers.d/$user.conf - && exit 0
fi
if ! getent group "$user" >/dev/null 2>&1; then
	groupadd -r "$user" || exit 1
fi
if ! getent passwd "$user" >/dev/null 2>&1; then
	useradd -r -g "$user" -d "$home" -M -s /sbin/nologin -c "lookahead grid broker" "$user" || exit 1
fi
exit 0
