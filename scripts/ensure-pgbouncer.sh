#!/usr/bin/env bash
# Installs Debian's pgbouncer when it is missing: the test suite runs a subset of its tests through a
# PgBouncer of its own (test/helpers/pgbouncer.ts starts it; the Debian service is never used).
set -euo pipefail
if command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "pgbouncer is missing: install it (Debian: apt-get install pgbouncer) and run the tests again" >&2
  exit 1
fi
echo "installing pgbouncer (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
# Another apt run (a parallel install on this machine) holds the locks for a while: wait, then try again.
for attempt in 1 2 3; do
  if apt-get update -qq -o DPkg::Lock::Timeout=120 >&2 &&
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=120 pgbouncer >&2; then
    exit 0
  fi
  echo "apt-get failed (attempt $attempt); trying again" >&2
  sleep 5
done
exit 1
