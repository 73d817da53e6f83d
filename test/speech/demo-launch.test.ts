import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { launchServices, type LaunchedServices } from '../../core/bin/launcher.js';
import { loadConfigFile } from '../../core/config/load.js';
import { silentLogger } from '../../core/observe/logger.js';
import { readWav } from '../../core/speech/wav.js';
import { TEST_KEY, eventually, startTestGateway, type TestGateway } from '../support/gateway.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { ASR_TOKEN, TTS_TOKEN, speechConfigInput, speechEnginesPrerequisite } from '../support/speech.js';

const DEMO = fileURLToPath(new URL('../../examples/demo/gateway.yaml', import.meta.url));

/** The speech part of `npm start`: the demo config and the example services as child processes. */
describe('speech in the demo (npm start)', () => {
  let gw: TestGateway | undefined;
  let launched: LaunchedServices | undefined;

  afterEach(async () => {
    await launched?.stop();
    launched = undefined;
    await gw?.close();
    gw = undefined;
  });

  it('declares demo/tts and demo/asr, the audio bridges, and launch entries gated on the engines', () => {
    const config = loadConfigFile(DEMO, { env: {} });
    const names = config.services.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['tts', 'asr']));
    expect(config.plugins.enabled).toEqual(expect.arrayContaining(['audio-speech', 'audio-transcriptions']));
    const tts = config.launch.find((l) => l.name === 'tts')!;
    const asr = config.launch.find((l) => l.name === 'asr')!;
    expect(tts.requires).toEqual(['espeak-ng']);
    expect(asr.requires).toContain('pocketsphinx_continuous');
    for (const entry of [tts, asr]) {
      expect(existsSync(entry.module)).toBe(true);
      expect(entry.env.PLATFORM_SERVICE_TOKEN).toBeTruthy();
    }
  });

  const ready = requirePrerequisite('speech example services as processes', speechEnginesPrerequisite());

  it.skipIf(!ready)('starts both example services as processes that register and answer over HTTP', async () => {
    gw = await startTestGateway(speechConfigInput(['audio-speech', 'audio-transcriptions']));
    const demo = loadConfigFile(DEMO, { env: {} });
    const token = { tts: TTS_TOKEN, asr: ASR_TOKEN } as Record<string, string>;
    const entries = demo.launch
      .filter((l) => l.name === 'tts' || l.name === 'asr')
      .map((l) => ({ ...l, env: { ...l.env, PLATFORM_SERVICE_TOKEN: token[l.name]! } }));
    launched = launchServices(entries, gw.grpcAddress, silentLogger());
    await eventually(
      () => gw!.gateway.gate.instances(20).length === 1 && gw!.gateway.gate.instances(21).length === 1,
      30_000,
      'both services to register',
    );

    const base = `${gw.httpUrl}/api/adapters/chatapi/v1/audio`;
    const speech = await fetch(`${base}/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/tts', input: 'turn on the light', voice: 'alloy' }),
    });
    expect(speech.status).toBe(200);
    const wav = Buffer.from(await speech.arrayBuffer());
    expect(readWav(wav).pcm.length).toBeGreaterThan(24000);

    const form = new FormData();
    form.set('model', 'demo/asr');
    form.set('response_format', 'text');
    form.set('provider_specific', JSON.stringify({ phrases: ['hello world', 'turn on the light'] }));
    form.set('file', new Blob([wav], { type: 'audio/wav' }), 'speech.wav');
    const transcript = await fetch(`${base}/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}` },
      body: form,
    });
    expect(transcript.status).toBe(200);
    expect(await transcript.text()).toBe('turn on the light');
  });
});
