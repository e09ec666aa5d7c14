#!/bin/sh
# Starts the demo OpenLDAP: installs Debian's slapd on first start, loads
# the chosen fixture and then the demo's accounts and role groups
# (CPACTL_ACCOUNTS) into an empty database (none when CPACTL_FIXTURE is
# set and empty: the consumer, which syncrepl fills), then runs slapd in
# the foreground on port 389 with CPACTL_SLAPD_CONF (default
# /cpactl/slapd.conf).
set -eu
if [ ! -x /usr/sbin/slapd ]; then
  apt-get update -qq
  echo "slapd slapd/no_configuration boolean true" | debconf-set-selections
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slapd ldap-utils
fi
mkdir -p /var/lib/ldap /var/run/slapd
conf="${CPACTL_SLAPD_CONF:-/cpactl/slapd.conf}"
fixture="${CPACTL_FIXTURE-demo.ldif}"
accounts="${CPACTL_ACCOUNTS-}"
if [ -n "$fixture" ] && [ -z "$(ls -A /var/lib/ldap 2>/dev/null)" ]; then
  # -w writes the contextCSN that consumers sync from.
  slapadd -w -f "$conf" -l "/cpactl/fixtures/$fixture"
  if [ -n "$accounts" ]; then
    slapadd -w -f "$conf" -l "$accounts"
  fi
fi
exec /usr/sbin/slapd -d "${SLAPD_DEBUG:-0}" -h "ldap:///" -f "$conf"
