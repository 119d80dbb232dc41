/**
 * What Salesforce's authorization server sends back instead of a code (`error`, `error_description` on the
 * callback), turned into fixed text that tells the person what an admin must do. Nothing from the query string
 * is ever shown: it is attacker-controlled, and Salesforce's own wording does not say what to do anyway.
 *
 * Since September 2025 Salesforce refuses users who may not authorise an app that is not installed in their
 * org (`invalid_client` / "app must be installed into org", shown as OAUTH_APPROVAL_ERROR_GENERIC) unless they
 * hold "Approve Uninstalled Connected Apps" (help article 005132365).
 */

export type SalesforceRefusal = 'declined' | 'not_installed' | 'not_approved' | 'other';

export interface RefusalPage {
  kind: SalesforceRefusal;
  title: string;
  lines: string[];
}

const UNINSTALLED = /must be installed|uninstalled|OAUTH_APPROVAL_ERROR_GENERIC/i;
const NOT_APPROVED = /OAUTH_APP_ACCESS_DENIED|OAUTH_APP_BLOCKED|not (admin )?approved/i;

export function classifyRefusal(error: string, description: string | undefined): SalesforceRefusal {
  const text = `${error} ${description ?? ''}`;
  if (UNINSTALLED.test(text)) return 'not_installed';
  if (NOT_APPROVED.test(text)) return 'not_approved';
  if (error === 'access_denied') return 'declined';
  return 'other';
}

const TEXT: Record<SalesforceRefusal, Omit<RefusalPage, 'kind'>> = {
  declined: {
    title: 'Salesforce access was not granted',
    lines: ['The Salesforce user declined access, so nothing was connected.'],
  },
  not_installed: {
    title: 'Salesforce needs the app installed first',
    lines: [
      'Salesforce refused because the Report Connector app is not installed in this org, and your user may not ' +
        'authorise apps that are not installed.',
      'A Salesforce admin must either deploy the Report Connector External Client App in this org ' +
        '(manifests/salesforce, see its README), or give your user the "Approve Uninstalled Connected Apps" ' +
        'permission (or "Use Any API Client" where API Access Control is on), through a permission set.',
    ],
  },
  not_approved: {
    title: 'Your Salesforce user is not approved for this app',
    lines: [
      'Salesforce refused because the app only admits users an admin has approved.',
      "A Salesforce admin must add your profile or a permission set of yours to the app's policies " +
        '(External Client App Manager, or Connected Apps OAuth Usage > Manage App Policies).',
    ],
  },
  other: {
    title: 'Salesforce refused the authorisation',
    lines: [
      "Salesforce did not authorise the app. A Salesforce admin should check the app's OAuth policies and " +
        'that your user may use it.',
    ],
  },
};

export function refusalPage(error: string, description: string | undefined): RefusalPage {
  const kind = classifyRefusal(error, description);
  return { kind, ...TEXT[kind] };
}
