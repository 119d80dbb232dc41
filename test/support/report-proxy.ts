import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small HTTP proxy in front of the report sandbox, for answers the sandbox does not give by itself: a 429
 * with a short or no `Retry-After`, and report bodies outside the published shapes. Every request goes
 * through the real client, over HTTP, and (unless a rule answers it) on to the sandbox.
 */

export interface ProxiedRequest {
  method: string;
  /** Path with query, as received (`/api/v1/reports/acme`). */
  path: string;
  at: number;
}

export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface ProxyRule {
  matches(request: ProxiedRequest): boolean;
  /** Answer without asking the sandbox. */
  answer?: (request: ProxiedRequest) => CannedAnswer;
  /** Change the sandbox's JSON answer before it is passed on. */
  rewrite?: (body: unknown, request: ProxiedRequest) => unknown;
}

export class ReportProxy {
  /** Where requests go: the sandbox's origin (`http://127.0.0.1:PORT`), set before traffic starts. */
  target = '';
  readonly rules: ProxyRule[] = [];
  readonly requests: (ProxiedRequest & { status: number })[] = [];
  private server: Server | null = null;

  /** Starts; resolves to the `{base_url}` to configure (`http://127.0.0.1:PORT/api`). */
  async listen(): Promise<string> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        res.statusCode = 502;
        res.end(String(err));
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    this.server = null;
  }

  /** Requests whose answer had `status`, optionally since `since` (epoch ms). */
  count(status?: number, since = 0): number {
    return this.requests.filter((r) => r.at >= since && (status === undefined || r.status === status)).length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', at: Date.now() };
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rule = this.rules.find((r) => r.matches(request));
    if (rule?.answer) {
      const canned = rule.answer(request);
      this.requests.push({ ...request, status: canned.status });
      res.writeHead(canned.status, { 'content-type': 'application/json', ...canned.headers });
      res.end(canned.body === undefined ? '' : JSON.stringify(canned.body));
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
    }
    const upstream = await fetch(`${this.target}${request.path}`, {
      method: request.method,
      headers,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    let text = await upstream.text();
    if (rule?.rewrite && upstream.ok) text = JSON.stringify(rule.rewrite(JSON.parse(text), request));
    this.requests.push({ ...request, status: upstream.status });
    const passed: Record<string, string> = {
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
    };
    const retryAfter = upstream.headers.get('retry-after');
    if (retryAfter) passed['retry-after'] = retryAfter;
    res.writeHead(upstream.status, passed);
    res.end(text);
  }
}

/** Matches report reads of one slug (`GET …/v1/reports/<slug>`). */
export function reportRead(slug: string): (r: ProxiedRequest) => boolean {
  return (r) =>
    r.method === 'GET' && r.path.split('?')[0]!.endsWith(`/v1/reports/${encodeURIComponent(slug)}`);
}
