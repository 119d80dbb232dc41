import type { ListingGuide, ScopePurpose } from '../../../src/crm/public-pages.js';
import { HUBSPOT_NOTE_SCOPES } from '../provider.js';

/**
 * HubSpot's part of the public setup guide (`/docs/setup`) that the Marketplace listing links to: HubSpot's
 * review wants install and configuration steps, what each scope is for, using, disconnecting and uninstalling,
 * and what stays in the portal afterwards. Plain text; the server lays it out and escapes it.
 */

/** What each scope the install asks for is used for; a test keeps this list equal to HUBSPOT_SCOPES. */
export const HUBSPOT_SCOPE_PURPOSES: readonly ScopePurpose[] = [
  { scope: 'oauth', purpose: 'sign the app in to your account (every HubSpot app asks for it)' },
  { scope: 'crm.objects.companies.read', purpose: 'read company names, domains and the report fields' },
  { scope: 'crm.objects.companies.write', purpose: 'write the report score and its details on companies' },
  { scope: 'crm.schemas.companies.write', purpose: 'create the "Report scores" company properties once' },
];

export const HUBSPOT_LISTING_GUIDE: ListingGuide = {
  account: 'HubSpot account',
  summary:
    "Report scores links each HubSpot company to its published report and keeps the report's score, band, " +
    'pillars, verification and alerts on the company record, up to date as reports change.',
  install: {
    alternative: "choose Install on the app's Marketplace listing",
    signIn: ['Sign in to HubSpot if asked, and choose the account to connect.'],
    consent: 'Review the access the app asks for and choose Connect app:',
    scopes: HUBSPOT_SCOPE_PURPOSES,
    optionalScopes: HUBSPOT_NOTE_SCOPES.map((scope) => ({
      scope,
      when:
        "if alert notes are turned on for your account (they add a note to the company's timeline when an " +
        'alert fires)',
    })),
    after: [
      'You land on a page saying the account is installed, or installed and waiting for approval: a new ' +
        'account waits until the people who run this service approve it, and nothing is read or written in ' +
        'HubSpot until then.',
    ],
  },
  configure: [
    'Nothing has to be set in HubSpot. Once approved, the app creates the company properties of the group ' +
      '"Report scores" (Report slug, Report score, Report band and the others) and links your companies to ' +
      'their reports. To show the score on company records, a Super Admin (or a user allowed to customize ' +
      'record page layouts) adds the "Report score" card to the company record, as a tab or in the right sidebar.',
  ],
  use: [
    'Automatically: a company is linked to a published report only when the names match exactly (domain, ' +
      'industry and location help find candidates); a close but uncertain match waits for a person to confirm ' +
      "it. Linked companies' report properties are written and kept current when a report is scored again, " +
      'verified or raises an alert.',
    `By hand: type a report's slug into the company's "Report slug" property to choose the report; in the ` +
      'card, confirm a proposed match ("This one" / "None of these") or request a report for a company that ' +
      'has none.',
  ],
  uninstall: {
    steps: [
      'In HubSpot, open Settings > Integrations > Connected apps.',
      'Find Report scores in the list, uninstall it, and confirm.',
    ],
    consequences:
      'After uninstalling, the app can no longer read or write anything in your account and stops updating ' +
      'companies. What stays: the "Report scores" properties and the values already written on your companies ' +
      'remain in HubSpot until you delete them (Settings > Properties, group "Report scores"); deleting them ' +
      'removes the values from every company.',
  },
  supportAccount: 'HubSpot account (its account id, shown in HubSpot under your account name)',
};
