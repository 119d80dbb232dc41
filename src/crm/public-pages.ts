/**
 * The public pages a CRM marketplace listing links to (served by src/server/public-pages.ts): the setup guide
 * and the support page. Here so that the listing generators (connectors/) and the server name the same paths,
 * and so that a provider can hand the server its part of the guide as data (`ListingGuide`).
 */
export const PUBLIC_PAGE_PATHS = { setup: '/docs/setup', support: '/support' } as const;

/** The listing's support address: `support@` the APP_URL's host, on the listing and on the support page. */
export function supportEmailFor(appUrl: string): string {
  return `support@${new URL(appUrl).hostname}`;
}

/** A scope the install asks for, and what the app uses it for, in words for the admin who grants it. */
export interface ScopePurpose {
  scope: string;
  purpose: string;
}

/**
 * A CRM's part of the public setup guide, as plain text: the server escapes it and lays it out the same way
 * for every CRM (install, configure, use, uninstall), so the CRM's words live with its provider and the page
 * names no CRM of its own. Marketplace reviews ask for exactly these parts; a provider without a guide is left
 * out of the setup page, and the support page names its account with its label and account noun.
 */
export interface ListingGuide {
  /** What the person connects, after "your": "Acme account". */
  account: string;
  /** What the app does in this CRM, one paragraph. */
  summary: string;
  install: {
    /** Another way to start the install, after the install link's "or": "choose Install on the listing". */
    alternative: string;
    /** Steps between opening the install link and the access review (signing in, choosing the account). */
    signIn: readonly string[];
    /** The access review, introducing the scopes below: "Review the access the app asks for and accept". */
    consent: string;
    /** Every scope the install asks for, in the install's order. */
    scopes: readonly ScopePurpose[];
    /** Scopes asked for only at times; `when` follows "is asked for only": "if notes are turned on". */
    optionalScopes: readonly { scope: string; when: string }[];
    /** Steps after the consent: where the person lands, what happens next. */
    after: readonly string[];
  };
  /** Paragraphs: what has to be set up after the install, where and by whom. */
  configure: readonly string[];
  /** The ways of using the app, one list item each. */
  use: readonly string[];
  uninstall: {
    steps: readonly string[];
    /** What uninstalling ends and what the app leaves in the CRM, and how to delete that. */
    consequences: string;
  };
  /** How to name one's account in a support request, after "which": "Acme account (its id, shown ...)". */
  supportAccount: string;
}
