#!/bin/bash
# A real Prometheus server scrapes benchd and stores its series.
. "${srcdir:-.}/tests/lib.sh"
BENCHD="$top_builddir/benchd"
"$BENCHD" --help | grep -q -- '--listen' || skip_all "benchd built without libmicrohttpd"
command -v prometheus >/dev/null || skip_all "prometheus not installed (Debian package prometheus)"
command -v curl >/dev/null || skip_all "curl not installed"
own_servers

port=$(free_port 19440)
pport=$(free_port $((port + 1)))
"$BENCHD" -f --listen "127.0.0.1:$port" --token-file "$tmp/token" \
    --sysfs-root "$srcdir/tests/fixtures/sysfs/p3dn" 2>"$tmp/benchd.log" &
pids+=($!)
wait_until 10 curl -sf "http://127.0.0.1:$port/v1/health"
cat > "$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: benchd
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
    --web.listen-address="127.0.0.1:$pport" > "$tmp/prometheus.log" 2>&1 &
pids+=($!)
query() { curl -sf --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1"; }
val() { query "$1" | /usr/bin/python3 -c "import json,sys; r=json.load(sys.stdin)['data']['result']; print(r[0]['value'][1] if r else '')"; }
export pport; export -f query val
check "prometheus stores benchd_build_info" wait_until 60 bash -c "val 'benchd_build_info' | grep -qx 1"
is "the scrape is healthy (up == 1)" "$(val 'up{job="benchd"}')" 1
is "eight GPUs of the recorded p3dn" "$(val 'count(benchd_gpu_info)')" 8
is "the EFA's byte counter, as stored" "$(val 'benchd_nic_receive_bytes_total{device="rdmap16s27"}')" \
   "$(cat "$srcdir/tests/fixtures/sysfs/p3dn/sys/class/infiniband/rdmap16s27/ports/1/hw_counters/rx_bytes")"
check "several scrapes over time" wait_until 30 bash -c "test \"\$(val 'count_over_time(benchd_scrapes_total[1m])')\" -ge 3"
is "every sample of the exposition was taken" "$(val 'scrape_samples_post_metric_relabeling{job="benchd"}')" \
   "$(curl -s "http://127.0.0.1:$port/metrics" | grep -vc '^#')"
done_testing
