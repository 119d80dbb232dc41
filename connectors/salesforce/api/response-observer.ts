import { Agent, type Dispatcher, ProxyAgent } from 'undici';
import { lazyRequire } from '../../../src/util/lazy-require.js';

/** jsforce's request module, loaded with the first Salesforce client (api-client.ts) rather than at import. */
const jsforceRequest = lazyRequire<typeof import('jsforce/lib/request.js')>('jsforce/lib/request.js');

/**
 * Sees the response headers of every HTTP call jsforce makes (REST, SOAP Metadata API, Bulk API 2.0) through
 * jsforce's public `setDispatcher` hook and an undici interceptor, instead of patching jsforce's private
 * `_transport`. jsforce returns only bodies, and updates `conn.limitInfo` for REST calls alone, so this is where
 * `Sforce-Limit-Info` and the server's `Date` are read.
 *
 * Listeners register per origin (an org's instance URL). A call that wants its own headers carries a tag header
 * (CALL_HEADER) which the interceptor removes before the request leaves the process.
 *
 * Behind an HTTP proxy jsforce would make a ProxyAgent of its own for each call (from HTTPS_PROXY and the like,
 * or a call's `httpProxy`), which bypasses the dispatcher hook: no usage reading, no server Date, and the tag
 * sent out. So the proxy goes into this dispatcher instead, and out of jsforce's defaults.
 */

export const CALL_HEADER = 'x-report-connector-call';

type HeaderListener = (headers: Record<string, string>) => void;

const byOrigin = new Map<string, Map<object, HeaderListener>>();
const byCall = new Map<string, HeaderListener>();
let nextCall = 0;

/**
 * Every response from `origin` is shown to `listener`, registered once per `owner` (an org's usage tracker,
 * shared by every connector of that org in the process), so building connectors per job adds no listeners.
 */
export function observeOrigin(origin: string, owner: object, listener: HeaderListener): void {
  const key = new URL(origin).origin;
  const listeners = byOrigin.get(key) ?? new Map<object, HeaderListener>();
  listeners.set(owner, listener);
  byOrigin.set(key, listeners);
}

/** A tag for one call: put `{ [CALL_HEADER]: tag }` on the request; `done()` forgets the listener. */
export function tagCall(listener: HeaderListener): { tag: string; done: () => void } {
  const tag = `c${++nextCall}`;
  byCall.set(tag, listener);
  return { tag, done: () => byCall.delete(tag) };
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

function notify(origin: string, tag: string | undefined, headers: Record<string, string>): void {
  for (const listener of byOrigin.get(origin)?.values() ?? []) listener(headers);
  if (tag) byCall.get(tag)?.(headers);
}

const observe: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const origin = opts.origin ? new URL(String(opts.origin)).origin : '';
  const { headers, tag } = withoutTag(opts.headers);
  // A proxy, not a copy: undici's handlers are class instances, and either handler API may be in use.
  const observed = new Proxy(handler, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'onResponseStart' && typeof value === 'function') {
        return (
          controller: unknown,
          status: number,
          h: Record<string, string | string[] | undefined>,
          msg?: string,
        ) => {
          notify(origin, tag, lowerCased(h ?? {}));
          return value.call(target, controller, status, h, msg);
        };
      }
      if (prop === 'onHeaders' && typeof value === 'function' && !('onResponseStart' in target)) {
        return (status: number, raw: (Buffer | string)[], resume: () => void, text?: string) => {
          notify(origin, tag, fromRaw(raw ?? []));
          return value.call(target, status, raw, resume, text);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return dispatch({ ...opts, headers }, observed);
};

/** The proxy jsforce takes from the environment when a call names none (the variables in its order). */
export function proxyFromEnvironment(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.https_proxy ?? env.http_proxy ?? env.HTTPS_PROXY ?? env.HTTP_PROXY ?? undefined;
}

/** The proxy the installed dispatcher goes through (null: none); undefined until installed. */
let installedFor: string | null | undefined;

/**
 * Puts the observer into jsforce's dispatcher, once per process and proxy (the agent settings jsforce uses;
 * through `proxy` when there is one). The dispatcher is one for the process: every org shares the proxy.
 */
export function installResponseObserver(proxy: string | undefined = proxyFromEnvironment()): void {
  const wanted = proxy ?? null;
  if (installedFor === wanted) return;
  installedFor = wanted;
  // jsforce's own defaults, less the proxy, which this dispatcher now handles.
  const timeout = process.env.HTTP_TIMEOUT ? Number.parseInt(process.env.HTTP_TIMEOUT, 10) : undefined;
  const { setDefaults, setDispatcher } = jsforceRequest();
  setDefaults({ followRedirect: true, ...(timeout !== undefined ? { timeout } : {}) });
  const base = wanted
    ? new ProxyAgent({ uri: wanted, requestTls: { allowH2: false } })
    : new Agent({ connect: { allowH2: false } });
  setDispatcher(base.compose(observe));
}
