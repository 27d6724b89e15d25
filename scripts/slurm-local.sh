#!/bin/bash
# A single-host Slurm of its own (slurmctld + slurmd + munged on loopback),
# for the tests of `--executor=slurm` and for scripts/scale-out-bench.sh: no
# systemd, no system configuration touched, every file under one directory.
#
#   scripts/slurm-local.sh start DIR [--gpus N] [--prefix P]
#       starts it and writes DIR/env.sh (source it: SLURM_CONF, PATH,
#       LD_LIBRARY_PATH); exits 0 once `sinfo` shows the node idle, 1 with
#       the reason (and the daemons' logs) otherwise. --gpus N declares
#       Gres=gpu:N on /dev/nvidia0..N-1 (Slurm sets CUDA_VISIBLE_DEVICES for
#       jobs that ask for --gres=gpu:1). --prefix P runs Slurm and munge from
#       .deb files unpacked with `dpkg -x` into P (fetch-debs makes them);
#       default: the installed packages (Debian: slurm-wlm munge).
#       --lifetime S stops it all after S seconds whatever happens (tests:
#       a failing step cannot leave daemons behind). DIR/run CMD... runs a
#       command with DIR/env.sh's variables.
#   scripts/slurm-local.sh stop DIR
#       cancels every job and stops the daemons (by their pid files).
#   scripts/slurm-local.sh fetch-debs DIR
#       downloads the .deb files a machine without network needs (Debian 12's
#       slurm 22.05 and munge, and the libraries Ubuntu lacks) and unpacks
#       them into DIR/prefix.
#
# Slurm 22.05 has no auth/none: munge it is, with a key and a socket of its
# own in DIR. The daemons run as the calling user (root in CI and on the GPU
# machine; SlurmUser is set to whoever runs this).
set -u
cmd="${1:-}"; dir="${2:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|fetch-debs DIR [--gpus N] [--prefix P]" >&2
  exit 2
fi
shift 2
gpus=0; prefix=""; lifetime=0
while [ $# -gt 0 ]; do
  case "$1" in
    --gpus) gpus="$2"; shift 2 ;;
    --prefix) prefix="$(cd "$2" && pwd)"; shift 2 ;;
    --lifetime) lifetime="$2"; shift 2 ;;
    *) echo "slurm-local: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

stop() {
  if [ -f "$dir/env.sh" ]; then
    # shellcheck disable=SC1091
    . "$dir/env.sh"
    timeout 10 scancel --full --quiet $(timeout 10 squeue -h -o %i 2>/dev/null) 2>/dev/null || true
  fi
  # The watchdog of --lifetime goes too: it must not stop a later instance.
  if [ -f "$dir/watchdog.pid" ]; then
    w="$(cat "$dir/watchdog.pid")"
    if [ "$w" != "$$" ] && [ "$w" != "$PPID" ]; then
      kill -- -"$w" 2>/dev/null || kill "$w" 2>/dev/null || true
    fi
    rm -f "$dir/watchdog.pid"
  fi
  for p in slurmd slurmctld munged; do
    if [ -f "$dir/$p.pid" ]; then
      pid="$(cat "$dir/$p.pid")"
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/$p.pid"
    fi
  done
}

