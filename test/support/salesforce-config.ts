import type { LocalSalesforce } from '../../connectors/salesforce/local/index.js';
import type { Config } from '../../src/config.js';

/** The app's Salesforce settings for OAuth against a local org: its connected app's keys and its login URL. */
export function localSalesforceConfig(
  appUrl: string,
  local: LocalSalesforce,
  loginUrl: string,
): Pick<Config, 'appUrl' | 'salesforce'> {
  return {
    appUrl,
    salesforce: {
      clientId: local.org.clientId,
      clientSecret: local.org.clientSecret,
      loginUrl,
      instanceUrl: undefined,
      accessToken: undefined,
      apiVersion: '63.0',
      pollSeconds: 120,
      usagePauseShare: 0.8,
      extraHosts: [],
      // The local org listens on loopback over http: the development setting every such test needs.
      allowLocalHosts: true,
    },
  };
}
