/**
 * The async-predict plugin on the MongoDB task store (MONGODB_URI, else mongo-java-server from
 * .ci/mongo-java-server; skipped loudly without either): the whole plugin suite, large payloads in
 * GridFS, and two gateways sharing one database.
 */
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe } from 'vitest';
import { MongoDocStore } from '../../core/storage/mongo-docs.js';
import { TASK_FILES_BUCKET } from '../../core/tasks/doc-task-store.js';
import { connectionDb } from '../../core/tasks/mongo-connection.js';
import type { TestGateway } from '../support/gateway.js';
import { mongoPrerequisite, startMongo, type MongoTestServer } from '../support/mongo-server.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { asyncPredictSuite } from './async-predict.suite.js';

const dbOf = (gw: TestGateway) => {
  const docs = gw.gateway.storage.docs;
  if (!(docs instanceof MongoDocStore)) throw new Error('not the MongoDB store');
  return connectionDb(docs.connection);
};

describe.skipIf(!requirePrerequisite('async-predict on MongoDB', mongoPrerequisite()))('MongoDB', () => {
  let server: MongoTestServer;
  beforeAll(async () => {
    server = await startMongo();
  });
  afterAll(async () => {
    await server?.stop();
  });

  asyncPredictSuite('mongodb', {
    storeConfig: () => ({ kind: 'mongodb', mongodbUri: server.freshDatabaseUri() }),
    shared: true,
    fileSizes: async (gw) => (await dbOf(gw).collection(`${TASK_FILES_BUCKET}.files`).find({}).toArray()).map((f) => Number(f.length)),
    async corruptFileOfSize(gw, size) {
      const db = dbOf(gw);
      const file = await db.collection(`${TASK_FILES_BUCKET}.files`).findOne({ length: size });
      if (!file) throw new Error(`no GridFS file of ${size} bytes`);
      const chunks = db.collection(`${TASK_FILES_BUCKET}.chunks`);
      const chunk = await chunks.findOne({ files_id: file._id, n: 0 });
      const data = Buffer.from((chunk!.data as mongoose.mongo.Binary).buffer);
      data[0] = (data[0] ?? 0) ^ 0xff;
      await chunks.updateOne({ _id: chunk!._id }, { $set: { data: new mongoose.mongo.Binary(data) } });
    },
  });
});
