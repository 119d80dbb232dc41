import {
  createSalesforceConnector,
  type SalesforceConnector,
  type SalesforceConnectorDeps,
} from '../../connectors/salesforce/connector.js';
import {
  createLocalSalesforce,
  type LocalSalesforce,
  type LocalSalesforceOptions,
} from '../../connectors/salesforce/local/index.js';
import { DEFAULT_API_VERSION } from '../../connectors/salesforce/provider.js';
import type { AccessTokenSource } from '../../src/auth/token-manager.js';
import type { RequestGate } from '../../src/crm/request-gate.js';

/**
 * The connector wired to a local Salesforce the way the Salesforce tests use it: one access token that is never
 * rotated, a gate that never waits, fast retries and no HTTP retries, so each test sees every request it causes.
 */

/** A request gate that lets every call through at once and ignores pauses. */
export const openGate: RequestGate = { acquire: async () => {}, pause: async () => {} };

/** A token source that hands out one token issued by the local org, also after a rejection. */
export function fixedTokens(local: LocalSalesforce): AccessTokenSource {
  const token = local.issueAccessToken();
  return { current: async () => token, refreshAfterRejection: async () => token };
}

export interface LocalConnectorDeps {
  tokens: AccessTokenSource;
  gate: RequestGate;
  /** The org's API version the connector asks for; the provider's default unless a test pins one. */
  apiVersion?: string;
}

/** The connector for the local org listening at `instanceUrl`; `extra` replaces any of its dependencies. */
export function localSalesforceConnector(
  local: LocalSalesforce,
  instanceUrl: string,
  deps: LocalConnectorDeps,
  extra: Partial<SalesforceConnectorDeps> = {},
): SalesforceConnector {
  return createSalesforceConnector({
    installation: { id: `salesforce-${local.orgId}`, instanceUrl, externalId: local.orgId },
    tokens: deps.tokens,
    gate: deps.gate,
    config: {
      salesforce: {
        apiVersion: deps.apiVersion ?? DEFAULT_API_VERSION,
        usagePauseShare: 0.8,
        extraHosts: [] as string[],
        allowLocalHosts: true,
      } as SalesforceConnectorDeps['config']['salesforce'],
    },
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
    httpOptions: { retry: { maxRetries: 0 } },
    ...extra,
  });
}

/** Anything a test must close when it ends. */
export interface Closable {
  close(): Promise<void>;
}

/**
 * Starts `local` listening (its server is pushed on `running`, for the test's afterEach to close) and returns
 * the connector for it, with one fixed token and the open gate.
 */
export async function connectLocalSalesforce(
  local: LocalSalesforce,
  running: Closable[],
  extra: Partial<SalesforceConnectorDeps> = {},
): Promise<SalesforceConnector> {
  const server = await local.listen();
  running.push(server);
  return localSalesforceConnector(local, server.url, { tokens: fixedTokens(local), gate: openGate }, extra);
}

/** A local Salesforce whose clock stands at `start` until the test advances it; nothing sleeps. */
export function localSalesforceAt(
  start: string,
  options: LocalSalesforceOptions = {},
): { local: LocalSalesforce; advance(ms: number): void } {
  let now = Date.parse(start);
  const local = createLocalSalesforce({ now: () => now, ...options });
  return {
    local,
    advance: (ms: number) => {
      now += ms;
    },
  };
}
