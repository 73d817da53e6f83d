/**
 * Entry of the real-model demo service (SmolLM2-135M-Instruct on node-llama-cpp):
 * `PLATFORM_GRPC_HOST=127.0.0.1:9090 PLATFORM_SERVICE_TOKEN=… npx tsx examples/local-llm/main.ts`.
 * `npm start` launches it when the model and the engine are installed (`npm run demo:model`); without
 * them it says how to get them and exits with EX_CONFIG, which the launcher reports without restarting.
 */
import { engineInstalled, findModelFile, HOW_TO_GET_MODEL } from './model-file.js';

const EX_CONFIG = 78;
const modelPath = findModelFile();
if (!modelPath || !engineInstalled()) {
  const missing = [!modelPath && 'the model file', !engineInstalled() && 'node-llama-cpp'].filter(Boolean).join(' and ');
  process.stderr.write(`local-llm: not started, ${missing} missing: ${HOW_TO_GET_MODEL}\n`);
  process.exit(EX_CONFIG);
}

// Loaded only now: without `npm run demo:model` the package is not installed.
const { LocalLlmEngine } = await import('./engine.js');
const { startLocalLlmService } = await import('./service.js');
const engine = await LocalLlmEngine.load({ modelPath, threads: Number(process.env.LOCAL_LLM_THREADS) || 2 });
const service = startLocalLlmService(engine, process.env.LOCAL_LLM_MODEL_NAME || 'smollm2-135m');
await service.ready();
const stop = () =>
  void service
    .stop('shutdown')
    .then(() => engine.close())
    .then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
