/**
 * Which hosts the connector talks to as Salesforce: the login URL of the global app and of every connection,
 * the instance URL and the identity URL a token answer names. A token answer is trusted only as far as the host
 * that gave it, so each of them must be Salesforce's own: `https` on one of the domains below (sources in
 * docs/vendor-sources.md), or a host the operator adds (SALESFORCE_EXTRA_HOSTS). The local Salesforce of the
 * demo and the tests (`http://127.0.0.1:<port>`) passes only with SALESFORCE_ALLOW_LOCAL_HOSTS, which a
 * production start refuses (config.ts).
 */

/** Salesforce's generic login hosts: production and sandboxes. */
const EXACT_HOSTS = ['login.salesforce.com', 'test.salesforce.com'] as const;

/**
 * My Domain hosts (`<name>.my.salesforce.com`, with the partitions `<name>--<sandbox>.sandbox.`, `.develop.`,
 * `.scratch.`, `.patch.`, `.demo.`, `.trailblaze.` in front of `my.salesforce.com`) and Government Cloud Plus -
 * Defense (`<name>.my.salesforce.mil`).
 */
const HOST_SUFFIXES = ['.my.salesforce.com', '.my.salesforce.mil'] as const;

/** Instance hosts from before enhanced domains (`na85.salesforce.com`, `cs42.salesforce.com`, `eu12-s…`). */
const LEGACY_INSTANCE = /^[a-z]{2,4}[0-9]{1,4}(?:-s)?\.salesforce\.com$/;

const LOCAL_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An operator's extra host: `host.example.com` exactly, or `*.example.com` for its subdomains. */
export const EXTRA_HOST_PATTERN =
  /^(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/;

export interface SalesforceHostPolicy {
  /** SALESFORCE_EXTRA_HOSTS: `host` or `*.suffix` entries, https only. */
  extraHosts: readonly string[];
  /** SALESFORCE_ALLOW_LOCAL_HOSTS: the local Salesforce on loopback, http or https (development only). */
  allowLocalHosts: boolean;
}

export const PRODUCTION_HOST_POLICY: SalesforceHostPolicy = { extraHosts: [], allowLocalHosts: false };

/** The policy of a configuration; one built by hand without the fields allows Salesforce's hosts alone. */
export function hostPolicyOf(settings: {
  salesforce: { extraHosts?: readonly string[]; allowLocalHosts?: boolean };
}): SalesforceHostPolicy {
  const s = settings.salesforce;
  return { extraHosts: s.extraHosts ?? [], allowLocalHosts: s.allowLocalHosts === true };
}

/** What the URL is to the connector, for the error: `login URL`, `instance URL`, `identity URL`. */
export type SalesforceUrlRole = 'login URL' | 'instance URL' | 'identity URL';

export class SalesforceHostRefusedError extends Error {
  readonly code = 'SALESFORCE_HOST_NOT_ALLOWED';
  constructor(
    readonly role: SalesforceUrlRole,
    readonly url: string,
    readonly reason: string,
  ) {
    super(`the Salesforce ${role} ${url} is refused: ${reason}`);
    this.name = 'SalesforceHostRefusedError';
  }
}

function extraHostMatches(entry: string, hostname: string): boolean {
  if (entry.startsWith('*.')) return hostname.endsWith(entry.slice(1)) && hostname.length > entry.length - 1;
  return hostname === entry;
}

/** Why `url` is not a Salesforce host under `policy`, or null when it is one. */
export function salesforceHostProblem(url: string, policy: SalesforceHostPolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'it is not a URL';
  }
  if (parsed.username || parsed.password) return 'it carries a user name or password';
  const host = parsed.hostname;
  if (policy.allowLocalHosts && LOCAL_HOSTNAMES.has(host)) {
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? null : 'it is not http(s)';
  }
  if (parsed.protocol !== 'https:') return 'Salesforce is reached over https only';
  if (parsed.port !== '') return 'Salesforce is reached on the https port only';
  const known =
    (EXACT_HOSTS as readonly string[]).includes(host) ||
    HOST_SUFFIXES.some((s) => host.endsWith(s)) ||
    LEGACY_INSTANCE.test(host) ||
    policy.extraHosts.some((e) => extraHostMatches(e, host));
  return known
    ? null
    : `${host} is not a Salesforce host (login.salesforce.com, test.salesforce.com, *.my.salesforce.com, *.my.salesforce.mil; SALESFORCE_EXTRA_HOSTS adds more)`;
}

/** `url` when it is a Salesforce host under `policy`; throws SalesforceHostRefusedError otherwise. */
export function requireSalesforceHost(
  url: string,
  policy: SalesforceHostPolicy,
  role: SalesforceUrlRole,
): string {
  const problem = salesforceHostProblem(url, policy);
  if (problem) throw new SalesforceHostRefusedError(role, url, problem);
  return url;
}

/** The host (with its port) of a URL, lower-case; '' for none or no URL. */
export function hostOf(url: string | undefined): string {
  if (!url) return '';
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
