#!/usr/bin/env bash
# build-box.sh — a Vagrant box for the libvirt provider, built offline from Debian packages: the VM
# lab's guests (see docs/vm-lab.md) without downloading a box from any registry.
#
#   scripts/build-box.sh                      build leaderlab/bookworm and `vagrant box add` it
#   LEADERLAB_BOX=leaderlab/bookworm vagrant up
#
# What is in the box: Debian bookworm (mmdebstrap, minbase) with systemd, udev, sshd, sudo, iptables,
# iproute2, procps, ping, and Debian's kernel; systemd-networkd takes eth0 up by DHCP. User
# `vagrant` with passwordless sudo and Vagrant's insecure public key (Vagrant swaps it for a fresh key
# at the first `vagrant up`). sshd's host keys are not in the box: a oneshot unit makes them at each
# VM's first boot. No agent, no token, no synced folder: `leaderlab run --ssh-config` brings its own
# binary over SSH.
#
# Layout: one ext4 filesystem (no partition table, made by `mke2fs -d`, so no loop device and no
# mount), converted to a compressed qcow2, booted by libvirt's direct kernel boot: the kernel and
# initrd travel in the box beside the disk, named by the box's own Vagrantfile (root=/dev/vda).
#
# Options (environment in brackets):
#   --name NAME     the box's name in `vagrant box list`      [LEADERLAB_BOX_NAME, leaderlab/bookworm]
#   --out DIR       where the .box file is written              [LEADERLAB_BOX_DIR, /var/tmp/leaderlab-box]
#   --cache DIR     where mmdebstrap's tarball is kept, so that a rebuild skips the download and the
#                   package installation (~2 min)             [LEADERLAB_BOX_CACHE, /var/cache/leaderlab-box]
#   --mirror URL    a Debian mirror for mmdebstrap                 [LEADERLAB_BOX_MIRROR, mmdebstrap's default]
#   --disk-size S   the guest disk's virtual size (mke2fs units)   [LEADERLAB_BOX_DISK, 4G]
#   --fresh         make the tarball again even if the cache has it
#   --no-add        write the .box file only; do not `vagrant box add` it
# Needs root (the root filesystem's files belong to root and other users) and: mmdebstrap,
# qemu-img (qemu-utils), mke2fs (e2fsprogs), tar, and for the add: vagrant with vagrant-libvirt.
set -euo pipefail

prog=$(basename "$0")
say() { echo "$prog: $*" >&2; }
die() { say "$*"; exit 1; }

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

NAME=${LEADERLAB_BOX_NAME:-leaderlab/bookworm}
OUT=${LEADERLAB_BOX_DIR:-/var/tmp/leaderlab-box}
CACHE=${LEADERLAB_BOX_CACHE:-/var/cache/leaderlab-box}
MIRROR=${LEADERLAB_BOX_MIRROR:-}
DISK=${LEADERLAB_BOX_DISK:-4G}
FRESH=0
ADD=1
while [ $# -gt 0 ]; do
  case $1 in
    --name) NAME=${2:?--name needs a value}; shift 2 ;;
    --out) OUT=${2:?--out needs a value}; shift 2 ;;
    --cache) CACHE=${2:?--cache needs a value}; shift 2 ;;
    --mirror) MIRROR=${2:?--mirror needs a value}; shift 2 ;;
    --disk-size) DISK=${2:?--disk-size needs a value}; shift 2 ;;
    --fresh) FRESH=1; shift ;;
    --no-add) ADD=0; shift ;;
    -h|--help) usage ;;
    *) say "unknown argument: $1"; usage ;;
  esac
done
[[ $NAME =~ ^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?$ ]] || die "--name $NAME: letters, digits, . _ - and at most one /"

start=$SECONDS
[ "$(id -u)" -eq 0 ] || die "must run as root (the guest's files belong to root and to other users): sudo $0 $*"
missing=()
need() { command -v "$1" >/dev/null || missing+=("$1 (apt-get install $2)"); }
need mmdebstrap mmdebstrap
need qemu-img qemu-utils
need mke2fs e2fsprogs
need tar tar
need sha256sum coreutils
if [ "$ADD" = 1 ]; then need vagrant vagrant; fi
[ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]}"

# Vagrant's insecure key: Debian's vagrant package carries it; without vagrant (--no-add on a
# machine that only builds), the same file from any vagrant install will do.
pubkey=${LEADERLAB_BOX_PUBKEY:-}
if [ -z "$pubkey" ]; then
  pubkey=$(ls /usr/share/rubygems-integration/all/gems/vagrant-*/keys/vagrant.pub 2>/dev/null | tail -n1 || true)
