#!/usr/bin/env bash
# ensure-package.sh PACKAGE PROGRAM: installs Debian's PACKAGE when PROGRAM (a command name or a path) is
# missing. The test suite needs two: pgbouncer (a subset of the tests runs through a PgBouncer of its own,
# test/helpers/pgbouncer.ts; the Debian service is never used) and chromium (Bull Board driven in
# headless Chromium, test/api/board-browser.test.ts; playwright-core brings no browser of its own), plus postfix
# and swaks (mail through a real MTA, test/helpers/postfix.ts: a private instance, never the system's own).
# prometheus brings promtool and a Prometheus server (test/helpers/prometheus.ts: a private instance on its own port and storage).
set -euo pipefail
package="$1"
program="$2"
if command -v "$program" >/dev/null 2>&1 || [ -x "$program" ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "$package is missing: install it (Debian: apt-get install $package) and run the tests again" >&2
  exit 1
fi
echo "installing $package (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
# Postfix's package asks what kind of mail system this is: "No configuration" leaves the system's MTA unset
# (no main.cf, nothing listening on port 25); the tests run an instance of their own with its own config.
if [ "$package" = postfix ]; then
  echo 'postfix postfix/main_mailer_type select No configuration' | debconf-set-selections
  echo 'postfix postfix/mailname string localhost' | debconf-set-selections
fi
# Another apt run (a parallel install on this machine) holds the locks for a while: wait, then try again.
for attempt in 1 2 3; do
  if apt-get update -qq -o DPkg::Lock::Timeout=120 >&2 &&
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=120 "$package" >&2; then
    exit 0
  fi
  echo "apt-get failed (attempt $attempt); trying again" >&2
  sleep 5
done
exit 1
