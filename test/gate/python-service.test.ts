import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { requirePrerequisite } from '../support/prerequisites.js';
import { generatePythonStubs, pythonPath, pythonPrerequisite, pythonScriptsDir } from '../support/python.js';
import { ECHO_TOKEN, TEST_KEY, startTestGateway, testConfigInput } from '../support/gateway.js';
import { json, processUnary, rawClient } from '../support/raw-gate-client.js';
import { capturingLogger } from '../ops/log-capture.js';

const ready = requirePrerequisite('Python grpcio model service', pythonPrerequisite(['grpc', 'grpc_tools']));

describe.skipIf(!ready)('a model service written in Python with grpcio', () => {
  it('registers over processAsync, heartbeats and answers a predict and an ext call with parameters', async () => {
    // The gateway's log at debug level, kept: a service that never gets ready is reported with what the
    // gateway saw of its streams (opened, registered, refused, closed before registering).
    const log = capturingLogger('debug');
    const gw = await startTestGateway(testConfigInput({ plugins: { enabled: ['sync-predict'] } }), { logger: log.logger });
    const stubs = mkdtempSync(join(tmpdir(), 'gate-py-'));
    await generatePythonStubs(stubs);
    // PYTHONFAULTHANDLER: a service that never gets ready is stopped with SIGABRT, and Python then
    // prints where each of its threads was, which the error below carries.
    const child = spawn(pythonPath(), [join(pythonScriptsDir, 'gate_service.py'), stubs, gw.grpcAddress, ECHO_TOKEN], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONFAULTHANDLER: '1', GATE_SERVICE_TRACE: '1' },
    });
    let stderr = '';
    let stdout = '';
    const streamLog = () =>
      log.lines
        .filter((line) => /service (stream|instance)/.test(String(line.msg)))
        .map((line) => `  ${line.time} ${String(line.msg)} ${JSON.stringify({ peer: line.peer, reason: line.reason, err: line.err })}`)
        .join('\n') || '  none: no processAsync stream reached the gateway';
    child.stderr.on('data', (c) => (stderr += c));
    const client = rawClient(gw.grpcAddress);
    try {
      await new Promise<void>((resolve, reject) => {
        // Ready in about half a second here; the bound is for a machine busy with the rest of the suite.
        let gaveUp = false;
        const timer = setTimeout(() => {
          gaveUp = true;
          child.kill('SIGABRT');
        }, 40_000);
        // Read as a whole, not chunk by chunk: a line split across two reads is still seen.
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes('READY echo')) {
            clearTimeout(timer);
            resolve();
          }
        });
        // 'close': after its stderr has been read to the end (the stacks come last).
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          reject(
            new Error(
              (gaveUp
                ? `python service not ready within 40 s; its stdout: ${JSON.stringify(stdout.slice(-500))}; its stderr (the kinds of message it got first, then the stacks of its threads):\n${stderr.slice(-6000)}`
                : `python service exited (${code ?? signal}): ${stderr}`) + `\nthe gateway's service streams:\n${streamLog()}`,
            ),
          );
        });
      });
      const res = await processUnary(client, {
        account: 'demo',
        model: 'echo',
        authToken: TEST_KEY,
        headers: { 'Z-requestId': 'py-1' },
        predict: { data: json({ hello: 'python' }) },
      });
      expect(res.error).toBeUndefined();
      // The service reads the gateway's Z-requestId (a UUID); the caller's 'py-1' is not passed on.
      expect(JSON.parse(res.predict!.data!.json!)).toEqual({
        python: true,
        echo: { hello: 'python' },
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      // ext parameters decode as PayloadProto on the service side (a string map would drop its stream),
      // reached under the {gateway} prefix the public SDK's REST client uses.
      const ext = await request(gw.httpUrl)
        .post('/api/platformgateway/account/demo/model/echo/ext')
        .set('PLATFORM-API-KEY', TEST_KEY)
        .send({ methodName: 'describe', params: { verbose: 'yes', limit: '3' } })
        .expect(200);
      expect(ext.body).toEqual({ python: true, method: 'describe', params: { verbose: 'yes', limit: '3' } });
      // It keeps the stream alive past the 3 intervals + 1 s silence limit with its own heartbeats.
      await new Promise((r) => setTimeout(r, 1800));
      expect(gw.gateway.gate.instances(10)).toHaveLength(1);
      // What a failure would report: the stream's arrival and its registration, from the gateway's log.
      expect(streamLog()).toMatch(/service stream opened \{"peer":"127\.0\.0\.1:\d+"\}\n.*service instance connected/);
    } finally {
      child.kill('SIGKILL');
      client.close();
      await gw.close();
    }
  }, 60_000);
});
