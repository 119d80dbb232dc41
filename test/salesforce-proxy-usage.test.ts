import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CALL_HEADER } from '../connectors/salesforce/api/response-observer.js';
import { decodeChangeCursor } from '../connectors/salesforce/changes/cursors.js';
import { createLocalSalesforce } from '../connectors/salesforce/local/index.js';
import { fixedTokens, localSalesforceConnector, openGate } from './support/local-salesforce-connector.js';

/**
 * Through an HTTP proxy, jsforce makes a proxy agent of its own per call, which would bypass the dispatcher
 * that reads every response's `Sforce-Limit-Info` and `Date`. A small forward proxy (CONNECT tunnels and
 * absolute-URI requests, loopback targets only) stands between the connector and the local Salesforce here:
 * the readings must still be taken, and the per-call tag must not leave the process.
 */

interface ForwardProxy {
  url: string;
  /** Connections and requests it carried. */
  carried: number;
  /** Everything clients sent through it (the local Salesforce speaks plain HTTP, so tunnels are readable). */
  sent: string[];
  close(): Promise<void>;
}

async function startForwardProxy(): Promise<ForwardProxy> {
  const sockets = new Set<Socket>();
  const state = { carried: 0, sent: [] as string[] };
  const server: Server = createServer((req, res) => {
    state.carried++;
    const target = new URL(req.url ?? '');
    if (target.hostname !== '127.0.0.1' && target.hostname !== 'localhost') {
      res.writeHead(403).end();
      return;
    }
    state.sent.push(JSON.stringify(req.headers));
    const upstream = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    state.carried++;
    const [host, port] = (req.url ?? '').split(':');
    if (host !== '127.0.0.1' && host !== 'localhost') {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      client.on('data', (chunk: Buffer) => state.sent.push(chunk.toString('latin1')));
      client.pipe(upstream);
      upstream.pipe(client);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    get carried() {
      return state.carried;
    },
    sent: state.sent,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

describe('Sforce-Limit-Info through an HTTP proxy', () => {
  it('is read from REST and Metadata API answers, with the server Date, and the call tag stays home', async () => {
    const orgNow = Date.parse('2026-01-15T09:30:00Z');
    const local = createLocalSalesforce({ dailyApiLimit: 5000, now: () => orgNow });
    const server = await local.listen();
    running.push(server);
    const proxy = await startForwardProxy();
    running.push(proxy);
    const connector = localSalesforceConnector(
      local,
      server.url,
      { tokens: fixedTokens(local), gate: openGate },
      { httpOptions: { retry: { maxRetries: 0 }, httpProxy: proxy.url } },
    );

    await connector.ensureFields(); // Metadata API (SOAP) calls, which jsforce itself never reads
    expect(connector.apiUsage()).toMatchObject({ used: local.apiUsage().used, limit: 5000 });

    local.setApiUsage(40);
    const [account] = local.seedAccounts(1);
    await connector.readCompanies([account!.Id]);
    expect(connector.apiUsage()).toMatchObject({ used: local.apiUsage().used, limit: 5000 });

    // The change baseline stands at the server's clock (its Date header), not this process's.
    const baseline = await connector.listChangedSince(null);
    expect(decodeChangeCursor(baseline.cursor).s.slice(0, 10)).toBe('2026-01-15');

    expect(proxy.carried).toBeGreaterThan(0);
    expect(proxy.sent.join('').toLowerCase()).not.toContain(CALL_HEADER);
  });
});
