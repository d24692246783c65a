#!/usr/bin/env bash
# fp8gemm's vLLM and SGLang plugins inside the real engines (tests/engines/), on this machine
# without a GPU: a venv with the engines' torch (2.14) and the vllm 0.34.0 and sglang 0.5.23 wheels,
# installed without their dependency trees (CUDA kernels, serving stacks): only the packages that
# importing their plugin loaders, kernel selection, FP8 linear paths and model runners needs, at the
# versions tested here. The extension is built against that torch (the build for any torch >= 2.11),
# then pytest. FP8GEMM_ENGINE_TESTS=0 in scripts/test.sh skips all of this.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${ENGINES_VENV:-build-engines}
# torch: the engines' minor version (vLLM pins 2.14.0, SGLang 2.14.1; one venv holds both engines).
TORCH=torch==2.14.1
ENGINES=(vllm==0.34.0 sglang==0.5.23)
IMPORTED=(
  aiohappyeyeballs==2.7.1 aiohttp==3.14.5 aiosignal==1.4.0 annotated-doc==0.0.7 annotated-types==0.8.0
  anyio==4.16.0 apache-tvm-ffi==0.1.11 attrs==26.1.0 cachetools==8.0.2 cbor2==6.3.0 certifi==2026.10.19.post1
  click==8.5.1 cloudpickle==3.1.3 compressed-tensors==0.20.1 dill==0.4.1 einops==0.8.2 fastapi==0.165.0
  frozenlist==1.8.0 gguf==0.19.0 h11==0.16.0 hf-xet==1.8.0 httpcore2==2.17.0 httpx2==2.17.0
  huggingface_hub==2.4.0 idna==3.20 ipython==9.18.1 llguidance==1.9.1 loguru==0.7.3 markdown-it-py==4.3.0
  mdurl==0.1.2 msgspec==0.23.0 multidict==7.2.1 openai==3.63.0 opentelemetry-api==1.45.3 orjson==3.13.0
  partial-json-parser==0.2.1.1.post7 pillow==13.0.0 prometheus_client==0.26.0 propcache==0.5.4 psutil==7.2.2
  py-cpuinfo==9.0.0 pybase64==1.5.1 pydantic==2.14.4 pydantic_core==2.50.5 PyYAML==6.0.4 pyzmq==27.3.0
  regex==2026.12.2 requests==2.34.2 rich==15.0.0 safetensors==0.8.0 sentencepiece==0.2.3 shellingham==1.5.4
  sniffio==1.3.1 starlette==1.10.0 tokenizers==0.23.3 torchvision==0.29.2 tqdm==4.70.1 traitlets==5.16.1
  transformers==5.19.0 truststore==0.10.5 typer==0.29.2 typing-inspection==0.4.5 urllib3==2.8.0
  uvicorn==0.55.0 uvloop==0.23.0 xgrammar==0.2.8 yarl==1.25.1
)
if ! "$VENV/bin/python" -c "import torch, pytest, vllm, sglang" 2> /dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$TORCH" pytest numpy
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps "${ENGINES[@]}" "${IMPORTED[@]}"
fi
BUILD=${BUILD_ENGINES:-build-engines-torch}
PYTHON="$VENV/bin/python" BUILD="$BUILD" BUNDLE="$BUILD/bundle" \
  scripts/make_torch_bundle.sh -DFP8GEMM_WITH_CUTLASS=OFF > /dev/null
FP8GEMM_TORCH_LIBRARY="$(cd "$BUILD/bundle" && pwd)/libfp8gemm_torch.so" \
  "$VENV/bin/python" -m pytest tests/engines -q -rs -p no:cacheprovider
