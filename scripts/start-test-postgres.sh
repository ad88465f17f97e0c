#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the test suite and prints shell exports on stdout (logs on
# stderr): WITNESS_TEST_PG_URL (the database the tests use) and WITNESS_TEST_PG_DIR (the cluster's folder).
#
#   eval "$(bash scripts/start-test-postgres.sh)"
#   npm test
#   bash "$WITNESS_TEST_PG_DIR/stop.sh"
#
# The cluster lives in a fresh directory under /tmp, listens on 127.0.0.1 on a free port (unix socket in
# the same directory) and trusts local connections: it is for tests only and holds nothing worth keeping.
# Installs Debian's postgresql first when no server binaries are present. Run as root (initdb refuses to
# run as root, so the server runs as the `postgres` user).
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin" # runuser lives there; a minimal PATH may lack it

log() { echo "start-test-postgres: $*" >&2; }

if ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
  log "installing Debian's postgresql"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >&2
  apt-get install -y postgresql >&2
fi
bin_dir="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"

dir="$(mktemp -d /tmp/witness-pg.XXXXXX)"
trap 'status=$?; if [ "$status" -ne 0 ]; then rm -rf "$dir"; fi' EXIT
chown postgres:postgres "$dir"
chmod 700 "$dir"
port="$(node -e 'const s=require("node:net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"

cd /tmp # the postgres user may not be able to enter the caller's directory
runuser -u postgres -- "$bin_dir/initdb" --pgdata="$dir/data" --auth=trust --username=postgres \
  --encoding=UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 || {
  cat "$dir/initdb.log" >&2
  exit 1
}
runuser -u postgres -- "$bin_dir/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait \
  --options="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200 -c fsync=on" \
  start >&2 || {
  cat "$dir/server.log" >&2
  exit 1
}
runuser -u postgres -- "$bin_dir/createdb" --host=127.0.0.1 --port="$port" --username=postgres witness_test >&2
cat >"$dir/stop.sh" <<STOP
#!/usr/bin/env bash
cd /tmp && "$(command -v runuser)" -u postgres -- "$bin_dir/pg_ctl" --pgdata="$dir/data" --mode=fast --wait stop >&2 && rm -rf "$dir"
STOP
log "server running from $dir on 127.0.0.1:$port (stop: bash $dir/stop.sh)"
echo "export WITNESS_TEST_PG_URL=postgres://postgres@127.0.0.1:$port/witness_test"
echo "export WITNESS_TEST_PG_DIR=$dir"
