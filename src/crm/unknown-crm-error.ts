/** A string named a CRM the provider registry (src/providers.ts) does not hold: a flag, a stored kind, a route. */
export class UnknownCrmError extends Error {
  readonly code = 'UNKNOWN_CRM';
  constructor(
    readonly value: string,
    readonly known: readonly string[],
  ) {
    super(`no CRM ${JSON.stringify(value)}: expected ${known.join(' or ')}`);
    this.name = 'UnknownCrmError';
  }
}
