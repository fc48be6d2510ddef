#!/bin/bash
# benchd --inventory: the live machine against lscpu and numactl, and the
# recorded machines under tests/fixtures/sysfs against their expected.json.
. "${srcdir:-.}/tests/lib.sh"
BENCHD="$top_builddir/benchd"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

json=$("$BENCHD" --inventory --json); rc=$?
is "live inventory exits 0" "$rc" 0
printf '%s' "$json" > "$tmp/live.json"
field() { /usr/bin/python3 -c "import json,sys; j=json.load(open('$tmp/live.json')); print($1)"; }
if command -v lscpu >/dev/null; then
    is "online CPUs as lscpu counts them" "$(field 'j["cpu"]["online_cpus"]')" "$(lscpu -p=CPU | grep -vc '^#')"
    is "sockets as lscpu" "$(field 'j["cpu"]["sockets"]')" "$(lscpu -p=SOCKET | grep -v '^#' | sort -u | wc -l)"
    is "cores per socket as lscpu" "$(field 'j["cpu"]["cores_per_socket"]')" \
       "$(( $(lscpu -p=SOCKET,CORE | grep -v '^#' | sort -u | wc -l) / $(lscpu -p=SOCKET | grep -v '^#' | sort -u | wc -l) ))"
fi
if command -v numactl >/dev/null && numactl --hardware >/dev/null 2>&1; then
    is "NUMA nodes as numactl --hardware" "$(field 'len(j["numa_nodes"])')" \
       "$(numactl --hardware | sed -n 's/^available: \([0-9]*\) nodes.*/\1/p')"
fi
is "no GPU here: an empty list and a reason, not a failure" "$(field 'len(j["gpus"]), bool(j["gpu_reason"])')" "0 True"
is "the loopback interface is not a NIC" "$(field '"lo" in [n["name"] for n in j["nics"]]')" "False"
out=$("$BENCHD" --inventory); rc=$?
is "text inventory exits 0" "$rc" 0
like "text inventory names the CPU" "$out" "^cpu +.*socket"

# a damaged tree: one unreadable file skips one item with a warning
root="$tmp/root"
mkdir -p "$root/sys/devices/system/cpu/cpu0/topology" "$root/sys/devices/system/cpu/cpu1/topology" "$root/proc/sys/kernel"
echo 0-1 > "$root/sys/devices/system/cpu/online"
echo 0 > "$root/sys/devices/system/cpu/cpu0/topology/physical_package_id"
echo 0 > "$root/sys/devices/system/cpu/cpu0/topology/core_id"
echo garbage > "$root/sys/devices/system/cpu/cpu1/topology/physical_package_id"
echo 1 > "$root/sys/devices/system/cpu/cpu1/topology/core_id"
echo tiny > "$root/proc/sys/kernel/hostname"
json=$("$BENCHD" --inventory --json --sysfs-root "$root" 2>/dev/null); rc=$?
is "a damaged tree still inventories" "$rc" 0
printf '%s' "$json" > "$tmp/bad.json"
is "  the odd CPU is skipped with one warning" \
   "$(/usr/bin/python3 -c "import json; j=json.load(open('$tmp/bad.json')); print(j['host']['hostname'], len([w for w in j['warnings'] if 'cpu1' in w]))")" "tiny 1"

# odd values in a recorded tree: each is unknown, with a warning naming the file
odd="$tmp/odd"
cp -a "$srcdir/tests/fixtures/sysfs/p3dn" "$odd" && chmod -R u+w "$odd"
gpu=$(cd "$odd/sys/bus/pci/devices/0000:06:00.0" && pwd -P)
echo garbage > "$gpu/numa_node"
echo fast > "$gpu/current_link_speed"
echo x16 > "$gpu/current_link_width"
echo 0xzz > "$gpu/device"
sed -i 's/^Device Minor:.*/Device Minor: \t -7/' "$odd/proc/driver/nvidia/gpus/0000:06:00.0/information"
echo lots > "$odd/sys/class/net/ens5/speed"
echo 9001x > "$odd/sys/class/net/ens5/mtu"
echo 'very fast' > "$odd/sys/class/infiniband/rdmap16s27/ports/1/rate"
"$BENCHD" --inventory --json --sysfs-root "$odd" > "$tmp/odd.json" 2>/dev/null
is "odd values: the inventory still exits 0" "$?" 0
oddget() { /usr/bin/python3 -c "import json; j=json.load(open('$tmp/odd.json')); print($1)"; }
is "  GPU 0: NUMA node, link speed, width, device id and minor unknown" \
   "$(oddget 'j["gpus"][0]["pci"]["numa_node"], j["gpus"][0]["pci"]["link_speed"], j["gpus"][0]["pci"]["link_width"], j["gpus"][0]["pci"]["id"], j["gpus"][0]["minor"]')" \
   "None None None 10de:0000 None"
is "  ens5: speed and MTU unknown; the EFA's rate unknown" \
   "$(oddget '[(n["name"], n["rate"], n["mtu"]) for n in j["nics"]]')" "[('ens5', None, None), ('rdmap16s27', None, None)]"
is "  one warning for each" "$(oddget 'len(j["warnings"])')" 8
like "  naming the file and the value" "$(oddget 'chr(10).join(j["warnings"])')" \
     "^/sys/bus/pci/devices/0000:06:00.0/numa_node: 'garbage' is not an integer from -1 to 1023; taken as unknown$"
like "  the link speed" "$(oddget 'chr(10).join(j["warnings"])')" "/0000:06:00.0/current_link_speed: 'fast' is not a rate such as '8.0 GT/s PCIe'"
like "  the NIC's speed" "$(oddget 'chr(10).join(j["warnings"])')" "/sys/class/net/ens5/speed: 'lots' is not an integer"
like "  the minor" "$(oddget 'chr(10).join(j["warnings"])')" "gpus/0000:06:00.0/information: '-7' is not a Device Minor"

