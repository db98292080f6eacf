#!/usr/bin/env bash
# OpenSSH server for the ssh-backend tests (tests/profiling/test_backends_ssh.py start their own
# sshd on 127.0.0.1 with throwaway keys; nothing is configured or started system-wide here).
set -euo pipefail
if [ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "20-sshd: not root; install openssh-server yourself to run the ssh tests" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends openssh-server openssh-client >/dev/null
# Debian's postinst may start the system sshd where an init system runs; the tests do not need it.
mkdir -p /run/sshd
