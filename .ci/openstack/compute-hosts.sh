#!/usr/bin/env bash
# Start extra nova-compute services (fake driver) next to an existing one, so the test cloud has
# one compute host per availability zone (Nova puts a host in at most one zone).
#
#   compute-hosts.sh NOVA_CONF COUNT [STATE_DIR]
#
# Hosts are named <host of NOVA_CONF>-2 … -COUNT. Each gets a Neutron agent row of its own (the
# test cloud runs no L2 agent; the row lets Neutron bind ports on that host), then the cell
# discovers it (the first host gets its agent row too). Idempotent: running services are left alone.
set -euo pipefail
conf=${1:?nova.conf path}
count=${2:?number of compute hosts}
state=${3:-$(dirname "$conf")/../run}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
base_host=$(awk -F' *= *' '/^\[DEFAULT\]/{d=1;next} /^\[/{d=0} d && $1=="host"{print $2}' "$conf")
base_host=${base_host:-$(hostname)}
mkdir -p "$state"
for i in $(seq 1 "$count"); do
  host="$base_host-$i"; [ "$i" = 1 ] && host=$base_host
  pidfile="$state/nova-compute-$i.pid"
  mysql -u root neutron <<SQL
INSERT INTO agents (id, agent_type, \`binary\`, topic, host, admin_state_up, created_at, started_at,
  heartbeat_timestamp, description, configurations, \`load\`, availability_zone, resources_synced)
SELECT UUID(), 'Open vSwitch agent', 'neutron-openvswitch-agent', 'N/A', '$host', 1, UTC_TIMESTAMP(),
  UTC_TIMESTAMP(), UTC_TIMESTAMP(), 'test compute host (no real agent)',
  '{"bridge_mappings": {"public": "br-ex"}, "tunnel_types": ["vxlan"], "tunneling_ip": "127.0.0.1", "integration_bridge": "br-int", "datapath_type": "system", "ovs_hybrid_plug": false, "l2_population": false}',
  0, NULL, 1 FROM DUAL
WHERE NOT EXISTS (SELECT 1 FROM agents WHERE host = '$host' AND agent_type = 'Open vSwitch agent');
UPDATE agents SET heartbeat_timestamp = UTC_TIMESTAMP() WHERE host = '$host';
SQL
  [ "$i" = 1 ] && continue   # the first host is the one NOVA_CONF already runs
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then continue; fi
  override="$state/nova-compute-$i.conf"
  printf '[DEFAULT]\nhost = %s\n' "$host" > "$override"
  chmod 0644 "$override"
  log=$(dirname "$state")/log/nova-compute-$i.log
  mkdir -p "$(dirname "$log")"
  start-stop-daemon --start --quiet --background --make-pidfile --pidfile "$pidfile" --chuid nova:nova \
    --startas /usr/bin/python3 -- -c 'import sys; sys.argv[0] = "nova-compute"; from nova.cmd.compute import main; sys.exit(main())' \
    --config-file "$conf" --config-file "$override" --log-file "$log"
  echo "started nova-compute host $host (pid $(cat "$pidfile"))"
done
# wait until every host reports up, then map them into the cell
for _ in $(seq 1 60); do
  up=$(su nova -s /bin/sh -c "nova-manage --config-file $conf cell_v2 list_hosts" 2>/dev/null | grep -c "$base_host" || true)
  [ "$up" -ge "$count" ] && break
  su nova -s /bin/sh -c "nova-manage --config-file $conf cell_v2 discover_hosts" >/dev/null 2>&1 || true
  sleep 2
done
