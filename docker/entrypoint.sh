#!/bin/sh
# Starts the demo OpenLDAP: installs Debian's slapd on first start, loads
# the chosen fixture into an empty database, then runs slapd in the
# foreground on port 389.
set -eu
if [ ! -x /usr/sbin/slapd ]; then
  apt-get update -qq
  echo "slapd slapd/no_configuration boolean true" | debconf-set-selections
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slapd ldap-utils
fi
mkdir -p /var/lib/ldap /var/run/slapd
if [ -z "$(ls -A /var/lib/ldap 2>/dev/null)" ]; then
  slapadd -f /cpactl/slapd.conf -l "/cpactl/fixtures/${CPACTL_FIXTURE:-demo.ldif}"
fi
exec /usr/sbin/slapd -d "${SLAPD_DEBUG:-0}" -h "ldap:///" -f /cpactl/slapd.conf
