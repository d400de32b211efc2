#!/usr/bin/env bash
# Real OpenStack services for Magnetar's conformance tests, from Debian 12's packages, on
# 127.0.0.1 only: MariaDB, RabbitMQ, Keystone, Glance, Placement, Nova (fake hypervisor, three
# compute hosts), Neutron (ML2, no L2 agent), Octavia (no-op drivers), Cinder (fake driver).
#
#   .ci/openstack/start.sh          install (first time), configure, start; prints the openrc path
#   .ci/openstack/start.sh stop     stop what it started
#
# When a Keystone already answers on 127.0.0.1:5000 and MAGNETAR_REAL_OPENSTACK names its admin
# openrc/clouds.yaml, nothing is started: those services are used as they are.
# State, configuration and logs: $OS_BASE (default /var/lib/magnetar-openstack).
set -euo pipefail
OS_BASE=${OS_BASE:-/var/lib/magnetar-openstack}
HERE=$(cd "$(dirname "$0")" && pwd)
PW=${OS_TEST_PASSWORD:-magnetar-ci}
KS=http://127.0.0.1:5000
MQ=rabbit://openstack:$PW@127.0.0.1:5672/
export PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive
say() { printf '[openstack %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
alive() { [ -f "$OS_BASE/run/$1.pid" ] && kill -0 "$(cat "$OS_BASE/run/$1.pid")" 2>/dev/null; }
await() { for _ in $(seq 1 $(($2 * 2))); do curl -s -o /dev/null -m 2 "$1" && return 0; sleep 0.5; done; say "no answer from $1"; return 1; }
DAEMONS="cinder-volume cinder-scheduler cinder-api octavia-housekeeping octavia-health-manager octavia-worker
  octavia-api neutron-server nova-compute nova-compute-2 nova-compute-3 nova-scheduler nova-conductor nova-api
  placement glance-api keystone"

if [ "${1:-start}" = stop ]; then
  for d in $DAEMONS; do alive "$d" && { kill -TERM "$(cat "$OS_BASE/run/$d.pid")" || true; }; rm -f "$OS_BASE/run/$d.pid"; done
  [ -f "$OS_BASE/run/rabbitmq.ours" ] && { rabbitmqctl -q stop >/dev/null 2>&1 || true; rm -f "$OS_BASE/run/rabbitmq.ours"; }
  [ -f "$OS_BASE/run/mariadb.ours" ] && { /etc/init.d/mariadb stop >/dev/null || true; rm -f "$OS_BASE/run/mariadb.ours"; }
  exit 0
fi

if [ -n "${MAGNETAR_REAL_OPENSTACK:-}" ] && [ -f "$MAGNETAR_REAL_OPENSTACK" ] && curl -s -o /dev/null -m 3 $KS/v3; then
  say "using the running services ($MAGNETAR_REAL_OPENSTACK)"
  echo "$MAGNETAR_REAL_OPENSTACK"
  exit 0
fi

# --- packages: no postinst may configure a database, register endpoints or start a daemon ------
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
mkdir -p /etc/rabbitmq
printf 'NODE_IP_ADDRESS=127.0.0.1\nNODE_PORT=5672\nNODENAME=rabbit@localhost\nERL_EPMD_ADDRESS=127.0.0.1\n' > /etc/rabbitmq/rabbitmq-env.conf
PKGS="mariadb-server rabbitmq-server python3-pymysql uwsgi-plugin-python3 curl keystone python3-openstackclient
  glance-api placement-api nova-api nova-conductor nova-scheduler python3-nova neutron-server octavia-api
  octavia-worker octavia-health-manager octavia-housekeeping cinder-api cinder-scheduler python3-cinder"
need=""
for p in $PKGS; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need="$need $p"; done
if [ -n "$need" ]; then
  say "installing:$need"
  for s in keystone glance nova placement neutron octavia cinder; do
    echo "$s-common $s/configure_db boolean false"
    for p in "$s" "$s-api" "$s-server"; do echo "$p $p/register-endpoint boolean false"; echo "$p $s/register-endpoint boolean false"; done
  done | debconf-set-selections
  echo "neutron-common neutron/plugin-select select ml2" | debconf-set-selections
  echo "keystone keystone/create-admin-tenant boolean false" | debconf-set-selections
  apt-get update -qq
  apt-get install -y -q --no-install-recommends -o Dpkg::Options::=--force-confold $need >/dev/null
fi

mkdir -p "$OS_BASE"/{run,log,etc,lock,keys/fernet,keys/credential,glance,nova,neutron,cinder,octavia/ca,octavia/certs}
chmod 0777 "$OS_BASE/log" "$OS_BASE/lock"
chown keystone:keystone "$OS_BASE/keys/fernet" "$OS_BASE/keys/credential"
chown glance:glance "$OS_BASE/glance"; chown nova:nova "$OS_BASE/nova"; chown neutron:neutron "$OS_BASE/neutron"
chown cinder:cinder "$OS_BASE/cinder"; chown -R octavia:octavia "$OS_BASE/octavia"

# --- MariaDB and RabbitMQ ----------------------------------------------------------------------
printf '[mysqld]\nbind-address = 127.0.0.1\nmax_connections = 1000\n' > /etc/mysql/mariadb.conf.d/99-magnetar-ci.cnf
mysqladmin ping >/dev/null 2>&1 || { say "starting mariadb"; /etc/init.d/mariadb start >/dev/null; touch "$OS_BASE/run/mariadb.ours"; }
db() { echo "mysql+pymysql://$1:$PW@127.0.0.1:3306/$2?charset=utf8"; }
for pair in keystone:keystone glance:glance placement:placement nova:nova_api nova:nova nova:nova_cell0 \
  neutron:neutron octavia:octavia cinder:cinder; do
  u=${pair%%:*} d=${pair#*:}
  mysql -u root -e "CREATE DATABASE IF NOT EXISTS $d CHARACTER SET utf8;
    CREATE USER IF NOT EXISTS '$u'@'127.0.0.1' IDENTIFIED BY '$PW'; ALTER USER '$u'@'127.0.0.1' IDENTIFIED BY '$PW';
    GRANT ALL PRIVILEGES ON $d.* TO '$u'@'127.0.0.1';"
done
if ! rabbitmqctl -q status >/dev/null 2>&1; then
  say "starting rabbitmq"
  mkdir -p /var/run/rabbitmq && chown rabbitmq:rabbitmq /var/run/rabbitmq
  setsid rabbitmq-server </dev/null >/dev/null 2>&1 &
  touch "$OS_BASE/run/rabbitmq.ours"
  for _ in $(seq 1 120); do rabbitmqctl -q await_startup >/dev/null 2>&1 && break; sleep 1; done
fi
rabbitmqctl -q list_users | awk '{print $1}' | grep -qx openstack || rabbitmqctl -q add_user openstack "$PW"
rabbitmqctl -q set_permissions -p / openstack '.*' '.*' '.*'

run() { # name user program args… (background, pidfile, output to the log dir)
  local name=$1 user=$2; shift 2
  alive "$name" && return 0
  say "starting $name"
  start-stop-daemon --start --quiet --background --make-pidfile --pidfile "$OS_BASE/run/$name.pid" \
    --chuid "$user:$user" --chdir "$OS_BASE" --output "$OS_BASE/log/$name.out" --startas "$1" -- "${@:2}"
}
as() { su "$1" -s /bin/sh -c "$2" >> "$OS_BASE/log/manage.out" 2>&1; }
uwsgi_ini() { # name user port wsgi-file env
  cat > "$OS_BASE/etc/$1-uwsgi.ini" <<EOF
[uwsgi]
http-socket = 127.0.0.1:$3
plugins = python3
master = true
processes = 2
threads = 4
lazy-apps = true
enable-threads = true
die-on-term = true
buffer-size = 65535
# uwsgi's http-socket closes every connection after its response; say so, or clients that reuse
# connections (keystoneauth, Node's fetch) meet resets
add-header = Connection: close
uid = $2
gid = $2
chdir = $OS_BASE
env = $5
wsgi-file = $4
pidfile = $OS_BASE/run/$1.pid
daemonize = $OS_BASE/log/$1-uwsgi.log
EOF
}
auth_section() { # section user
  printf '[%s]\nwww_authenticate_uri = %s\nauth_url = %s\nauth_type = password\nusername = %s\npassword = %s\nproject_name = service\nuser_domain_name = Default\nproject_domain_name = Default\nregion_name = RegionOne\n' \
    "$1" "$KS" "$KS" "$2" "$PW"
}

# --- Keystone ------------------------------------------------------------------------------------
mkdir -p "$OS_BASE/etc/keystone"
cat > "$OS_BASE/etc/keystone/keystone.conf" <<EOF
[DEFAULT]
log_dir = $OS_BASE/log
[database]
connection = $(db keystone keystone)
[token]
provider = fernet
[fernet_tokens]
key_repository = $OS_BASE/keys/fernet
[fernet_receipts]
key_repository = $OS_BASE/keys/fernet
[credential]
key_repository = $OS_BASE/keys/credential
EOF
chown -R root:keystone "$OS_BASE/etc/keystone"; chmod 0640 "$OS_BASE/etc/keystone/keystone.conf"
KM="keystone-manage --config-file $OS_BASE/etc/keystone/keystone.conf"
as keystone "$KM db_sync"
[ -f "$OS_BASE/keys/fernet/0" ] || $KM fernet_setup --keystone-user keystone --keystone-group keystone >/dev/null 2>&1
[ -f "$OS_BASE/keys/credential/0" ] || $KM credential_setup --keystone-user keystone --keystone-group keystone >/dev/null 2>&1
as keystone "$KM bootstrap --bootstrap-password $PW --bootstrap-public-url $KS/v3/ --bootstrap-internal-url $KS/v3/ --bootstrap-admin-url $KS/v3/ --bootstrap-region-id RegionOne"
uwsgi_ini keystone keystone 5000 /usr/bin/keystone-wsgi-public "OS_KEYSTONE_CONFIG_DIR=$OS_BASE/etc/keystone"
alive keystone || { say "starting keystone"; uwsgi_python311 --ini "$OS_BASE/etc/keystone-uwsgi.ini"; }
await $KS/v3 60
cat > "$OS_BASE/admin-openrc" <<EOF
export OS_AUTH_URL=$KS/v3
export OS_IDENTITY_API_VERSION=3
export OS_USERNAME=admin
export OS_PASSWORD=$PW
export OS_PROJECT_NAME=admin
export OS_USER_DOMAIN_NAME=Default
export OS_PROJECT_DOMAIN_NAME=Default
export OS_REGION_NAME=RegionOne
export OS_INTERFACE=public
EOF
# shellcheck disable=SC1091
. "$OS_BASE/admin-openrc"
say "keystone: service users and catalog"
for try in 1 2 3 4; do
  python3 "$HERE/register.py" "$PW" glance:image:http://127.0.0.1:9292 placement:placement:http://127.0.0.1:8778 \
    nova:compute:http://127.0.0.1:8774/v2.1 neutron:network:http://127.0.0.1:9696 \
    octavia:load-balancer:http://127.0.0.1:9876 'cinder:volumev3:http://127.0.0.1:8776/v3/%(project_id)s' \
    >> "$OS_BASE/log/register.out" 2>&1 && break
  [ $try = 4 ] && { tail -n 20 "$OS_BASE/log/register.out" >&2; exit 1; }
  sleep 2
done

# --- Glance --------------------------------------------------------------------------------------
cat > "$OS_BASE/etc/glance-api.conf" <<EOF
[DEFAULT]
bind_host = 127.0.0.1
bind_port = 9292
workers = 1
log_file = $OS_BASE/log/glance-api.log
enabled_backends = file:file
[database]
connection = $(db glance glance)
[glance_store]
default_backend = file
[file]
filesystem_store_datadir = $OS_BASE/glance/images/
[os_glance_staging_store]
filesystem_store_datadir = $OS_BASE/glance/staging/
[os_glance_tasks_store]
filesystem_store_datadir = $OS_BASE/glance/tasks/
[paste_deploy]
flavor = keystone
config_file = /etc/glance/glance-api-paste.ini
[oslo_concurrency]
lock_path = $OS_BASE/lock
$(auth_section keystone_authtoken glance)
EOF
as glance "glance-manage --config-file $OS_BASE/etc/glance-api.conf db_sync"
run glance-api glance /usr/bin/glance-api --config-file "$OS_BASE/etc/glance-api.conf"

# --- Placement -----------------------------------------------------------------------------------
mkdir -p "$OS_BASE/etc/placement"
printf '[placement_database]\nconnection = %s\n[api]\nauth_strategy = keystone\n%s\n' \
  "$(db placement placement)" "$(auth_section keystone_authtoken placement)" > "$OS_BASE/etc/placement/placement.conf"
as placement "placement-manage --config-file $OS_BASE/etc/placement/placement.conf db sync"
uwsgi_ini placement placement 8778 /usr/bin/placement-api "OS_PLACEMENT_CONFIG_DIR=$OS_BASE/etc/placement"
alive placement || { say "starting placement"; uwsgi_python311 --ini "$OS_BASE/etc/placement-uwsgi.ini"; }

# --- Neutron: ML2 with the openvswitch mechanism and no agent (agent rows are written below) -----
cat > "$OS_BASE/etc/neutron.conf" <<EOF
[DEFAULT]
bind_host = 127.0.0.1
bind_port = 9696
api_workers = 1
rpc_workers = 1
rpc_state_report_workers = 0
log_file = $OS_BASE/log/neutron-server.log
state_path = $OS_BASE/neutron
core_plugin = ml2
service_plugins = router
transport_url = $MQ
agent_down_time = 2000000
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
api_paste_config = /etc/neutron/api-paste.ini
[database]
connection = $(db neutron neutron)
[oslo_concurrency]
lock_path = $OS_BASE/lock
[oslo_messaging_notifications]
driver = noop
$(auth_section keystone_authtoken neutron)
$(auth_section nova neutron)
[ml2]
type_drivers = flat,vxlan
tenant_network_types = vxlan
mechanism_drivers = openvswitch
extension_drivers = port_security
[ml2_type_flat]
flat_networks = public
[ml2_type_vxlan]
vni_ranges = 1:1000
EOF
as neutron "neutron-db-manage --config-file $OS_BASE/etc/neutron.conf upgrade heads"
run neutron-server neutron /usr/bin/neutron-server --config-file "$OS_BASE/etc/neutron.conf"

# --- Nova: the fake driver (servers go ACTIVE, no guest runs) ------------------------------------
cat > "$OS_BASE/etc/nova.conf" <<EOF
[DEFAULT]
host = ci-compute
my_ip = 127.0.0.1
state_path = $OS_BASE/nova
log_dir = $OS_BASE/log
transport_url = $MQ
compute_driver = fake.FakeDriver
enabled_apis = osapi_compute
osapi_compute_listen = 127.0.0.1
osapi_compute_workers = 1
[api]
auth_strategy = keystone
[wsgi]
api_paste_config = /etc/nova/api-paste.ini
[api_database]
connection = $(db nova nova_api)
[database]
connection = $(db nova nova)
[conductor]
workers = 1
[scheduler]
workers = 1
discover_hosts_in_cells_interval = 10
[oslo_concurrency]
lock_path = $OS_BASE/lock
[oslo_messaging_notifications]
driver = noop
[vnc]
enabled = false
$(auth_section keystone_authtoken nova)
$(auth_section placement nova)
$(auth_section neutron nova)
$(auth_section service_user nova)
send_service_user_token = true
EOF
chown root:nova "$OS_BASE/etc/nova.conf"; chmod 0640 "$OS_BASE/etc/nova.conf"
NM="nova-manage --config-file $OS_BASE/etc/nova.conf"
as nova "$NM api_db sync"
cells=$(su nova -s /bin/sh -c "$NM cell_v2 list_cells" 2>/dev/null || true)
grep -q ' cell0 ' <<<"$cells" || as nova "$NM cell_v2 map_cell0 --database_connection '$(db nova nova_cell0)'"
grep -q ' cell1 ' <<<"$cells" || as nova "$NM cell_v2 create_cell --name cell1 --transport-url '$MQ' --database_connection '$(db nova nova)'"
as nova "$NM db sync"
NC="--config-file $OS_BASE/etc/nova.conf"
run nova-conductor nova /usr/bin/nova-conductor $NC
run nova-scheduler nova /usr/bin/nova-scheduler $NC
# nova-compute without its hypervisor packages: the same entry point from python3-nova
# (started through python3 -c, oslo.log would name its file "<string>.log", shared with cinder-volume)
run nova-compute nova /usr/bin/python3 -c 'import sys; sys.argv[0] = "nova-compute"; from nova.cmd.compute import main; sys.exit(main())' $NC \
  --log-file "$OS_BASE/log/nova-compute.log"
run nova-api nova /usr/bin/nova-api $NC

# --- Octavia: no-op amphora, compute and network drivers -----------------------------------------
if [ ! -f "$OS_BASE/octavia/ca/client.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -days 3650 -subj /CN=ci-octavia-ca -passout "pass:$PW" \
    -keyout "$OS_BASE/octavia/ca/ca.key" -out "$OS_BASE/octavia/ca/ca.pem" 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -days 3650 -nodes -subj /CN=ci-octavia-client \
    -keyout "$OS_BASE/octavia/ca/client.key" -out "$OS_BASE/octavia/ca/client.crt" 2>/dev/null
  cat "$OS_BASE/octavia/ca/client.crt" "$OS_BASE/octavia/ca/client.key" > "$OS_BASE/octavia/ca/client.pem"
  chown -R octavia:octavia "$OS_BASE/octavia"
fi
cat > "$OS_BASE/etc/octavia.conf" <<EOF
[DEFAULT]
log_file = $OS_BASE/log/octavia.log
transport_url = $MQ
[api_settings]
bind_host = 127.0.0.1
bind_port = 9876
enabled_provider_drivers = amphora:'Amphora (no-op drivers)', noop_driver:'No-op provider'
default_provider_driver = amphora
[database]
connection = $(db octavia octavia)
[controller_worker]
workers = 1
amphora_driver = amphora_noop_driver
compute_driver = compute_noop_driver
network_driver = network_noop_driver
volume_driver = volume_noop_driver
image_driver = image_noop_driver
loadbalancer_topology = SINGLE
amp_flavor_id = 1
amp_boot_network_list = 00000000-0000-0000-0000-000000000000
client_ca = $OS_BASE/octavia/ca/ca.pem
[haproxy_amphora]
server_ca = $OS_BASE/octavia/ca/ca.pem
client_cert = $OS_BASE/octavia/ca/client.pem
[task_flow]
jobboard_enabled = false
[health_manager]
bind_ip = 127.0.0.1
bind_port = 5555
controller_ip_port_list = 127.0.0.1:5555
heartbeat_key = ci
[certificates]
cert_manager = local_cert_manager
storage_path = $OS_BASE/octavia/certs
ca_certificate = $OS_BASE/octavia/ca/ca.pem
ca_private_key = $OS_BASE/octavia/ca/ca.key
ca_private_key_passphrase = $PW
[oslo_messaging]
topic = octavia_prov
[oslo_concurrency]
lock_path = $OS_BASE/lock
$(auth_section keystone_authtoken octavia)
$(auth_section service_auth octavia)
EOF
chown root:octavia "$OS_BASE/etc/octavia.conf"; chmod 0640 "$OS_BASE/etc/octavia.conf"
as octavia "octavia-db-manage --config-file $OS_BASE/etc/octavia.conf upgrade head"
for d in octavia-worker octavia-health-manager octavia-housekeeping octavia-api; do
  run $d octavia /usr/bin/$d --config-file "$OS_BASE/etc/octavia.conf"
done

# --- Cinder: the fake volume driver ----------------------------------------------------------------
cat > "$OS_BASE/etc/cinder.conf" <<EOF
[DEFAULT]
host = ci-cinder
my_ip = 127.0.0.1
osapi_volume_listen = 127.0.0.1
osapi_volume_workers = 1
log_dir = $OS_BASE/log
state_path = $OS_BASE/cinder
transport_url = $MQ
auth_strategy = keystone
api_paste_config = /etc/cinder/api-paste.ini
enabled_backends = fake
default_volume_type = fake
[fake]
volume_driver = cinder.tests.fake_driver.FakeLoggingVolumeDriver
volume_backend_name = fake
[database]
connection = $(db cinder cinder)
[oslo_concurrency]
lock_path = $OS_BASE/lock
[oslo_messaging_notifications]
driver = noop
$(auth_section keystone_authtoken cinder)
service_token_roles_required = true
service_token_roles = service
EOF
chown root:cinder "$OS_BASE/etc/cinder.conf"; chmod 0640 "$OS_BASE/etc/cinder.conf"
as cinder "cinder-manage --config-file $OS_BASE/etc/cinder.conf db sync"
CC="--config-file $OS_BASE/etc/cinder.conf"
run cinder-scheduler cinder /usr/bin/cinder-scheduler $CC
run cinder-volume cinder /usr/bin/python3 -c 'import sys; sys.argv[0] = "cinder-volume"; from cinder.cmd.volume import main; sys.exit(main())' $CC \
  --log-file "$OS_BASE/log/cinder-volume.log"
run cinder-api cinder /usr/bin/cinder-api $CC

# --- readiness, the agent row of the first compute host, two more hosts (three zones) -------------
for port in 9292 8778 9696 8774 9876 8776; do await "http://127.0.0.1:$port/" 120; done
"$HERE/compute-hosts.sh" "$OS_BASE/etc/nova.conf" 3 "$OS_BASE/run" >&2
# The scheduler only uses hosts whose nova-compute reports in; wait until all three do.
for _ in $(seq 1 60); do
  [ "$(openstack compute service list --service nova-compute -f value -c State 2>/dev/null | grep -c '^up$')" -ge 3 ] && break
  sleep 2
done
openstack volume type show fake >/dev/null 2>&1 || openstack volume type create --public --property volume_backend_name=fake fake >/dev/null
# Up once is up. grep reads the whole answer (not -q, which stops at the first match): under
# pipefail, the CLI killed by the closed pipe made a found match read as a failure.
volume_up=0
for _ in $(seq 1 60); do
  if openstack volume service list -f value -c Binary -c State 2>/dev/null | grep "cinder-volume up" >/dev/null; then
    volume_up=1
    break
  fi
  sleep 2
done
[ "$volume_up" = 1 ] ||
  { say "cinder-volume is not up:"; tail -n 20 "$OS_BASE/log/cinder-volume.out" "$OS_BASE/log/cinder-volume.log" >&2; exit 1; }
say "ready"
echo "$OS_BASE/admin-openrc"
