/**
 * Issue 28, "Across gateways": four gateways on one MongoDB (the MongoDB-wire server) spend one key's
 * budget at full speed, each with requests back to back; none calls the store on the request path
 * (leased slices of the budget). The spend past the budget stays under 1% of it plus one request per
 * gateway, and the budget is spent (no gateway refuses far below it).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoService } from '../../examples/echo-service/service.js';
import { silentLogger, type ModelService } from '../../sdk/index.js';
import { ECHO_TOKEN, eventually, testConfigInput, type TestGateway } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { OWNER, signedIn, startTestGateway } from './support.js';

const GATEWAYS = 4;
const BUDGET = 30_000;
/** 40 words in, 40 echoed out: about 80 tokens an answer, so the budget is a few hundred answers. */
const CONTENT = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');

function config(mongodbUri: string): Record<string, any> {
  return {
    ...testConfigInput(),
    store: { kind: 'mongodb', mongodbUri },
    services: [{ id: 10, name: 'echo', account: 'demo', public: true, family: 'openai', connectionTokens: [{ token: ECHO_TOKEN }] }],
    plugins: { enabled: ['user-space', 'chatapi'] },
    userSpace: { syncIntervalMs: 200, users: [{ ...OWNER, accounts: { demo: 'owner' } }] },
  };
}

describe.skipIf(!requirePrerequisite('budget overshoot across gateways on MongoDB', mongoPrerequisite()))(
  'one budget spent by four gateways at once',
  () => {
    let mongo: MongoTestServer;
    const gateways: TestGateway[] = [];
    let echo: ModelService | undefined;

    beforeAll(async () => {
      mongo = await startMongo();
    }, 60_000);
    afterAll(async () => {
      await echo?.stop();
      await Promise.all(gateways.map((g) => g.close()));
      await mongo?.stop();
    });

    it(`spends beyond a ${BUDGET}-token budget less than 1% of it plus one request per gateway`, async () => {
      const uri = mongo.freshDatabaseUri();
      for (let i = 0; i < GATEWAYS; i++) gateways.push(await startTestGateway(config(uri)));
      echo = startEchoService({ gateways: gateways.map((g) => g.grpcAddress), connectionToken: ECHO_TOKEN, logger: silentLogger });
      await echo.ready();
      const owner = await signedIn(gateways[0]!, OWNER);
      const created = await owner.call('POST', '/api/platformcore/account/demo/api-keys', {
        name: 'shared-budget',
        permissions: ['MODEL_REQUESTS'],
        budgets: [{ unit: 'tokens', limit: BUDGET, period: 'total' }],
      });
      expect(created.status).toBe(201);
      const { key } = (await created.json()) as { key: string };
      const clients = gateways.map((g) => new OpenAI({ apiKey: key, baseURL: `${g.httpUrl}/api/adapters/chatapi/v1`, maxRetries: 0 }));
      // Every gateway knows the key before the race starts.
      for (const client of clients) {
        await eventually(
          async () => {
            try {
              await client.models.list();
              return true;
            } catch {
              return false;
            }
          },
          5000,
          'the key on every gateway',
        );
      }

      let spent = 0;
      let largest = 0;
      const answersPer = new Array<number>(GATEWAYS).fill(0);
      // Each gateway's caller sends requests back to back until its gateway refuses.
      await Promise.all(
        clients.map(async (client, i) => {
          for (;;) {
            try {
              const answer = await client.chat.completions.create({ model: 'demo/echo', messages: [{ role: 'user', content: CONTENT }] });
              const tokens = answer.usage!.prompt_tokens + answer.usage!.completion_tokens;
              spent += tokens;
              largest = Math.max(largest, tokens);
              answersPer[i]! += 1;
            } catch (err) {
              if (err instanceof OpenAI.APIError && err.status === 429 && err.type === 'insufficient_quota') return;
              throw err;
            }
          }
        }),
      );
      const overshoot = Math.max(0, spent - BUDGET);
      process.stdout.write(
        `budget ${BUDGET} tokens, ${GATEWAYS} gateways: spent ${spent} (answers per gateway ${answersPer.join(', ')}), ${overshoot} past the budget; bound ${BUDGET * 0.01 + GATEWAYS * largest}\n`,
      );
      expect(answersPer.every((n) => n > 0)).toBe(true);
      expect(overshoot).toBeLessThan(BUDGET * 0.01 + GATEWAYS * largest);
      // And spent, not refused early: what gateways still held unspent when the others ran out is small.
      expect(spent).toBeGreaterThan(BUDGET * 0.9);
    }, 180_000);
  },
);