# odd host and NUMA values: unknown (null), each with a warning naming the file
o2="$tmp/odd2"
cp -a "$srcdir/tests/fixtures/sysfs/cpuoff" "$o2" && chmod -R u+w "$o2"
echo soon > "$o2/proc/uptime"
echo 'Node 0 MemTotal:       lots kB' > "$o2/sys/devices/system/node/node0/meminfo"
echo '21 x10' > "$o2/sys/devices/system/node/node1/distance"
printf '%s\n' NAME=Test 'PRETTY_NAME="Test \"Quoted\" \$HOME"'"' Linux'" > "$o2/etc/os-release"
"$BENCHD" --inventory --json --sysfs-root "$o2" > "$tmp/odd2.json" 2>/dev/null
is "odd host values: the inventory still exits 0" "$?" 0
o2get() { /usr/bin/python3 -c "import json; j=json.load(open('$tmp/odd2.json')); print($1)"; }
is "  uptime, node 0's memory, node 1's distance to itself unknown; the rest kept" \
   "$(o2get 'j["host"]["uptime_seconds"], [(n["mem_total_kb"], n["distances"]) for n in j["numa_nodes"]]')" \
   "None [(None, [10, 21]), (98566144, [21, None])]"
is "  one warning for each" "$(o2get 'len(j["warnings"])')" 3
like "  naming /proc/uptime" "$(o2get 'chr(10).join(j["warnings"])')" "^/proc/uptime: 'soon' does not start with seconds; uptime unknown$"
like "  the meminfo" "$(o2get 'chr(10).join(j["warnings"])')" "^/sys/devices/system/node/node0/meminfo: no 'MemTotal: N kB' line; memory unknown$"
like "  the distances" "$(o2get 'chr(10).join(j["warnings"])')" "^/sys/devices/system/node/node1/distance: '21 x10' is not a list of distances"
is "os-release's shell quoting undone" "$(o2get 'j["host"]["os"]')" 'Test "Quoted" $HOME Linux'
out=$("$BENCHD" --inventory --sysfs-root "$o2" 2>/dev/null)
like "  the text inventory: uptime ?" "$out" "^host .*, up \? s$"
like "  memory unknown" "$out" "^numa 0 +cpus [0-9,-]+, memory unknown$"
like "cpuoff: a core whose sibling is offline leaves threads per core at 2" "$out" "x 8 cores x 2 threads"
"$BENCHD" --bogus >/dev/null 2>&1; is "unknown option: exit 2" "$?" 2

# recorded machines
for exp in "$srcdir"/tests/fixtures/sysfs/*/expected.json; do
    [ -f "$exp" ] || continue
    dir=$(dirname "$exp"); name=$(basename "$dir")
    "$BENCHD" --inventory --json --sysfs-root "$dir" > "$tmp/$name.json" 2>"$tmp/$name.err"
    is "$name: inventory exits 0" "$?" 0
    out=$(/usr/bin/python3 "$srcdir/tests/check-inventory.py" "$exp" "$tmp/$name.json" 2>&1); rc=$?
    is "$name: inventory, topology and binding as recorded" "$rc" 0
    [ "$rc" -eq 0 ] || printf '%s\n' "$out" | head -20 | sed 's/^/#   /'
    # the system config's declared topology gives the same plan as the measured one
    sys=$(/usr/bin/python3 -c "import json,os; c=json.load(open('$exp'))['system_config']; print(os.path.basename(c)[:-5] if c else '')")
    [ -n "$sys" ] || continue
    want=$(/usr/bin/python3 -c "import json; [print(b['local_rank'], b['numactl'], b['nic']) for b in json.load(open('$tmp/$name.json'))['binding']]")
    got=$(n=$(printf '%s\n' "$want" | wc -l); for ((r = 0; r < n; r++)); do
              "$BENCHCTL" bind --system "$sys" --local-rank "$r" --json |
                  /usr/bin/python3 -c "import json,sys; b=json.load(sys.stdin); print(b['local_rank'], b['numactl'], b['nic'])"
          done)
    is "$name: benchctl bind --system $sys plans as the measured topology" "$got" "$want"
done

# layouts the x86 formula (CPU = thread*sockets*cores + socket*cores + core,
# node = socket) gets wrong: the plan follows the trees' cpulists and siblings
# (2 sockets x 8 cores x 2 threads each; tests/fixtures/sysfs/README.md)
plan() { /usr/bin/python3 -c "import json; print('; '.join(b['numactl'] for b in json.load(open('$tmp/$1.json'))['binding']))"; }
is "interleaved: node 0 has the even CPUs (siblings +16), node 1 the odd ones" "$(plan interleaved)" \
   "--physcpubind=0,2,4,6,16,18,20,22 --membind=0; --physcpubind=8,10,12,14,24,26,28,30 --membind=0; --physcpubind=1,3,5,7,17,19,21,23 --membind=1; --physcpubind=9,11,13,15,25,27,29,31 --membind=1"
is "snc: four NUMA nodes on two sockets, one GPU each" "$(plan snc)" \
   "--physcpubind=0-3,16-19 --membind=0; --physcpubind=4-7,20-23 --membind=1; --physcpubind=8-11,24-27 --membind=2; --physcpubind=12-15,28-31 --membind=3"
is "cpuoff: offline CPU 2 is not handed out, its sibling 18 and every other sibling are" "$(plan cpuoff)" \
   "--physcpubind=0-1,3-7,16-23 --membind=0; --physcpubind=8-15,24-31 --membind=1"
done_testing
