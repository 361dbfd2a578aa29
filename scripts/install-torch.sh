#!/usr/bin/env bash
# Installs LibTorch (the PyPI wheel torch==2.11.0) into the project venv, from PyPI alone.
# `install-torch.sh cpp VENV`: the wheel without its dependencies plus the two CUDA runtime libraries
# libtorch_cpu.so needs at load time (cudart, cupti), enough to build and run the C++ code on CPU.
# `install-torch.sh ref VENV`: the full torch (with every NVIDIA dependency, or `import torch` fails),
# transformers and safetensors, the reference the parity tests compare against (tests/models), and
# accelerate and deepspeed (DeepSpeed from its source archive, no compiled ops: DS_BUILD_OPS=0),
# tokenizers and megatron-core, the references of the data parity test (tests/datasets/parity.py).
# Idempotent: a stamp file per mode makes a second run instant. Extra wheel folders: PIP_FIND_LINKS.
set -euo pipefail

mode=${1:?usage: install-torch.sh cpp|ref VENV}
venv=${2:?usage: install-torch.sh cpp|ref VENV}
python=${PYTHON:-python3}

readonly torch_version=2.11.0
# The exact builds torch 2.11.0's metadata pins (via cuda-toolkit 13.0.2).
readonly cpp_packages=("torch==${torch_version}" "nvidia-cuda-runtime==13.0.96"
                       "nvidia-cuda-cupti==13.0.85")
# accelerate and deepspeed: the consumers the exports are tested against (tests/bench);
# tokenizers and megatron-core, the references of the data parity test (tests/datasets/parity.py).
readonly ref_packages=("torch==${torch_version}" "transformers==5.24.0" "safetensors==0.8.0"
                       "accelerate==1.15.0" "deepspeed==0.19.8"
                       "tokenizers==0.23.3" "megatron-core==0.16.1")

case "$mode" in
  cpp) packages=("${cpp_packages[@]}"); pip_flags=(--no-deps) ;;
  ref) packages=("${ref_packages[@]}"); pip_flags=() ;;
  *) echo "install-torch: unknown mode '$mode' (valid: cpp, ref)" >&2; exit 2 ;;
esac

stamp="$venv/.gpudays-$mode-stamp"
wanted="${packages[*]}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  exit 0
fi

ensure_venv_module() {
  "$python" -c 'import ensurepip, venv' 2>/dev/null && return 0
  echo "install-torch: installing python3-venv"
  local sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
    python3-venv >/dev/null
}

if [ ! -x "$venv/bin/python" ]; then
  ensure_venv_module
  "$python" -m venv "$venv"
fi

echo "install-torch: installing ${wanted} into $venv ($mode)"
start=$(date +%s)
DS_BUILD_OPS=0 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pip_flags[@]}" \
  "${packages[@]}"
echo "install-torch: done in $(( $(date +%s) - start )) s"
echo "$wanted" > "$stamp"
