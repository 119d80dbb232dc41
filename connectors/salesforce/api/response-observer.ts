import { AsyncLocalStorage } from 'node:async_hooks';
import { Agent, type Dispatcher, ProxyAgent } from 'undici';
import { lazyRequire } from '../../../src/util/lazy-require.js';

/** jsforce's request module, loaded with the first Salesforce client (api-client.ts) rather than at import. */
const jsforceRequest = lazyRequire<typeof import('jsforce/lib/request.js')>('jsforce/lib/request.js');

/**
 * Sees the response headers of every HTTP call jsforce makes for one client (REST, SOAP Metadata API, Bulk API
 * 2.0), instead of patching jsforce's private `_transport`. jsforce returns only bodies, and updates
 * `conn.limitInfo` for REST calls alone, so this is where `Sforce-Limit-Info` and the server's `Date` are read.
 *
 * jsforce has one request module per process, with one dispatcher (its public `setDispatcher` hook). What goes
 * there holds nothing of any client: an undici interceptor that hands each request to the observer of the client
 * whose call it is (the ResponseObserver its `within` runs the call in) and sends it through that client's
 * proxy. Each client keeps its own listeners, call tags and proxy, so two clients (two orgs, two tests) share
 * nothing but the connection pools.
 *
 * A call that wants its own headers carries a tag header (CALL_HEADER) which the interceptor removes before the
 * request leaves the process.
 *
 * Behind an HTTP proxy jsforce would make a ProxyAgent of its own for each call (from HTTPS_PROXY and the like,
 * or a call's `httpProxy`), which bypasses the dispatcher hook: no usage reading, no server Date, and the tag
 * sent out. So the proxy goes into the client's observer instead, and out of jsforce's defaults.
 */

export const CALL_HEADER = 'x-report-connector-call';

type HeaderListener = (headers: Record<string, string>) => void;

/** The client whose call is under way, through jsforce's request module and into the dispatcher below. */
const current = new AsyncLocalStorage<ResponseObserver>();

export class ResponseObserver {
  private readonly byOrigin = new Map<string, HeaderListener>();
  private readonly byCall = new Map<string, HeaderListener>();
  private nextCall = 0;

  /** `proxy`: the HTTP proxy this client's calls go through (null: none). */
  constructor(readonly proxy: string | null = proxyFromEnvironment() ?? null) {}

  /** Every response from `origin` to this client's calls is shown to `listener` (one per origin). */
  observeOrigin(origin: string, listener: HeaderListener): void {
    this.byOrigin.set(new URL(origin).origin, listener);
  }

  /** A tag for one call: put `{ [CALL_HEADER]: tag }` on the request; `done()` forgets the listener. */
  tagCall(listener: HeaderListener): { tag: string; done: () => void } {
    const tag = `c${++this.nextCall}`;
    this.byCall.set(tag, listener);
    return { tag, done: () => this.byCall.delete(tag) };
  }

  /** Runs `op`, whose jsforce calls are this client's: their responses are shown here. */
  within<T>(op: () => Promise<T>): Promise<T> {
    installDispatcher();
    return current.run(this, op);
  }

  notify(origin: string, tag: string | undefined, headers: Record<string, string>): void {
    this.byOrigin.get(origin)?.(headers);
    if (tag) this.byCall.get(tag)?.(headers);
  }
}

function lowerCased(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function fromRaw(raw: (Buffer | string)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) out[String(raw[i]).toLowerCase()] = String(raw[i + 1]);
  return out;
}

/** Takes the tag out of the request headers, whatever form undici was given them in. */
function withoutTag(headers: Dispatcher.DispatchOptions['headers']): {
  headers: Dispatcher.DispatchOptions['headers'];
  tag: string | undefined;
} {
  if (!headers) return { headers, tag: undefined };
  if (Array.isArray(headers)) {
    const flat = headers as string[];
    const out: string[] = [];
    let tag: string | undefined;
    for (let i = 0; i + 1 < flat.length; i += 2) {
      if (String(flat[i]).toLowerCase() === CALL_HEADER) tag = String(flat[i + 1]);
      else out.push(flat[i]!, flat[i + 1]!);
    }
    return { headers: out, tag };
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    const out: [string, string][] = [];
    let tag: string | undefined;
    for (const [k, v] of headers as Iterable<[string, string]>) {
      if (k.toLowerCase() === CALL_HEADER) tag = v;
      else out.push([k, v]);
    }
    return { headers: Object.fromEntries(out), tag };
  }
  const out: Record<string, string | string[] | undefined> = {};
  let tag: string | undefined;
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === CALL_HEADER) tag = Array.isArray(v) ? v[0] : v;
    else out[k] = v;
  }
  return { headers: out, tag };
}

/** Shows the response headers to `seen` before the handler gets them, whichever handler API undici uses. */
function observed(handler: Dispatcher.DispatchHandler, seen: (headers: Record<string, string>) => void) {
  // A proxy, not a copy: undici's handlers are class instances.
  return new Proxy(handler, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'onResponseStart' && typeof value === 'function') {
        return (
          controller: unknown,
          status: number,
          h: Record<string, string | string[] | undefined>,
          msg?: string,
        ) => {
          seen(lowerCased(h ?? {}));
          return value.call(target, controller, status, h, msg);
        };
      }
      if (prop === 'onHeaders' && typeof value === 'function' && !('onResponseStart' in target)) {
        return (status: number, raw: (Buffer | string)[], resume: () => void, text?: string) => {
          seen(fromRaw(raw ?? []));
          return value.call(target, status, raw, resume, text);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Connection pools by proxy ('' for none): the agent settings jsforce uses, through the proxy when there is one. */
const agents = new Map<string, Dispatcher>();

function agentFor(proxy: string | null): Dispatcher {
  const key = proxy ?? '';
  let agent = agents.get(key);
  if (!agent) {
    agent = proxy
      ? new ProxyAgent({ uri: proxy, requestTls: { allowH2: false } })
      : new Agent({ connect: { allowH2: false } });
    agents.set(key, agent);
  }
  return agent;
}

/** Hands a request to the observer of the client making it, through that client's proxy. */
const route: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const observer = current.getStore();
  if (!observer) return dispatch(opts, handler);
  const origin = opts.origin ? new URL(String(opts.origin)).origin : '';
  const { headers, tag } = withoutTag(opts.headers);
  const seen = (h: Record<string, string>) => observer.notify(origin, tag, h);
  return agentFor(observer.proxy).dispatch({ ...opts, headers }, observed(handler, seen));
};

/** The proxy jsforce takes from the environment when a call names none (the variables in its order). */
export function proxyFromEnvironment(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.https_proxy ?? env.http_proxy ?? env.HTTPS_PROXY ?? env.HTTP_PROXY ?? undefined;
}

let installed = false;

/**
 * Puts the router into jsforce's dispatcher, once per process: it keeps nothing of any client. A call made
 * outside every client's `within` goes through the environment's proxy, as jsforce's own would.
 */
function installDispatcher(): void {
  if (installed) return;
  installed = true;
  // jsforce's own defaults, less the proxy, which each client's observer now handles.
  const timeout = process.env.HTTP_TIMEOUT ? Number.parseInt(process.env.HTTP_TIMEOUT, 10) : undefined;
  const { setDefaults, setDispatcher } = jsforceRequest();
  setDefaults({ followRedirect: true, ...(timeout !== undefined ? { timeout } : {}) });
  setDispatcher(agentFor(proxyFromEnvironment() ?? null).compose(route));
}
