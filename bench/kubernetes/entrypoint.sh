#!/bin/sh
# Runs ringstar.jar with the container's arguments. MASTER_ADDR is a Kubernetes DNS name that exists
# only once rank 0's pod has an address, and every rank resolves it once, at start, so wait for it
# first: at most RINGSTAR_DNS_WAIT seconds (default 600). The JVM flags the transports need are in
# the jar's manifest; JAVA_OPTS adds others (-Xmx, ...).
set -eu
if [ -n "${MASTER_ADDR:-}" ]; then
    waited=0
    until getent hosts "$MASTER_ADDR" > /dev/null; do
        if [ "$waited" -ge "${RINGSTAR_DNS_WAIT:-600}" ]; then
            echo "ringstar: MASTER_ADDR=$MASTER_ADDR does not resolve after ${waited} s; is rank 0's pod running?" >&2
            exit 1
        fi
        sleep 2
        waited=$((waited + 2))
    done
fi
# shellcheck disable=SC2086 # JAVA_OPTS holds several flags
exec java ${JAVA_OPTS:-} -jar /opt/ringstar/ringstar.jar "$@"