fi
[ -n "$pubkey" ] && [ -r "$pubkey" ] ||
  die "Vagrant's insecure public key not found (apt-get install vagrant, or LEADERLAB_BOX_PUBKEY=FILE)"
if [ "$ADD" = 1 ] && ! vagrant plugin list 2>/dev/null | grep -q '^vagrant-libvirt'; then
  die "vagrant has no libvirt provider (apt-get install vagrant-libvirt)"
fi

SUITE=bookworm
# procps: Vagrant runs `ps` to find systemd. kmod: loads the iptables modules. iputils-ping: the
# lab's first check between VMs. No ifupdown: see the network below.
PACKAGES=systemd-sysv,udev,kmod,linux-image-amd64,openssh-server,sudo,iptables,iproute2,procps,iputils-ping
# Documentation, manuals and translations are of no use in a lab guest (~60 MB fewer).
DPKGOPTS=(--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/info/*')

mkdir -p "$CACHE" "$OUT"
key=$(printf '%s\n' "$SUITE" "$PACKAGES" "$MIRROR" "${DPKGOPTS[@]}" | sha256sum | cut -c1-12)
tarball=$CACHE/rootfs-$SUITE-$key.tar
if [ "$FRESH" = 1 ] || [ ! -s "$tarball" ]; then
  say "mmdebstrap $SUITE (minbase + $PACKAGES) into $tarball"
  # shellcheck disable=SC2086
  rm -rf "$tarball.tmp"
  mmdebstrap --variant=minbase --format=tar --include="$PACKAGES" "${DPKGOPTS[@]}" \
    "$SUITE" "$tarball.tmp" ${MIRROR:+"$MIRROR"} ||
    die "mmdebstrap failed (is a Debian mirror reachable? --mirror URL names another)"
  mv "$tarball.tmp" "$tarball"
  # Tarballs of other package lists are of no more use.
  find "$CACHE" -maxdepth 1 -name "rootfs-$SUITE-*.tar" ! -path "$tarball" -delete
else
  say "using the cached $tarball (--fresh makes it again)"
fi

work=$(mktemp -d "$OUT/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir "$root"
# --xattrs: file capabilities (ping's cap_net_raw) are extended attributes; mke2fs -d copies them.
tar -C "$root" --numeric-owner --xattrs --xattrs-include='*' -xpf "$tarball"

# --- the guest's configuration
echo localhost >"$root/etc/hostname" # Vagrant sets labK at `vagrant up`
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
echo '/dev/vda / ext4 defaults,errors=remount-ro 0 1' >"$root/etc/fstab"
# The network: systemd-networkd, DHCP on eth0 (libvirt's management network). When Vagrant sets the
# hostname it restarts the network under its own SSH session: with ifupdown it takes each interface
# down and up, and the session timed out (measured: 2 VMs of 3 failed `vagrant up`); with networkd it
# restarts the daemon, which must then keep the address it has (KeepConfiguration, no release).
cat >"$root/etc/systemd/network/50-eth0.network" <<'EOF'
# Written by leaderlab's build-box.sh.
[Match]
Name=eth0

[Network]
DHCP=ipv4

KeepConfiguration=dhcp-on-stop

[DHCPv4]
# libvirt's DHCP server knows the VM by its MAC address.
ClientIdentifier=mac
SendRelease=no
EOF
# The guest has no way out: no apt source to wait on.
: >"$root/etc/apt/sources.list"

# Vagrant's user: a password of '*' (no password login, but not "locked", which would refuse keys).
chroot "$root" useradd --create-home --shell /bin/bash --user-group vagrant
chroot "$root" usermod --password '*' vagrant
echo 'vagrant ALL=(ALL) NOPASSWD: ALL' >"$root/etc/sudoers.d/vagrant"
chmod 0440 "$root/etc/sudoers.d/vagrant"
install -d -m 0700 "$root/home/vagrant/.ssh"
install -m 0600 "$pubkey" "$root/home/vagrant/.ssh/authorized_keys"
vuid=$(chroot "$root" id -u vagrant)
vgid=$(chroot "$root" id -g vagrant)
chown -R "$vuid:$vgid" "$root/home/vagrant/.ssh"

# sshd: host keys made at each VM's first boot, never shared by every VM of the box. Ed25519 and
# ECDSA only: an RSA key of 3072 bits costs almost two minutes of CPU under emulation (measured), and
# every client of the lab (OpenSSH, Vagrant's net-ssh, golang.org/x/crypto/ssh) takes Ed25519. No
# reverse DNS lookups (the lab has no DNS for its clients).
rm -f "$root"/etc/ssh/ssh_host_*
cat >"$root/etc/systemd/system/ssh-hostkeys.service" <<'EOF'
[Unit]
Description=Generate this machine's SSH host keys (leaderlab box)
ConditionPathExists=!/etc/ssh/ssh_host_ed25519_key
Before=ssh.service

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -q -t ed25519 -N "" -f /etc/ssh/ssh_host_ed25519_key
ExecStart=/usr/bin/ssh-keygen -q -t ecdsa -N "" -f /etc/ssh/ssh_host_ecdsa_key

[Install]
WantedBy=ssh.service multi-user.target
EOF
systemctl --root="$root" enable ssh-hostkeys.service ssh.service systemd-networkd.service >/dev/null 2>&1
printf '%s\n' 'HostKey /etc/ssh/ssh_host_ed25519_key' 'HostKey /etc/ssh/ssh_host_ecdsa_key' 'UseDNS no' \
  >"$root/etc/ssh/sshd_config.d/leaderlab.conf"

# The modules of leaderlab's iptables backend, loaded at boot: loaded on demand by the first rule,
# they delay that rule by seconds under emulation (measured), long enough to upset a fault schedule.
printf '%s\n' nft_compat xt_comment xt_mark xt_multiport xt_statistic >"$root/etc/modules-load.d/leaderlab.conf"
# Unprivileged ping (ICMP datagram sockets), whether or not ping's file capability survived.
echo 'net.ipv4.ping_group_range = 0 2147483647' >"$root/etc/sysctl.d/60-leaderlab-ping.conf"

# Under TCG every CPU second counts: no periodic housekeeping in a short-lived lab guest, no
# gettys on virtual terminals nobody sees (the serial console keeps its own).
systemctl --root="$root" set-default multi-user.target >/dev/null 2>&1
for unit in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
  e2scrub_reap.service fstrim.timer man-db.timer getty-static.service getty@.service; do
  if [ -e "$root/lib/systemd/system/$unit" ]; then systemctl --root="$root" mask "$unit" >/dev/null 2>&1; fi
done
# A machine-id of its own per VM (systemd makes one at first boot when the file is empty).
: >"$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"

# An initrd with the modules that mount the root filesystem only: the default (MODULES=most) is
# 36 MB that take ~25 s to unpack and probe under emulation; this one is ~6 MB.
echo 'MODULES=list' >"$root/etc/initramfs-tools/conf.d/leaderlab"
printf '%s\n' virtio_pci virtio_blk ext4 >>"$root/etc/initramfs-tools/modules"
chroot "$root" update-initramfs -u -k all >/dev/null 2>&1 || die "update-initramfs failed in the guest's root"

# --- kernel and initrd out, the rest into an ext4 image, then a compressed qcow2
kernel=$(ls "$root"/boot/vmlinuz-* | sort -V | tail -n1)
initrd=$(ls "$root"/boot/initrd.img-* | sort -V | tail -n1)
[ -f "$kernel" ] && [ -f "$initrd" ] || die "no kernel or initrd in the root filesystem"
box=$work/box
mkdir "$box"
cp "$kernel" "$box/vmlinuz"
cp "$initrd" "$box/initrd.img"
rm -rf "$root"/var/cache/apt/*.bin "$root"/var/lib/apt/lists/* "$root"/var/log/*.log

mke2fs -q -t ext4 -L root -d "$root" "$work/root.ext4" "$DISK" >/dev/null ||
  die "mke2fs -d failed (the root filesystem may not fit in --disk-size $DISK)"
rm -rf "$root"
qemu-img convert -c -f raw -O qcow2 "$work/root.ext4" "$box/box.img"
rm -f "$work/root.ext4"
vsize=$(qemu-img info --output=json "$box/box.img" | sed -n 's/.*"virtual-size": *\([0-9]*\).*/\1/p')
gib=$(( (vsize + (1 << 30) - 1) >> 30 ))
printf '{"provider":"libvirt","format":"qcow2","virtual_size":%s}\n' "$gib" >"$box/metadata.json"

# The box's own Vagrantfile: direct kernel boot from the files beside it. qemu runs as its own user
# (libvirt-qemu on Debian), which cannot enter a home directory of mode 0700 such as /root, where the
# box lives when vagrant runs as root: then the kernel and initrd are copied once to libvirt's
# /var/lib/libvirt/boot, under a name that is this build's, and booted from there.
build_id=$(cat "$box/vmlinuz" "$box/initrd.img" | sha256sum | cut -c1-12)
cat >"$box/Vagrantfile" <<EOF
# Written by leaderlab's scripts/build-box.sh: direct kernel boot of an ext4 disk (no partition).
require "fileutils"

box_dir = File.dirname(__FILE__)
boot = { "kernel" => File.join(box_dir, "vmlinuz"), "initrd" => File.join(box_dir, "initrd.img") }
libvirt_boot = "/var/lib/libvirt/boot"
# Every directory above the box must let others through (o+x) for qemu to open the files.
ancestors = box_dir.split("/").reject(&:empty?).inject(["/"]) { |acc, part| acc << File.join(acc.last, part) }
reachable = ancestors.all? { |d| File.stat(d).mode & 0o001 != 0 }
if !reachable && File.directory?(libvirt_boot) && File.writable?(libvirt_boot)
  dir = File.join(libvirt_boot, "leaderlab-box-$build_id")
  unless File.file?(File.join(dir, "initrd.img"))
    FileUtils.mkdir_p(dir, mode: 0o755)
    FileUtils.cp(boot["kernel"], File.join(dir, "vmlinuz"))
    FileUtils.cp(boot["initrd"], File.join(dir, "initrd.img.tmp"))
    File.rename(File.join(dir, "initrd.img.tmp"), File.join(dir, "initrd.img"))
  end
  boot = { "kernel" => File.join(dir, "vmlinuz"), "initrd" => File.join(dir, "initrd.img") }
end

Vagrant.configure("2") do |config|
  config.vm.provider :libvirt do |lv|
    lv.kernel = boot["kernel"]
    lv.initrd = boot["initrd"]
    lv.cmd_line = "root=/dev/vda rw console=ttyS0 net.ifnames=0 quiet"
    lv.disk_bus = "virtio"
  end
end
EOF

boxfile=$OUT/$(echo "$NAME" | tr / _).box
tar -C "$box" -cf "$boxfile.tmp" metadata.json Vagrantfile box.img vmlinuz initrd.img
mv "$boxfile.tmp" "$boxfile"
size=$(du -m "$boxfile" | cut -f1)
say "wrote $boxfile ($size MiB; disk ${gib} GiB virtual, $(du -m "$box/box.img" | cut -f1) MiB stored)"

if [ "$ADD" = 1 ]; then
  VAGRANT_CHECKPOINT_DISABLE=1 vagrant box add --force --name "$NAME" "$boxfile" >&2
  # vagrant-libvirt copies a box's disk into libvirt's pool at the first `vagrant up`, under a
  # name of its own with the disk's mtime (so the new box gets a new copy). Older copies of this
  # box's disk are deleted when no volume in the pool (a VM's disk) is backed by them.
  if command -v virsh >/dev/null && virsh -q -c qemu:///system pool-info default >/dev/null 2>&1; then
    virsh -q -c qemu:///system pool-refresh default >/dev/null 2>&1 || true
    prefix=$(echo "$NAME" | sed 's#/#-VAGRANTSLASH-#g')_vagrant_box_image_
    vols=$(virsh -q -c qemu:///system vol-list default | awk '{print $1}')
    for vol in $vols; do
      case $vol in "$prefix"*) ;; *) continue ;; esac
      path=$(virsh -c qemu:///system vol-path --pool default "$vol")
      used=
      for other in $vols; do
        [ "$other" = "$vol" ] && continue
        if virsh -c qemu:///system vol-dumpxml --pool default "$other" 2>/dev/null |
          sed -n '/<backingStore>/,/<\/backingStore>/p' | grep -qF "<path>$path</path>"; then
          used=$other
          break
        fi
      done
      if [ -n "$used" ]; then
        say "keeping libvirt's copy $vol of an older build (the disk $used is backed by it)"
      else
        virsh -q -c qemu:///system vol-delete --pool default "$vol" >/dev/null && say "deleted libvirt's copy $vol of an older build"
      fi
    done
  fi
fi
say "done in $((SECONDS - start)) s: box $NAME, $size MiB"
