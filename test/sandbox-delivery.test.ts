import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox, type ReportSandbox } from '../src/sandbox/index.js';

/** Webhook delivery: retries with the same id, failures recorded, never a crash. */

interface Arrival {
  headers: IncomingHttpHeaders;
  body: string;
}

async function startReceiver(
  statuses: number[],
): Promise<{ url: string; arrivals: Arrival[]; server: Server }> {
  const arrivals: Arrival[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrivals.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrivals, server };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function track(sandbox: ReportSandbox, server?: Server): ReportSandbox {
  cleanups.push(async () => {
    await sandbox.close();
    if (server) {
      server.closeAllConnections();
      server.close();
    }
  });
  return sandbox;
}

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const slugOfPublished = (sandbox: ReportSandbox) => sandbox.listReports().find((r) => r.published)!.slug;

describe('webhook delivery', () => {
  it('retries a non-2xx answer with the same webhook-id and a fresh valid signature', async () => {
    const receiver = await startReceiver([500, 502, 200]);
    const sandbox = track(
      createSandbox({ webhookUrl: receiver.url, webhookSecret: SECRET, webhookRetryDelaysMs: [10, 10, 10] }),
      receiver.server,
    );
    const event = sandbox.emitEvent('alert.fired', { slug: slugOfPublished(sandbox) });
    await sandbox.waitForDeliveries();
    expect(receiver.arrivals).toHaveLength(3);
    expect(new Set(receiver.arrivals.map((a) => a.headers['webhook-id']))).toEqual(new Set([event.id]));
    const verifier = new Webhook(SECRET);
    for (const arrival of receiver.arrivals) {
      expect(() =>
        verifier.verify(arrival.body, {
          'webhook-id': String(arrival.headers['webhook-id']),
          'webhook-timestamp': String(arrival.headers['webhook-timestamp']),
          'webhook-signature': String(arrival.headers['webhook-signature']),
        }),
      ).not.toThrow();
    }
    expect(sandbox.deliveries).toEqual([
      expect.objectContaining({
        id: event.id,
        type: 'alert.fired',
        status: 'delivered',
        attempts: 3,
        lastStatus: 200,
      }),
    ]);
  });

  it('records a failure after every retry and keeps serving', async () => {
    const receiver = await startReceiver([500, 500, 500]);
    const sandbox = track(
      createSandbox({ webhookUrl: receiver.url, webhookSecret: SECRET, webhookRetryDelaysMs: [5, 5] }),
      receiver.server,
    );
    const listening = await sandbox.listen(0);
    sandbox.emitEvent('score.changed', { slug: slugOfPublished(sandbox) });
    await sandbox.waitForDeliveries();
    expect(sandbox.deliveries[0]).toMatchObject({ status: 'failed', attempts: 3, lastStatus: 500 });
    const answer = await fetch(`${listening.url}/v1/search`, {
      headers: { authorization: 'Bearer sk_sandbox_read' },
    });
    expect(answer.status).toBe(200);
  });

  it('survives a receiver that is not there', async () => {
    const receiver = await startReceiver([]);
    const deadUrl = receiver.url;
    receiver.server.close();
    await once(receiver.server, 'close');
    const sandbox = track(
      createSandbox({ webhookUrl: deadUrl, webhookSecret: SECRET, webhookRetryDelaysMs: [5] }),
    );
    sandbox.emitEvent('score.changed', { slug: 'x' });
    await sandbox.waitForDeliveries();
    expect(sandbox.deliveries[0]).toMatchObject({ status: 'failed', attempts: 2 });
    expect(sandbox.deliveries[0]?.lastError).toBeTruthy();
  });

  it('abandons pending retries when closed', async () => {
    const receiver = await startReceiver([500]);
    const sandbox = createSandbox({
      webhookUrl: receiver.url,
      webhookSecret: SECRET,
      webhookRetryDelaysMs: [60_000],
    });
    cleanups.push(async () => {
      receiver.server.closeAllConnections();
      receiver.server.close();
    });
    sandbox.emitEvent('score.changed', { slug: 'x' });
    await expect.poll(() => receiver.arrivals.length).toBe(1);
    await sandbox.close();
    expect(sandbox.deliveries[0]).toMatchObject({ status: 'abandoned', attempts: 1 });
  });

  it('records events without delivering when no webhook URL is set, and delivers once one is configured', async () => {
    const receiver = await startReceiver([]);
    const sandbox = track(createSandbox(), receiver.server);
    const slug = slugOfPublished(sandbox);
    sandbox.updateReport(slug, { score: { overall: 12.5 } });
    expect(sandbox.events.map((e) => e.type)).toEqual(['score.changed']);
    expect(sandbox.deliveries).toEqual([]);
    sandbox.configureWebhook(receiver.url, 'plain-secret');
    sandbox.updateReport(slug, { score: { overall: 13.5 } });
    await sandbox.waitForDeliveries();
    expect(receiver.arrivals).toHaveLength(1);
    const arrival = receiver.arrivals[0]!;
    const verifier = new Webhook(new TextEncoder().encode('plain-secret'), { format: 'raw' });
    const event = verifier.verify(arrival.body, {
      'webhook-id': String(arrival.headers['webhook-id']),
      'webhook-timestamp': String(arrival.headers['webhook-timestamp']),
      'webhook-signature': String(arrival.headers['webhook-signature']),
    });
    expect(event).toMatchObject({ type: 'score.changed', data: { slug, score: { overall: 13.5 } } });
  });
});
