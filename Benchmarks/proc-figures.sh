#!/bin/bash
# What the relay benchmarks read off processes and the relay, sourced by each of them:
#   . ./Benchmarks/proc-figures.sh   # from the repository root; then: rss_kb "$pid"; cpu_ticks "$pid"; varz "$mport" connections
tick=$(getconf CLK_TCK)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
varz() { curl -s "http://127.0.0.1:$1/varz" | python3 -c "import json,sys; print(json.load(sys.stdin)[\"$2\"])"; }
