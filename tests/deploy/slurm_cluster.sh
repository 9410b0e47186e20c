#!/usr/bin/env bash
# A throw-away single-node Slurm cluster (Debian's slurm-wlm + munge) for tests: everything lives in
# one temp dir (config, keys, state, logs), every daemon listens on 127.0.0.1 only, on free ports.
#
#   source tests/deploy/slurm_cluster.sh
#   slurm_cluster_start            # exports SLURM_CONF; the clients (sbatch, squeue, ...) then use it
#   ...                            # sbatch, squeue, sacct-free waiting: slurm_wait_jobs ID...
#   slurm_cluster_stop             # also installed as an EXIT trap by slurm_cluster_start
#
# Needs root (slurmd runs jobs as the submitting user, which is root here) and the Debian packages
# slurmctld, slurmd, slurm-client and munge (slurm_cluster_install installs the missing ones).
# KPARITY_SLURM_KEEP=1 keeps the temp dir after stopping (logs for debugging).

SLURM_CLUSTER_PACKAGES=(slurmctld slurmd slurm-client munge)

slurm_cluster_install() {
  local missing=() p
  for p in "${SLURM_CLUSTER_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "slurm-cluster: installing ${missing[*]}"
  # The packages' maintainer scripts would start the system-wide daemons; policy-rc.d 101 stops
  # that on machines that have no such policy already (the test's daemons are its own).
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod 755 "$policy"; made_policy=1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if ((made_policy)); then rm -f "$policy"; fi
}

# Prints a TCP port free on 127.0.0.1 now (the kernel picks it; the tiny race until the daemon binds
# it is acceptable for a test).
_slurm_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_slurm_log() { echo "slurm-cluster: $*" >&2; }

