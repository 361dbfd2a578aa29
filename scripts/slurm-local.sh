#!/usr/bin/env bash
# A throw-away Slurm cluster on this machine for the Slurm tests: munged, slurmctld and two slurmd
# instances (Slurm's multiple-slurmd mode: nodes gpd1 and gpd2, both on the loopback, 2 CPUs each),
# one partition "debug", no accounting. Everything lives under DIR (default /tmp/gpudays-slurm).
#   scripts/slurm-local.sh start [DIR]   # idempotent: a running cluster of DIR is reused
#   scripts/slurm-local.sh stop [DIR]    # stops the daemons it started (munged only if it started it)
#   scripts/slurm-local.sh env [DIR]     # prints SLURM_CONF=DIR/slurm.conf
# Needs root (slurmd runs jobs as their user) and Debian's slurm-wlm and munge
# (scripts/install-deps.sh).
set -euo pipefail

action=${1:-}
dir=${2:-/tmp/gpudays-slurm}
mkdir -p "$dir" && dir=$(cd "$dir" && pwd)
conf="$dir/slurm.conf"
export SLURM_CONF="$conf"
nodes=(gpd1 gpd2)
# Ports from the directory's name, so that two checkouts testing at once do not meet.
ctld_port=${GPUDAYS_SLURM_PORT:-$((16000 + $(echo "$dir" | cksum | cut -d' ' -f1) % 2000 * 4))}

die() { echo "slurm-local: $*" >&2; exit 1; }

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_conf() {
  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 4 ))
  mkdir -p "$dir/state" "$dir/log"
  for n in "${nodes[@]}"; do mkdir -p "$dir/spool/$n" "$dir/tmp/$n"; done
  cat > "$conf" <<CONF
# Written by scripts/slurm-local.sh: a test cluster on the loopback.
ClusterName=gpudays-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
# Per node: PMIx puts each step's client directory here, and two slurmd share one /tmp.
TmpFS=$dir/tmp/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
CONF
  local port=$((ctld_port + 2))
  for n in "${nodes[@]}"; do
    echo "NodeName=$n NodeHostname=$host NodeAddr=127.0.0.1 Port=$port CPUs=$cpus RealMemory=$mem State=UNKNOWN" >> "$conf"
    port=$((port + 1))
  done
  echo "PartitionName=debug Nodes=$(IFS=,; echo "${nodes[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >> "$conf"
}

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return; fi
  [ -f /etc/munge/munge.key ] || die "no /etc/munge/munge.key: install munge (scripts/install-deps.sh)"
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown -R munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge 2>/dev/null || true
  if id munge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged || /usr/sbin/munged --force
  else
    /usr/sbin/munged --force
  fi
  touch "$dir/munged.ours"
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return; sleep 0.1; done
  die "munged did not start"
}

wait_idle() {
  for _ in $(seq 150); do
    local idle
    idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle" || $2 == "mix" || $2 == "alloc"' | wc -l)
    [ "$idle" -ge "${#nodes[@]}" ] && return
    sleep 0.2
  done
  sinfo -N >&2 || true
  die "the nodes did not come up; logs in $dir/log"
}

start() {
  [ "$(id -u)" -eq 0 ] || die "needs root (slurmd starts jobs as their user)"
  command -v slurmctld >/dev/null || die "slurmctld not found: install slurm-wlm (scripts/install-deps.sh)"
  if pid_alive "$dir/slurmctld.pid"; then wait_idle; echo "SLURM_CONF=$conf"; return; fi
  write_conf
  start_munge
  slurmctld -i -f "$conf" || die "slurmctld did not start; see $dir/log/slurmctld.log"
  for _ in $(seq 50); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
  scontrol ping 2>/dev/null | grep -q UP || die "slurmctld does not answer; see $dir/log/slurmctld.log"
  for n in "${nodes[@]}"; do slurmd -N "$n" -f "$conf"; done
  wait_idle
  echo "SLURM_CONF=$conf"
}

# The pids of the daemons this directory's cluster runs.
daemon_pids() {
  for f in "$dir"/slurmd.*.pid "$dir/slurmctld.pid"; do
    pid_alive "$f" && cat "$f"
  done
  return 0
}

stop() {
  [ -f "$conf" ] || return 0
  # Jobs first: slurmd waits for its running steps before it exits.
  if pid_alive "$dir/slurmctld.pid"; then
    scancel --full -u "$(id -un)" 2>/dev/null || true
    for _ in $(seq 100); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  local pids
  pids=$(daemon_pids)
  [ -n "$pids" ] && kill $pids 2>/dev/null
  for _ in $(seq 100); do
    local alive=""
    for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
    [ -z "$alive" ] && break
    sleep 0.1
  done
  for p in $pids; do kill -0 "$p" 2>/dev/null && kill -KILL "$p"; done
  if [ -f "$dir/munged.ours" ]; then
    pid_alive /run/munge/munged.pid && kill "$(cat /run/munge/munged.pid)"
    rm -f "$dir/munged.ours"
  fi
  return 0
}

case "$action" in
  start) start ;;
  stop) stop ;;
  env) echo "SLURM_CONF=$conf" ;;
  *) die "usage: slurm-local.sh start|stop|env [DIR]" ;;
esac
