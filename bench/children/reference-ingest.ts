/**
 * Child process of bench/webhook-storm.ts: the smallest durable webhook ingest worth comparing against, written
 * for the benchmark only. `node:http`, the Standard Webhooks signature checked with node:crypto's HMAC and
 * `timingSafeEqual` (since issue 30, when the connector stopped using the standardwebhooks package's JavaScript
 * HMAC: the floor verifies as cheaply as the connector can), then one Redis round trip (`SET NX` of the event id
 * and, when it was new, `RPUSH` of the body) before the 202. It does nothing with the events: it is the floor the
 * connector's acknowledgement is measured against, in the same run, on the same machine.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
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
};

/** Lua lives in .lua files (issue 29), the bench's own too; read from the project root, whether run from src or dist. */
const INGEST = readFileSync(
  join(findProjectRoot(import.meta.url), 'bench', 'children', 'reference-ingest.lua'),
  'utf8',
);

/** Standard Webhooks in a few lines: 5 minutes either way, any `v1` signature of the list. */
function verified(key: Buffer, req: IncomingMessage, body: Buffer): string | null {
  const id = req.headers['webhook-id'];
  const timestamp = Number(req.headers['webhook-timestamp']);
  const signatures = req.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof signatures !== 'string' || !Number.isInteger(timestamp)) return null;
  if (Math.abs(Date.now() / 1000 - timestamp) > 300) return null;
  const expected = Buffer.from(
    `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`,
  );
  for (const s of signatures.split(' ')) {
    const given = Buffer.from(s);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return id;
  }
  return null;
}

await serveRpc<ReferenceIngestProtocol, ReferenceIngestConfig, ReferenceIngestReady>(async (config) => {
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
  const key = Buffer.from(config.secret.replace(/^whsec_/, ''), 'base64');
  const counts = { accepted: 0, duplicates: 0, refused: 0 };
  const answer = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const id = verified(key, req, body);
      if (id === null) {
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
    handlers: { received: () => ({ ...counts }) },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await redis.quit();
    },
  };
});