# Prints the last lines of every daemon log: called when something did not come up or a job failed.
slurm_cluster_dump_logs() {
  local f
  for f in "$SLURM_CLUSTER_DIR"/log/*.log; do
    [ -f "$f" ] || continue
    echo "----- $f (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
}

# Starts "$@" in the background, its output to log/NAME.out, and records its pid as run/NAME.pid.
_slurm_spawn() {
  local name="$1"
  shift
  "$@" >>"$SLURM_CLUSTER_DIR/log/$name.out" 2>&1 &
  echo $! >"$SLURM_CLUSTER_DIR/run/$name.pid"
}

slurm_cluster_start() {
  if [ "$(id -u)" -ne 0 ]; then _slurm_log "needs root (runs slurmd and munged)"; return 1; fi
  SLURM_CLUSTER_DIR="$(mktemp -d /tmp/kparity-slurm.XXXXXX)"
  export SLURM_CLUSTER_DIR
  trap slurm_cluster_stop EXIT
  trap 'exit 130' INT TERM
  local d="$SLURM_CLUSTER_DIR" i
  mkdir -p "$d"/{etc,munge,munge-socket,state,spool,log,run}
  # munged wants its socket reachable by everyone (x on every parent) and its key private.
  chmod 755 "$d" "$d"/munge-socket
  chmod 700 "$d"/munge

  # munge: a fresh key and a private socket, so the test never talks to (or needs) a system munged.
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$d/munge/munge.key"
  # The daemons run in the foreground as children of this shell, in its process group, so a kill of
  # the test's group takes them along; a watchdog in its own session stops them and removes the
  # dir if this shell dies some other way (SIGKILL of the shell alone). Their own pid files go to
  # *.self.pid; run/<name>.pid holds the pid this shell started.
  _slurm_spawn munged munged -F --socket="$d/munge-socket/munge.socket" --key-file="$d/munge/munge.key" \
         --pid-file="$d/run/munged.self.pid" --log-file="$d/log/munged.log" --seed-file="$d/munge/seed"
  for i in $(seq 1 50); do [ -S "$d/munge-socket/munge.socket" ] && break; sleep 0.1; done
  [ -S "$d/munge-socket/munge.socket" ] || { _slurm_log "munged did not start"; slurm_cluster_dump_logs; return 1; }
  setsid bash -c '
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    export SLURM_CONF="$2/etc/slurm.conf"
    scancel --quiet --user root
    for i in $(seq 1 10); do [ -z "$(squeue -h -o %i)" ] && break; sleep 0.5; done
    for n in slurmd slurmctld munged; do [ -f "$2/run/$n.pid" ] && kill -KILL "$(cat "$2/run/$n.pid")"; done
    rm -rf "$2"' slurm-cluster-watchdog "$$" "$d" </dev/null >/dev/null 2>&1 &
  echo $! >"$d/run/watchdog.pid"

  local host cpus mem_mb ctld_port slurmd_port
  host="$(hostname -s)"
  cpus="$(nproc)"
  mem_mb="$(awk '/^MemTotal:/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)"  # slurmd refuses more than it sees
  ctld_port="$(_slurm_free_port)"
  slurmd_port="$(_slurm_free_port)"
  # Fake GPUs let the deploy script keep its --gres=gpu:1: slurmd drops a gres/gpu without a File
  # and wants a device node there, one device number per GPU (equal numbers count as one GPU).
  # Major 240 is reserved for local/experimental use, so no driver answers: opening one fails, and
  # nothing does (task/none, no device cgroup). Slurm hands one to each task and sets
  # CUDA_VISIBLE_DEVICES from its index.
  local gpus="${KPARITY_SLURM_GPUS:-4}"
  mkdir -p "$d/dev"
  for ((i = 0; i < gpus; i++)); do
    mknod "$d/dev/nvidia$i" c 240 "$i" || { _slurm_log "mknod failed: cannot fake GPUs here"; return 1; }
  done
  export SLURM_CONF="$d/etc/slurm.conf"
  cat >"$SLURM_CONF" <<CONF
# generated by tests/deploy/slurm_cluster.sh
ClusterName=kparity-test
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${ctld_port}
SlurmdPort=${slurmd_port}
# Both daemons bind the node's address (127.0.0.1 above and below), not INADDR_ANY.
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${d}/munge-socket/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=${d}/state
SlurmdSpoolDir=${d}/spool
SlurmctldPidFile=${d}/run/slurmctld.self.pid
SlurmdPidFile=${d}/run/slurmd.self.pid
SlurmctldLogFile=${d}/log/slurmctld.log
SlurmdLogFile=${d}/log/slurmd.log
SlurmctldDebug=${KPARITY_SLURM_DEBUG:-info}
SlurmdDebug=${KPARITY_SLURM_DEBUG:-info}
# No cgroups in containers: plain process tracking, no task binding, no accounting daemon.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Without a default a job without --mem would take the whole node and serialize the array.
DefMemPerCPU=1024
GresTypes=gpu
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=600
NodeName=kpnode NodeHostname=${host} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem_mb} Gres=gpu:${gpus} State=UNKNOWN
PartitionName=debug Nodes=kpnode Default=YES MaxTime=INFINITE State=UP
CONF
  echo "NodeName=kpnode Name=gpu File=${d}/dev/nvidia[0-$((gpus - 1))]" >"$d/etc/gres.conf"

  _slurm_spawn slurmctld slurmctld -D -f "$SLURM_CONF"
  _slurm_spawn slurmd slurmd -D -f "$SLURM_CONF" -N kpnode

  # Ready when the node is idle: slurmd registered and the controller accepts work.
  local state="" name
  for i in $(seq 1 60); do
    state="$(sinfo -h -n kpnode -o %t 2>/dev/null || true)"
    [ "$state" = "idle" ] && break
    for name in slurmctld slurmd; do
      kill -0 "$(cat "$d/run/$name.pid")" 2>/dev/null || { _slurm_log "$name exited"; slurm_cluster_dump_logs; return 1; }
    done
    sleep 0.5
  done
  if [ "$state" != "idle" ]; then
    _slurm_log "node did not become idle within 30 s (state: '${state:-none}')"
    slurm_cluster_dump_logs
    return 1
  fi
  _slurm_log "up in $d (slurmctld :$ctld_port, slurmd :$slurmd_port, $cpus CPUs, $gpus fake GPUs)"
}

# Prints every TCP listener of this cluster's daemons that is not on 127.0.0.1 (nothing when all are).
slurm_cluster_public_listeners() {
  local pid pids=()
  for pid in "$SLURM_CLUSTER_DIR"/run/*.pid; do [ -f "$pid" ] && pids+=("$(cat "$pid")"); done
  local p
  for p in "${pids[@]}"; do
    ss -Hltnp 2>/dev/null | grep "pid=$p," | awk '{print $4}' | grep -v '^127\.0\.0\.1:' || true
  done
}

# Waits until none of the given job ids is pending or running (array jobs included); fails after
# ${KPARITY_SLURM_TIMEOUT:-600} s.
slurm_wait_jobs() {
  local deadline=$((SECONDS + ${KPARITY_SLURM_TIMEOUT:-600})) ids
  ids="$(IFS=,; echo "$*")"
  while [ -n "$(squeue -h -j "$ids" -o %i 2>/dev/null)" ]; do
    if ((SECONDS > deadline)); then
      _slurm_log "jobs $ids still queued after ${KPARITY_SLURM_TIMEOUT:-600} s"
      squeue -j "$ids" >&2 || true
      return 1
    fi
    sleep 1
  done
}

slurm_cluster_stop() {
  local rc=$?
  trap - EXIT
  [ -n "${SLURM_CLUSTER_DIR:-}" ] && [ -d "$SLURM_CLUSTER_DIR" ] || return $rc
  local d="$SLURM_CLUSTER_DIR" name pid i
  [ -f "$d/run/watchdog.pid" ] && kill -TERM "$(cat "$d/run/watchdog.pid")" 2>/dev/null
  # Jobs first (slurmd kills their processes; up to 10 s for them to go), then slurmd, slurmctld,
  # munged: each by the pid this shell started, SIGTERM, then SIGKILL after 10 s.
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$d/run/slurmctld.pid" ]; then
    scancel --quiet --user root 2>/dev/null || true
    for i in $(seq 1 20); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  for name in slurmd slurmctld munged; do
    [ -f "$d/run/$name.pid" ] || continue
    pid="$(cat "$d/run/$name.pid")"
    kill -TERM "$pid" 2>/dev/null || continue
    for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "${KPARITY_SLURM_KEEP:-0}" = 1 ]; then
    _slurm_log "stopped; kept $d"
  else
    rm -rf "$d"
    _slurm_log "stopped and removed $d"
  fi
  unset SLURM_CLUSTER_DIR
  return $rc
}
