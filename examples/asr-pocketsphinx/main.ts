/**
 * Example ASR model service: pocketsphinx behind the SDK. Run by `npm start`
 * (examples/demo/gateway.yaml) when the engine is installed, or by hand:
 *   PLATFORM_GRPC_HOST=127.0.0.1:9090 PLATFORM_SERVICE_TOKEN=<token> npx tsx examples/asr-pocketsphinx/main.ts
 * Needs Debian's python3-pocketsphinx and pocketsphinx-en-us. Env: POCKETSPHINX_PYTHON (default
 * /usr/bin/python3), POCKETSPHINX_MODEL_DIR (default /usr/share/pocketsphinx/model/en-us),
 * ASR_MAX_RECOGNIZERS (recognizers at once, default twice the cores; past it a stream gets 503 asr.busy).
 */
import { serveModel } from '@model-gateway/sdk';
import { checkPocketsphinx } from './recognizer.js';
import { ASR_DESCRIPTOR, createAsrHandlers } from './service.js';

const python = process.env.POCKETSPHINX_PYTHON || '/usr/bin/python3';
const check = checkPocketsphinx(python);
if (!check.ok) {
  console.error(`asr-pocketsphinx not started: ${check.reason} (apt-get install python3-pocketsphinx pocketsphinx-en-us)`);
  process.exit(78); // EX_CONFIG
}

const service = serveModel(
  createAsrHandlers({
    python,
    modelDir: process.env.POCKETSPHINX_MODEL_DIR,
    maxRecognizers: Number(process.env.ASR_MAX_RECOGNIZERS) || undefined,
  }),
  { descriptor: ASR_DESCRIPTOR },
);
const stop = () => void service.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
await service.ready();
console.log('asr-pocketsphinx connected');
