#!/bin/bash
# A real `systemd --user` manager for a throw-away test user, inside a private mount
# namespace, with what PID 1 would have made at boot made here instead
# (docs/platform-notes.md, "A real systemd --user manager in a test").
#
#   systemd-user-sandbox.sh start HOME_DIR UID [CREDENTIALS_DIR]
#       Needs root. Prints "SKIP: reason" and exits 77 when the namespace cannot be made.
#       Otherwise prints "READY pid=PID" once the user's manager answers on its private
#       socket, then waits until its stdin closes (the test is done, or died), stops the
#       manager, ends what is left in the user's cgroup by PID and removes the cgroup dirs.
#       HOME_DIR (owned by UID) is bind-mounted as /home/sotto-test; /run, /tmp, /home and
#       the journal are private tmpfs mounts. CREDENTIALS_DIR: files the manager receives as
#       its own credentials, as PID 1 hands them to user@UID.service for its
#       LoadCredential(Encrypted)= lines (in /run/credentials/user@UID.service, owned by UID).
#   systemd-user-sandbox.sh user PID UID CMD...   CMD as the test user inside PID's namespace
#   systemd-user-sandbox.sh root PID CMD...       CMD as root inside PID's namespace
set -u
self=$(readlink -f "$0")
user=sotto-test
hierarchies="systemd unified memory"

user_env() {  # uid, then the command
    local uid=$1; shift
    exec setpriv --reuid="$uid" --regid="$uid" --init-groups env -i \
        HOME=/home/$user USER=$user LOGNAME=$user PATH=/usr/local/bin:/usr/bin:/bin \
        XDG_RUNTIME_DIR=/run/user/$uid DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$uid/bus "$@"
}

case "${1:-}" in
user)
    pid=$2 uid=$3; shift 3
    exec nsenter -t "$pid" -m -- "$self" as-user "$uid" "$@" ;;
as-user)
    uid=$2; shift 2
    user_env "$uid" "$@" ;;
root)
    pid=$2; shift 2
    exec nsenter -t "$pid" -m -- "$@" ;;
start)
    [ "$(id -u)" = 0 ] || { echo "SKIP: needs root (a private mount namespace and a cgroup for the user's manager)"; exit 77; }
    for tool in unshare nsenter setpriv /lib/systemd/systemd /lib/systemd/systemd-journald; do
        command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
    done
    [ -d /sys/fs/cgroup/systemd ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || { echo "SKIP: no cgroup file system"; exit 77; }
    unshare -m true 2>/dev/null || { echo "SKIP: unshare -m is not permitted here"; exit 77; }
    exec unshare -m --propagation private --fork -- "$self" inside "$2" "$3" "${4:-}" ;;
inside) ;;
*)
    echo "usage: $0 start HOME_DIR UID | user PID UID CMD... | root PID CMD..." >&2; exit 2 ;;
esac

home_source=$2 uid=$3 manager_credentials=${4:-}
# Read before /tmp and /run become private tmpfs mounts below.
credentials_tar=""
[ -n "$manager_credentials" ] && credentials_tar=$(tar -C "$manager_credentials" -cf - . | base64 -w0)
slice_parent=user.slice/user-$uid.slice
slice=$slice_parent/user@$uid.service
manager="" journald=""

cgroup_pids() {
    for h in $hierarchies; do
        [ -d /sys/fs/cgroup/$h/$slice_parent ] && find /sys/fs/cgroup/$h/$slice_parent -name cgroup.procs -exec cat {} +
    done 2>/dev/null | sort -u
}

# Ends what runs in the user's cgroup (each by its PID: this script started all of it) and
# removes the cgroup dirs, deepest first. Also used before start, for a run that was killed.
clear_cgroups() {
    local deadline=$((SECONDS + 5)) pids
    while pids=$(cgroup_pids); [ -n "$pids" ] && [ $SECONDS -lt $deadline ]; do
        for pid in $pids; do kill -KILL "$pid" 2>/dev/null; done
        for h in $hierarchies; do
            [ -d /sys/fs/cgroup/$h/$slice_parent ] && find /sys/fs/cgroup/$h/$slice_parent -depth -type d -exec rmdir {} + 2>/dev/null
        done
    done
    for h in $hierarchies; do
        [ -d /sys/fs/cgroup/$h/$slice_parent ] && find /sys/fs/cgroup/$h/$slice_parent -depth -type d -exec rmdir {} + 2>/dev/null
        rmdir /sys/fs/cgroup/$h/user.slice 2>/dev/null
    done
    return 0
}

