/**
 * Example TTS model service: espeak-ng behind the SDK. Run by `npm start` (examples/demo/gateway.yaml)
 * when espeak-ng is installed, or by hand:
 *   PLATFORM_GRPC_HOST=127.0.0.1:9090 PLATFORM_SERVICE_TOKEN=<token> npx tsx examples/tts-espeak/main.ts
 * Env: ESPEAK_NG_BIN (default espeak-ng), TTS_DEFAULT_VOICE (default en-us).
 */
import { serveModel } from '@model-gateway/sdk';
import { TTS_DESCRIPTOR, createTtsHandlers } from './service.js';

const service = serveModel(createTtsHandlers({ binary: process.env.ESPEAK_NG_BIN, defaultVoice: process.env.TTS_DEFAULT_VOICE }), {
  descriptor: TTS_DESCRIPTOR,
});
const stop = () => void service.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
await service.ready();
console.log('tts-espeak connected');
