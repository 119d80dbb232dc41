/**
 * Child process of bench/webhook-storm.ts: the smallest durable webhook ingest worth comparing against, written
 * for the benchmark only. `node:http`, the Standard Webhooks signature checked with the same package the
 * connector uses, then one Redis round trip (`SET NX` of the event id and, when it was new, `RPUSH` of the body)
 * before the 202. It does nothing with the events: it is the floor the connector's acknowledgement is measured
 * against, in the same run, on the same machine.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { findProjectRoot } from '../../src/util/project-root.js';
import { serveRpc } from '../support/rpc.js';

export interface ReferenceIngestConfig {
  redisUrl: string;
  prefix: string;
  secret: string;
}

export interface ReferenceIngestReady {
  url: string;
}

export type ReferenceIngestProtocol = {
  received: { args: null; result: { accepted: number; duplicates: number; refused: number } };
  /** CPU seconds (user + system) this process used so far. */
  cpu: { args: null; result: { seconds: number } };
};

/** Lua lives in .lua files (issue 29), the bench's own too; read from the project root, whether run from src or dist. */
const INGEST = readFileSync(
  join(findProjectRoot(import.meta.url), 'bench', 'children', 'reference-ingest.lua'),
  'utf8',
);

await serveRpc<ReferenceIngestProtocol, ReferenceIngestConfig, ReferenceIngestReady>(async (config) => {
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
  const verifier = new Webhook(config.secret);
  const counts = { accepted: 0, duplicates: 0, refused: 0 };
  const answer = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      try {
        verifier.verify(body, {
          'webhook-id': id,
          'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
          'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
        });
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        counts.refused += 1;
        return answer(res, 401, '{"error":"invalid signature"}');
      }
      try {
        const fresh = await redis.eval(
          INGEST,
          2,
          `${config.prefix}:ref:seen:${id}`,
          `${config.prefix}:ref:events`,
          body,
        );
        if (fresh === 1) counts.accepted += 1;
        else counts.duplicates += 1;
        answer(res, fresh === 1 ? 202 : 200, '{"received":true}');
      } catch {
        answer(res, 503, '{"error":"retry"}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    ready: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/reports` },
    handlers: {
      received: () => ({ ...counts }),
      cpu: () => {
        const { user, system } = process.cpuUsage();
        return { seconds: (user + system) / 1e6 };
      },
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await redis.quit();
    },
  };
});