case "$cmd" in
stop) stop; exit 0 ;;
fetch-debs)
  set -e
  mkdir -p "$dir/debs" "$dir/prefix"
  cd "$dir/debs"
  apt-get download slurmctld slurmd slurm-client slurm-wlm-basic-plugins \
    munge libmunge2 libhwloc15 libnuma1 >/dev/null
  for d in ./*.deb; do dpkg -x "$d" "$dir/prefix"; done
  echo "slurm-local: unpacked $(ls ./*.deb | wc -l) packages into $dir/prefix"
  exit 0 ;;
start) ;;
*) echo "slurm-local: unknown command $cmd" >&2; exit 2 ;;
esac

stop
rm -rf "$dir/state" "$dir/spool" "$dir"/*.log
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"

arch="$(uname -m)-linux-gnu"
bin="$prefix/usr/bin"; sbin="$prefix/usr/sbin"
plugins="$prefix/usr/lib/$arch/slurm-wlm"
libs="$plugins:$prefix/usr/lib/$arch:$prefix/lib/$arch"
# Debian's packages ship slurmctld-wlm, slurmd-wlm and slurmstepd-wlm; the
# plain names are alternatives their install scripts make, which `dpkg -x`
# does not run.
if [ ! -e "$sbin/slurmctld" ] && [ -e "$sbin/slurmctld-wlm" ]; then
  mkdir -p "$dir/sbin"
  for p in slurmctld slurmd slurmstepd; do ln -sf "$sbin/$p-wlm" "$dir/sbin/$p"; done
  # slurmd starts slurmstepd from the path it was built with.
  if [ ! -e /usr/sbin/slurmstepd ]; then
    if [ "$(id -u)" -eq 0 ]; then
      ln -s "$sbin/slurmstepd-wlm" /usr/sbin/slurmstepd
      echo "slurm-local: linked /usr/sbin/slurmstepd to $sbin/slurmstepd-wlm (slurmd runs it from there)"
    else
      echo "slurm-local: slurmd runs /usr/sbin/slurmstepd, which is missing; as root: ln -s $sbin/slurmstepd-wlm /usr/sbin/slurmstepd" >&2
      exit 1
    fi
  fi
  sbin="$dir/sbin"
fi
for f in "$sbin/slurmctld" "$sbin/slurmd" "$bin/sbatch" "$prefix/usr/sbin/munged" "$plugins/auth_munge.so"; do
  if [ ! -e "$f" ]; then
    echo "slurm-local: $f is missing (install slurm-wlm and munge, or give --prefix of unpacked .debs)" >&2
    exit 1
  fi
done

host="$(hostname -s 2>/dev/null || hostname)"
user="$(id -un)"
cpus="$(nproc)"
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
# Ports of our own, away from Slurm's 6817/6818, so a system Slurm is left
# alone; derived from the directory so two instances do not meet.
base=$(( 20000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 20000 ))
ctld_port=$base; slurmd_port=$((base + 1))

head -c 1024 /dev/urandom > "$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
LD_LIBRARY_PATH="$libs" "$prefix/usr/sbin/munged" --force \
  --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munge/munge.seed" || {
  echo "slurm-local: munged did not start:" >&2; tail -5 "$dir/munged.log" >&2; exit 1; }

gres_line=""
: > "$dir/gres.conf"
if [ "$gpus" -gt 0 ]; then
  gres_line="Gres=gpu:$gpus"
  echo "NodeName=$host Name=gpu File=/dev/nvidia[0-$((gpus - 1))]" > "$dir/gres.conf"
fi
cat > "$dir/slurm.conf" <<CONF
ClusterName=astra-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmUser=$user
SlurmdUser=root
PluginDir=$plugins
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=300
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN $gres_line
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
# slurmd loads a cgroup plugin even when nothing uses cgroups (proctrack/pgid,
# task/none above). Slurm 22.05's autodetection picks cgroup/v2 on a cgroup2
# host, whose set-up needs D-Bus and systemd (absent in a container: slurmd
# then does not start); cgroup/v1 does nothing until a cgroup plugin uses it.
echo "CgroupPlugin=cgroup/v1" > "$dir/cgroup.conf"

cat > "$dir/env.sh" <<ENV
export SLURM_CONF="$dir/slurm.conf"
export PATH="$bin:$sbin:$prefix/usr/sbin:\$PATH"
export LD_LIBRARY_PATH="$libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
ENV
printf '#!/bin/sh\n. "%s/env.sh"\nexec "$@"\n' "$dir" > "$dir/run"
chmod +x "$dir/run"
# shellcheck disable=SC1091
. "$dir/env.sh"
if [ "$lifetime" -gt 0 ]; then
  # It writes its own pid: setsid may fork, so $! need not be its.
  setsid sh -c "echo \$\$ > '$dir/watchdog.pid'; sleep $lifetime; '$0' stop '$dir'" \
    </dev/null >/dev/null 2>&1 &
fi
slurmctld -i -f "$dir/slurm.conf" >"$dir/slurmctld.out" 2>&1 || {
  echo "slurm-local: slurmctld did not start:" >&2
  tail -20 "$dir/slurmctld.out" "$dir/slurmctld.log" >&2 2>/dev/null; stop; exit 1; }
slurmd -N "$host" -f "$dir/slurm.conf" >"$dir/slurmd.out" 2>&1 || {
  echo "slurm-local: slurmd did not start:" >&2
  tail -20 "$dir/slurmd.out" "$dir/slurmd.log" >&2 2>/dev/null; stop; exit 1; }
for _ in $(seq 60); do
  state="$(timeout 5 sinfo -h -N -o %t 2>/dev/null | head -1)"
  case "$state" in idle|mix|alloc) echo "slurm-local: up ($host, $cpus CPUs${gres_line:+, $gres_line}); source $dir/env.sh"; exit 0 ;; esac
  sleep 0.5
done
echo "slurm-local: the node did not come up (state '${state:-none}'):" >&2
tail -20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 2>/dev/null
stop
exit 1
