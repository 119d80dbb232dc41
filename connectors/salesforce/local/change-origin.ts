/**
 * A change event's `changeOrigin` as Salesforce writes it (ChangeEventHeader reference): for a change made
 * through an API, `com/salesforce/api/<api>/<version>`, followed by `;client=<id>` only when the call named a
 * client in its call options (`Sforce-Call-Options: client=<id>`); empty for a person's edit. The local org
 * takes it from each request, so a write without the header comes back without a client part.
 */

/** What `changeOrigin` says for an edit made by a person in the UI (the local org's own helpers model those). */
export const UI_ORIGIN = '';

/** The `changeOrigin` of a write through `api` at `version` (`v68.0` or `68.0`) by `client` (or none). */
export function apiChangeOrigin(api: 'rest' | 'bulkapi', version: string, client: string | null): string {
  const base = `com/salesforce/api/${api}/${version.replace(/^v/, '')}`;
  return client ? `${base};client=${client}` : base;
}

/**
 * The `client` of a `Sforce-Call-Options` header, or null. Options are separated by `,` or `;` (Salesforce's
 * REST and Bulk examples use both: `client=SampleCaseSensitiveToken/100, defaultNamespace=battle`).
 */
export function callOptionsClient(header: string | undefined): string | null {
  if (!header) return null;
  for (const part of header.split(/[,;]/)) {
    const [name, ...value] = part.split('=');
    if (name?.trim() === 'client' && value.length > 0) return value.join('=').trim() || null;
  }
  return null;
}
