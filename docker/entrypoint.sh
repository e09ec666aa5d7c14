#!/bin/sh
# Starts the demo OpenLDAP: installs Debian's slapd on first start, loads
# the chosen fixture and then the demo's accounts and role groups
# (CPACTL_ACCOUNTS) into an empty database (none when CPACTL_FIXTURE is
# set and empty: the consumer, which syncrepl fills; slapadd keeps the load
# out of the history's log), then runs slapd in
# the foreground on port 389 with CPACTL_SLAPD_CONF (default
# /cpactl/slapd.conf).
set -eu
if [ ! -x /usr/sbin/slapd ]; then
  apt-get update -qq
  echo "slapd slapd/no_configuration boolean true" | debconf-set-selections
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slapd ldap-utils
fi
mkdir -p /var/run/slapd
conf="${CPACTL_SLAPD_CONF:-/cpactl/slapd.conf}"
# Every database's directory (the provider's history log has its own,
# /var/lib/ldap/accesslog).
for d in $(sed -n 's/^directory //p' "$conf"); do mkdir -p "$d"; done
fixture="${CPACTL_FIXTURE-demo.ldif}"
accounts="${CPACTL_ACCOUNTS-}"
if [ -n "$fixture" ] && [ ! -e /var/lib/ldap/data.mdb ]; then
  # -w writes the contextCSN that consumers sync from.
  slapadd -w -f "$conf" -l "/cpactl/fixtures/$fixture"
  if [ -n "$accounts" ]; then
    slapadd -w -f "$conf" -l "$accounts"
  fi
fi
exec /usr/sbin/slapd -d "${SLAPD_DEBUG:-0}" -h "ldap:///" -f "$conf"
