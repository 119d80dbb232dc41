import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { median, percentile } from './measure.js';

/**
 * Counts what a service answered, wrapped around its request handler: per route, the answers by status,
 * how many distinct things were asked for (a slug, a query), and how long the answers took; plus answers per
 * second since the last reset. Kept as counts and one number per call, so a 100,000-record run stays small.
 */

/** Which route a request is, and what it asks for (counted distinct), or null to leave it out. */
export type Classify = (req: IncomingMessage) => { route: string; key?: string } | null;

export interface RouteStats {
  calls: number;
  statuses: Record<string, number>;
  /** Distinct keys asked for (slugs read, queries searched); 0 when the route has none. */
  distinct: number;
  p50Ms: number;
  p95Ms: number;
}

export interface CallLogSnapshot {
  routes: Record<string, RouteStats>;
  /** Answers per second since the reset: [not 429, 429]. */
  timeline: [number, number][];
}

interface RouteEntry {
  statuses: Record<string, number>;
  keys: Set<string>;
  durationsMs: number[];
}

export class CallLog {
  private routes = new Map<string, RouteEntry>();
  private timeline: [number, number][] = [];
  private since = performance.now();

  constructor(private readonly classify: Classify) {}

  wrap(handler: RequestListener): RequestListener {
    return (req: IncomingMessage, res: ServerResponse) => {
      const what = this.classify(req);
      if (what) {
        const started = performance.now();
        res.on('finish', () => this.record(what.route, what.key, res.statusCode, started));
      }
      handler(req, res);
    };
  }

  reset(): void {
    this.routes = new Map();
    this.timeline = [];
    this.since = performance.now();
  }

  snapshot(): CallLogSnapshot {
    const routes: Record<string, RouteStats> = {};
    for (const [route, entry] of this.routes) {
      routes[route] = {
        calls: entry.durationsMs.length,
        statuses: { ...entry.statuses },
        distinct: entry.keys.size,
        p50Ms: median(entry.durationsMs),
        p95Ms: percentile(entry.durationsMs, 95),
      };
    }
    return { routes, timeline: this.timeline.map(([ok, limited]) => [ok, limited]) };
  }

  private record(route: string, key: string | undefined, status: number, started: number): void {
    const now = performance.now();
    let entry = this.routes.get(route);
    if (!entry) {
      entry = { statuses: {}, keys: new Set(), durationsMs: [] };
      this.routes.set(route, entry);
    }
    entry.statuses[status] = (entry.statuses[status] ?? 0) + 1;
    if (key !== undefined) entry.keys.add(key);
    entry.durationsMs.push(now - started);
    const second = Math.floor((now - this.since) / 1000);
    while (this.timeline.length <= second) this.timeline.push([0, 0]);
    this.timeline[second]![status === 429 ? 1 : 0] += 1;
  }
}
