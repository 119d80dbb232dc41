import type { LocalStandIn, LocalStandInOptions } from '../../../src/crm/provider.js';
import { SALESFORCE_FIELDS, salesforceField } from '../fields/field-names.js';
import { createLocalSalesforce, type LocalSalesforce } from './server.js';

/**
 * The local Salesforce as the provider's stand-in: token mode with an issued access token, a short poll
 * interval so changes show within seconds, and its External Client App's keys so the OAuth install (the admin's
 * "Install the app from Salesforce", a reconnect) can be tried against the local org's OAuth server too.
 */
export async function startSalesforceStandIn(
  options: LocalStandInOptions,
): Promise<LocalStandIn<'salesforce', LocalSalesforce>> {
  const changeEvents = options.changeEvents ?? 'selected';
  const salesforce = createLocalSalesforce({
    accountChangeEvents: changeEvents === 'selected',
    changeEventEntityLimitReached: changeEvents === 'refused',
  });
  const listening = await salesforce.listen(0);
  // Change Data Capture over its Pub/Sub API: Account changes reach the connector in about a second.
  const pubsub = await salesforce.pubsub.listen(0);
  const text = (v: unknown) => (v === null || v === undefined || v === '' ? null : String(v));
  return {
    kind: 'salesforce',
    handle: salesforce,
    url: listening.url,
    env: {
      // The local org is on loopback over http: a development setting lets it through (hosts.ts).
      SALESFORCE_ALLOW_LOCAL_HOSTS: 'true',
      SALESFORCE_INSTANCE_URL: listening.url,
      SALESFORCE_LOGIN_URL: listening.url,
      SALESFORCE_ACCESS_TOKEN: salesforce.issueAccessToken(),
      SALESFORCE_CLIENT_ID: salesforce.org.clientId,
      SALESFORCE_CLIENT_SECRET: salesforce.org.clientSecret,
      SALESFORCE_POLL_SECONDS: '2',
      SALESFORCE_CHANGE_EVENTS: 'true',
      SALESFORCE_PUBSUB_ENDPOINT: pubsub.endpoint,
    },
    // The app's keys too: a worker refreshes the tokens of an OAuth installation.
    workerEnv: {
      SALESFORCE_ALLOW_LOCAL_HOSTS: 'true',
      SALESFORCE_LOGIN_URL: listening.url,
      SALESFORCE_CLIENT_ID: salesforce.org.clientId,
      SALESFORCE_CLIENT_SECRET: salesforce.org.clientSecret,
      SALESFORCE_CHANGE_EVENTS: 'true',
      SALESFORCE_PUBSUB_ENDPOINT: pubsub.endpoint,
    },
    // Salesforce refuses values for fields that do not exist yet: create them, then seed.
    async seed(companies, ensureFields) {
      await ensureFields();
      const slug = salesforceField('slug').salesforce;
      return salesforce
        .seedAccounts(
          companies.map((c) => ({
            Name: c.name,
            Website: c.domain ? `https://${c.domain}` : null,
            Industry: c.industry,
            BillingCountry: c.country,
            BillingCity: c.city,
            ...(c.slug ? { [slug]: c.slug } : {}),
          })),
        )
        .map((a) => a.Id);
    },
    read(id) {
      const a = salesforce.getAccount(id);
      if (!a || a.IsDeleted) return undefined;
      return {
        id,
        name: a.Name,
        fields: Object.fromEntries(
          SALESFORCE_FIELDS.map((f) => {
            const v = a.custom[f.salesforce];
            if (f.kind === 'datetime' && text(v) !== null)
              return [f.key, new Date(v as string | number).toISOString()];
            return [f.key, text(v)];
          }),
        ),
      };
    },
    close: async () => {
      await pubsub.close();
      await listening.close();
    },
  };
}
