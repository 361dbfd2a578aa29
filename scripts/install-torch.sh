#!/usr/bin/env bash
# Installs LibTorch (the PyPI wheel torch==2.11.0) into the project venv, from PyPI alone.
# `install-torch.sh cpp VENV`: the wheel without its dependencies plus the two CUDA runtime libraries
# libtorch_cpu.so needs at load time (cudart, cupti), enough to build and run the C++ code on CPU.
# `install-torch.sh ref VENV`: the full torch (with every NVIDIA dependency, or `import torch` fails),
# transformers and safetensors, the reference the parity tests compare against (tests/models), and
# accelerate and deepspeed (DeepSpeed from its source archive, no compiled ops: DS_BUILD_OPS=0),
# tokenizers and megatron-core, the references of the data parity test (tests/datasets/parity.py).
# `install-torch.sh ref4 VENV`: the reference benchmark's transformers 4.42.3 and accelerate 0.32.0
# (its pyproject.toml pins) with the dependencies that differ from 5's, into VENV/transformers4
# (--target, no dependencies): PYTHONPATH=VENV/transformers4 puts them before the venv's own, so
# the export test checks TrainingArguments of both majors against one torch (tests/exports).
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

# transformers 4.42 wants numpy < 2 and huggingface_hub < 1 (which needs requests).
readonly ref4_packages=("transformers==4.42.3" "accelerate==0.32.0" "tokenizers==0.19.1"
                        "huggingface-hub==0.24.7" "numpy==1.26.4" "requests==2.32.3"
                        "urllib3==2.2.3" "certifi==2024.8.30" "charset-normalizer==3.4.0")

case "$mode" in
  cpp) packages=("${cpp_packages[@]}"); pip_flags=(--no-deps) ;;
  ref) packages=("${ref_packages[@]}"); pip_flags=() ;;
  ref4) packages=("${ref4_packages[@]}"); pip_flags=(--no-deps --target "$venv/transformers4") ;;
  *) echo "install-torch: unknown mode '$mode' (valid: cpp, ref, ref4)" >&2; exit 2 ;;
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

[ "$mode" = ref4 ] && rm -rf "$venv/transformers4"
echo "install-torch: installing ${wanted} into $venv ($mode)"
start=$(date +%s)
DS_BUILD_OPS=0 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pip_flags[@]}" \
  "${packages[@]}"
echo "install-torch: done in $(( $(date +%s) - start )) s"
echo "$wanted" > "$stamp"
