#!/usr/bin/env bash
# The LiteLLM proxy, the bench's second peer, in its own virtual environment (bench/.venv-litellm,
# gitignored): the newest litellm[proxy] from PyPI that installs on this Python, upgraded when a newer
# one is out. Prints the installed version. Run by `npm run bench` before each run, and by .ci/run (the smoke test never installs it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ -x .venv-litellm/bin/python ]] || "${PYTHON3:-python3}" -m venv .venv-litellm
.venv-litellm/bin/python -m pip install --disable-pip-version-check -q -U 'litellm[proxy]'
.venv-litellm/bin/python -c 'import importlib.metadata as m; print(m.version("litellm"))'
