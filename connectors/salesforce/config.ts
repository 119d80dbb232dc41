import { z } from 'zod';
import {
  ConfigError,
  type ConfigProblem,
  httpUrl,
  optionalText,
  positiveNumber,
  readEnvSection,
  requireTogether,
} from '../../src/env-schema.js';
import { EXTRA_HOST_PATTERN, salesforceHostProblem } from './hosts.js';
import { DEFAULT_API_VERSION, DEFAULT_LOGIN_URL, PUBSUB_ENDPOINT } from './provider.js';

/** Salesforce's environment keys: a connected app (OAuth), an instance URL with a token (token mode), or both. */
export const salesforceEnvSchema = z.object({
  SALESFORCE_CLIENT_ID: optionalText,
  SALESFORCE_CLIENT_SECRET: optionalText,
  SALESFORCE_LOGIN_URL: httpUrl.default(DEFAULT_LOGIN_URL),
  SALESFORCE_INSTANCE_URL: httpUrl.optional(),
  SALESFORCE_ACCESS_TOKEN: optionalText,
  SALESFORCE_API_VERSION: z
    .string()
    .trim()
    .regex(/^\d{2,3}\.0$/, 'expects an API version such as 68.0')
    .default(DEFAULT_API_VERSION),
  SALESFORCE_POLL_SECONDS: positiveNumber('a number of seconds greater than 0').default(120),
  SALESFORCE_USAGE_PAUSE_SHARE: z.coerce
    .number({ error: 'expects a share between 0 and 1' })
    .gt(0, 'expects a share between 0 and 1')
    .max(1, 'expects a share between 0 and 1')
    .default(0.8),
  SALESFORCE_EXTRA_HOSTS: z
    .string()
    .trim()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((e) => e.trim().toLowerCase())
        .filter((e) => e.length > 0),
    )
    .refine(
      (entries) => entries.every((e) => EXTRA_HOST_PATTERN.test(e)),
      'expects a comma-separated list of host names (login.example.com) or *.suffixes (*.example.com)',
    ),
  SALESFORCE_ALLOW_LOCAL_HOSTS: z
    .enum(['true', 'false', ''], { error: 'expects true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  SALESFORCE_CHANGE_EVENTS: z
    .enum(['true', 'false', ''], { error: 'expects true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  SALESFORCE_PUBSUB_ENDPOINT: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, 'expects host:port, such as api.pubsub.salesforce.com:7443')
    .default(PUBSUB_ENDPOINT),
});

/** `config.salesforce`. */
export interface SalesforceConfig {
  clientId: string | undefined;
  clientSecret: string | undefined;
  loginUrl: string;
  instanceUrl: string | undefined;
  accessToken: string | undefined;
  apiVersion: string;
  pollSeconds: number;
  usagePauseShare: number;
  /** Hosts taken as Salesforce's besides its own (hosts.ts): `host` or `*.suffix`. */
  extraHosts: string[];
  /** The local Salesforce on loopback is let through: the demo and tests only, refused with NODE_ENV=production. */
  allowLocalHosts: boolean;
  /** Account changes also arrive by Change Data Capture over the Pub/Sub API (the poll stays as safety net). */
  changeEvents: boolean;
  /** The Pub/Sub API's `host:port`; plaintext only for a loopback host with `allowLocalHosts`. */
  pubSubEndpoint: string;
}

/** What the connector's functions read of the application configuration. */
export interface SalesforceSettings {
  salesforce: SalesforceConfig;
}

export function readSalesforceConfig(env: Readonly<Record<string, string | undefined>>): SalesforceConfig {
  const e = readEnvSection(salesforceEnvSchema, env);
  requireTogether(
    ['SALESFORCE_INSTANCE_URL', e.SALESFORCE_INSTANCE_URL],
    ['SALESFORCE_ACCESS_TOKEN', e.SALESFORCE_ACCESS_TOKEN],
  );
  requireTogether(
    ['SALESFORCE_ACCESS_TOKEN', e.SALESFORCE_ACCESS_TOKEN],
    ['SALESFORCE_INSTANCE_URL', e.SALESFORCE_INSTANCE_URL],
  );
  requireTogether(
    ['SALESFORCE_CLIENT_ID', e.SALESFORCE_CLIENT_ID],
    ['SALESFORCE_CLIENT_SECRET', e.SALESFORCE_CLIENT_SECRET],
  );
  const policy = { extraHosts: e.SALESFORCE_EXTRA_HOSTS, allowLocalHosts: e.SALESFORCE_ALLOW_LOCAL_HOSTS };
  const problems: ConfigProblem[] = [];
  if (policy.allowLocalHosts && env.NODE_ENV === 'production') {
    problems.push({
      variable: 'SALESFORCE_ALLOW_LOCAL_HOSTS',
      expectation: 'is for the demo and tests only and is refused with NODE_ENV=production: remove it',
    });
  }
  for (const [variable, url] of [
    ['SALESFORCE_LOGIN_URL', e.SALESFORCE_LOGIN_URL],
    ['SALESFORCE_INSTANCE_URL', e.SALESFORCE_INSTANCE_URL],
  ] as const) {
    const problem = url === undefined ? null : salesforceHostProblem(url, policy);
    if (problem) problems.push({ variable, expectation: `expects a Salesforce URL: ${problem}` });
  }
  if (e.SALESFORCE_PUBSUB_ENDPOINT !== PUBSUB_ENDPOINT) {
    // The stream sends the org's access token there: only a host the policy takes for Salesforce's.
    const host = e.SALESFORCE_PUBSUB_ENDPOINT.replace(/:\d+$/, '');
    const problem = salesforceHostProblem(`http://${host}`, policy);
    if (problem !== null && !policy.extraHosts.some((x) => x === host)) {
      problems.push({
        variable: 'SALESFORCE_PUBSUB_ENDPOINT',
        expectation: `expects ${PUBSUB_ENDPOINT}, a loopback host with SALESFORCE_ALLOW_LOCAL_HOSTS, or a host of SALESFORCE_EXTRA_HOSTS`,
      });
    }
  }
  ConfigError.throwAll(problems);
  return {
    clientId: e.SALESFORCE_CLIENT_ID,
    clientSecret: e.SALESFORCE_CLIENT_SECRET,
    loginUrl: e.SALESFORCE_LOGIN_URL,
    instanceUrl: e.SALESFORCE_INSTANCE_URL,
    accessToken: e.SALESFORCE_ACCESS_TOKEN,
    apiVersion: e.SALESFORCE_API_VERSION,
    pollSeconds: e.SALESFORCE_POLL_SECONDS,
    usagePauseShare: e.SALESFORCE_USAGE_PAUSE_SHARE,
    extraHosts: policy.extraHosts,
    allowLocalHosts: policy.allowLocalHosts,
    changeEvents: e.SALESFORCE_CHANGE_EVENTS,
    pubSubEndpoint: e.SALESFORCE_PUBSUB_ENDPOINT,
  };
}