cleanup() {
    if [ -n "$manager" ] && kill -0 "$manager" 2>/dev/null; then
        ( user_env "$uid" timeout 5 systemctl --user exit ) >/dev/null 2>&1
        local deadline=$((SECONDS + 5))
        while kill -0 "$manager" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
            sleep 0.05
        done
    fi
    clear_cgroups
    [ -n "$manager" ] && wait "$manager" 2>/dev/null
    if [ -n "$journald" ]; then kill -TERM "$journald" 2>/dev/null; wait "$journald" 2>/dev/null; fi
    echo "STOPPED"
}

poll() {  # poll SECONDS CONDITION...: true once CONDITION holds, false at the deadline
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.05
    done
}

fail() { echo "SANDBOX FAILED: $*"; exit 1; }

clear_cgroups
trap cleanup EXIT

# The package (this script, the built binaries) may live under a directory covered below, as
# a CI clone in /tmp does: keep it at its path by binding it through /mnt (in this namespace only).
package_root=$(cd "$(dirname "$self")/.." && pwd)
case "$package_root" in
    /tmp/*|/run/*|/home/*) mount --bind "$package_root" /mnt || fail "stash the package" ;;
    *) package_root="" ;;
esac

# Private file systems: the home first (its source may live under /tmp, which is covered next).
mount -t tmpfs -o mode=0755 sotto-home /home || fail "mount /home"
mkdir /home/$user && mount --bind "$home_source" /home/$user || fail "bind home"
mount -t tmpfs -o mode=0755 sotto-run /run || fail "mount /run"
mount -t tmpfs -o mode=1777 sotto-tmp /tmp || fail "mount /tmp"
if [ -n "$package_root" ]; then
    mkdir -p "$package_root" && mount --bind /mnt "$package_root" || fail "bind the package back"
fi
[ -d /var/log/journal ] && mount -t tmpfs sotto-journal /var/log/journal

# The test user exists only in here.
mkdir -p /run/sotto-sandbox
cp /etc/passwd /etc/group /run/sotto-sandbox/
echo "$user:x:$uid:$uid::/home/$user:/bin/sh" >>/run/sotto-sandbox/passwd
echo "$user:x:$uid:" >>/run/sotto-sandbox/group
mount --bind /run/sotto-sandbox/passwd /etc/passwd && mount --bind /run/sotto-sandbox/group /etc/group || fail "passwd"

# What PID 1 makes at boot: the "systemd runs" marker, and unit-root (without it every
# sandboxed unit fails with 226/NAMESPACE). The user's runtime directory, as logind would.
mkdir -p /run/systemd/system /run/systemd/journal
mkdir -m 0700 /run/systemd/unit-root
mkdir -p /run/user/$uid && chown "$uid:$uid" /run/user/$uid && chmod 0700 /run/user/$uid

# Logs: a volatile journal; root reads it with journalctl _SYSTEMD_USER_UNIT=…
/lib/systemd/systemd-journald >/dev/null 2>&1 &
journald=$!
poll 30 test -S /run/systemd/journal/stdout || fail "journald did not start"

# The user's delegated cgroup, as the system manager makes it for user@UID.service. The
# memory controller: this sandbox's own memory cgroup becomes the root, so the manager's
# paths (taken from the name=systemd hierarchy) land inside it and MemoryMax= applies.
memory=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
if [ -n "$memory" ] && [ "$memory" != / ]; then
    mount --bind "/sys/fs/cgroup/memory$memory" /sys/fs/cgroup/memory || fail "bind memory cgroup"
fi
for h in $hierarchies; do
    [ -d /sys/fs/cgroup/$h ] || continue
    mkdir -p /sys/fs/cgroup/$h/$slice || fail "mkdir cgroup $h"
    chown -R "$uid:$uid" /sys/fs/cgroup/$h/$slice
done

# The manager's own credentials, where PID 1 would decrypt them for user@UID.service.
credentials_env=""
if [ -n "$manager_credentials" ]; then
    credentials=/run/credentials/user@$uid.service
    mkdir -p "$credentials" && echo "$credentials_tar" | base64 -d | tar -C "$credentials" -xf - || fail "credentials"
    chown -R "$uid:$uid" "$credentials" && chmod 0400 "$credentials"/* && chmod 0500 "$credentials"
    credentials_env="CREDENTIALS_DIRECTORY=$credentials"
fi

(
    for h in $hierarchies; do
        [ -d /sys/fs/cgroup/$h/$slice ] && echo $BASHPID >/sys/fs/cgroup/$h/$slice/cgroup.procs
    done
    user_env "$uid" $credentials_env /lib/systemd/systemd --user
) </dev/null >/dev/null 2>&1 &
manager=$!
poll 60 test -S /run/user/$uid/systemd/private || fail "the user manager did not start"
echo "READY pid=$$"

cat >/dev/null   # until the test closes stdin (or dies)
